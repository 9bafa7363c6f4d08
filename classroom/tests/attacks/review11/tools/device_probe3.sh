#!/bin/bash
# device_probe3.sh: the hook through the judge's own chain (compute-sanitizer ... judge --exec-as nobody PROGRAM), on the GPU machine.
R=$PWD; cd classroom/tests/attacks/review11/tools || exit 1
exec > >(tee $OUT/device_probe3.txt) 2>&1
cmake -S $R/classroom/judge -B /tmp/j -G Ninja > /tmp/j.log 2>&1 && cmake --build /tmp/j -j 16 >> /tmp/j.log 2>&1 || { tail /tmp/j.log; exit 1; }
J=/tmp/j/judge
nvcc -arch=sm_90 -O2 -o /tmp/probe hook_probe.cu && nvcc -arch=sm_90 -O2 -DNO_HOOK -o /tmp/probe_nohook hook_probe.cu &&
nvcc -arch=sm_90 -O2 -I$R/classroom/grading -DWITH_EXEC_FILTER -o /tmp/probe_filter hook_probe.cu || exit 1
chmod 755 /tmp/probe*
run() { echo "===== $*"; PROBE_ENV=1 "$@" 2>&1 | grep -v '^=========     ' | grep -v 'main: env NV_[A-Z]*_\(VERSION\|PACKAGE\)\|NV_LIB\|NV_CUDA\|NV_CUDNN\|NV_NVML\|NV_NVTX' | tail -12; echo "exit status ${PIPESTATUS[0]}"; }
S="compute-sanitizer --tool racecheck --error-exitcode 86 --racecheck-report analysis"
run $S --target-processes all /tmp/probe race
run $S --target-processes all $J --exec-as nobody /tmp/probe_nohook race
run $S --target-processes all $J --exec-as nobody /tmp/probe race
run $S --target-processes all $J --exec-as nobody /tmp/probe_filter race
run $S --target-processes all /tmp/probe_filter race
run env -i HOME=/tmp LC_ALL=C PATH=$PATH $S --target-processes all $J --exec-as nobody /tmp/probe race
