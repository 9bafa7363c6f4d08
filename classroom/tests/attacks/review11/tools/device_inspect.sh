#!/bin/bash
# device_inspect.sh: why the worker graded on the GPU machine did not get attack 20's hook: its compiler, libstdc++ and bindings.
R=$PWD
exec > >(tee $OUT/device_inspect.txt) 2>&1
which -a g++ c++ gcc; ls /opt/gcc/bin 2>/dev/null | head; /opt/gcc/bin/g++ --version 2>/dev/null | head -1; echo "CXX=$CXX CC=$CC CUDAHOSTCXX=$CUDAHOSTCXX"
ls -la /opt/gcc/lib64/libstdc++.so* 2>/dev/null; cat /etc/ld.so.conf.d/* 2>/dev/null
bash $R/classroom/tests/attacks/review11/tools/device_grade.sh $R/classroom/tests/attacks/review11/20-libstdcxx-initializer-calls-the-submissions-future-category.cu
W=$(find /tmp/r11/work-20-* -name grade_worker_reduce4 -type f | head -1); echo "worker: $W"
grep -E 'CMAKE_(CXX|CUDA)_COMPILER:|CMAKE_CUDA_HOST_COMPILER|CMAKE_CUDA_RUNTIME' $(dirname $W)/../CMakeCache.txt
readelf -d $W | grep -E 'NEEDED|RPATH|RUNPATH'; readelf -sW --dyn-syms $W | grep -E 'future_category'
ldd $W
LD_DEBUG=bindings $W 2>&1 | grep -E 'future_category|usage' | head -5
L=$(ldd $W | awk '/libstdc\+\+/{print $3}'); ls -la $(readlink -f $L); objdump -d --no-show-raw-insn $L | grep -c 'call.*<_ZSt15future_categoryv@plt>'
