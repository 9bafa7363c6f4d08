#!/bin/bash
# device_probe6.sh: when racecheck reads NV_COMPUTE_SANITIZER_MAX_RACECHECK_HAZARDS: set once the context exists, or after a first launch.
cd classroom/tests/attacks/review11/tools || exit 1
exec > >(tee $OUT/device_probe6.txt) 2>&1
nvcc -arch=sm_90 -O2 -DNO_HOOK -o /tmp/pn hook_probe.cu || exit 1
for m in race late-ctx late-launch; do
  echo "===== racecheck, $m"
  timeout 60 compute-sanitizer --tool racecheck --error-exitcode 86 --racecheck-report analysis --target-processes all /tmp/pn $m 2>&1 | grep -E 'main:|SUMMARY' | grep -v 'main: env'
  echo "exit status ${PIPESTATUS[0]}"
done
