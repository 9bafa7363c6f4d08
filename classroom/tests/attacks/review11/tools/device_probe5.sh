#!/bin/bash
# device_probe5.sh: attack 21 through the grader on the GPU machine; and what the sanitizer puts into its target's
# environment, with memcheck on a real out-of-bounds read with one entry renamed by a static initializer.
R=$PWD
exec > >(tee $OUT/device_probe5.txt) 2>&1
cd $R/classroom/tests/attacks/review11/tools || exit 1
nvcc -arch=sm_90 -O2 -DNO_HOOK -o /tmp/probe_nohook hook_probe.cu
echo "===== the target's environment, as the sanitizer makes it"
PROBE_ENV=1 compute-sanitizer --tool memcheck --target-processes all /tmp/probe_nohook oob 2>&1 | grep -E 'main: env (LD_|CUDA_INJ|NV_SAN|NV_COMPUTE)|SUMMARY'
M="compute-sanitizer --tool memcheck --error-exitcode 86 --target-processes all"
run() { echo "===== $*"; "$@" 2>&1 | grep -v '^=========     ' | grep -E 'probe:|SUMMARY|Invalid|rror' | tail -6; echo "exit status ${PIPESTATUS[0]}"; }
run $M /tmp/probe_nohook oob
i=0
for k in CUDA_INJECTION64_PATH LD_PRELOAD NV_SANITIZER_INJECTION_TRANSPORT_TYPE NV_SANITIZER_INJECTION_PORT_BASE; do
  i=$((i+1)); nvcc -arch=sm_90 -O2 -DNO_HOOK -DKNOB_RENAME="\"$k\"" -o /tmp/pr$i hook_probe.cu || continue
  run $M /tmp/pr$i oob
done
cd $R; bash classroom/tests/attacks/review11/tools/device_grade.sh classroom/tests/attacks/review11/21-init-array-entry-rewrites-the-racecheck-hazard-limit.cu
