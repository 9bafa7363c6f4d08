#!/bin/bash
# device_probe.sh: run on the GPU machine (the `run` tool), from the repository root. Writes to $OUT.
cd classroom/tests/attacks/review11/tools || exit 1
exec > >(tee $OUT/device_probe.txt) 2>&1
set -x
cat /etc/os-release | head -2; nvidia-smi -L; nvcc --version | tail -2; compute-sanitizer --version | tail -1; g++ --version | head -1
L=$(readlink -f $(g++ -print-file-name=libstdc++.so.6)); ls -la $L
nm -D $L | grep future_category
objdump -d --no-show-raw-insn $L | grep -B3 -A3 'call.*<_ZSt15future_categoryv@plt>' | head -20
nvcc -arch=sm_90 -O2 -o /tmp/probe hook_probe.cu && nvcc -arch=sm_90 -O2 -DNO_HOOK -o /tmp/probe_nohook hook_probe.cu
readelf -sW --dyn-syms /tmp/probe | grep future_category
LD_DEBUG=bindings /tmp/probe race 2>&1 | grep -E 'future_category|probe:|main:' | head
for p in probe_nohook probe; do
  for t in racecheck memcheck; do
    m=race; [ $t = memcheck ] && m=oob
    echo "===== $p, $t ($m)"
    compute-sanitizer --tool $t --error-exitcode 86 --target-processes all /tmp/$p $m 2>&1 | tail -12
    echo "exit status ${PIPESTATUS[0]}"
  done
done
