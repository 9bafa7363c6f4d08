#!/bin/bash
# device_probe4.sh: (a) attack 20's hook in a program linked like the lent image's workers (/opt/gcc/bin/g++: libstdc++ linked
# statically); (b) the sanitizer's settings written by a static initializer instead (after the collection's constructor).
cd classroom/tests/attacks/review11/tools || exit 1
exec > >(tee $OUT/device_probe4.txt) 2>&1
S="compute-sanitizer --tool racecheck --error-exitcode 86 --racecheck-report analysis --target-processes all"
run() { echo "===== $*"; "$@" 2>&1 | grep -v '^=========     ' | grep -E 'probe:|main: NV|SUMMARY|rror' | tail -8; echo "exit status ${PIPESTATUS[0]}"; }
nvcc -arch=sm_90 -O2 -ccbin /opt/gcc/bin/g++ -o /tmp/probe_static hook_probe.cu && readelf -d /tmp/probe_static | grep NEEDED
readelf -sW --dyn-syms /tmp/probe_static | grep future_category
run $S /tmp/probe_static race
i=0
for k in BINARY_PATCHING:0 MAX_RACECHECK_HAZARDS:0 MAX_RACECHECK_HAZARDS:1 MAX_RACECHECK_CLUSTER_RECORDS:0 SHARED_ADDRESSING_SUPPORT:0 SHARED_ADDRESSING_SUPPORT:1; do
  i=$((i+1)); n=NV_COMPUTE_SANITIZER_${k%%:*}; v=${k##*:}
  nvcc -arch=sm_90 -O2 -DNO_HOOK -DKNOB="\"$n\"" -DKNOB_VALUE="\"$v\"" -o /tmp/pk$i hook_probe.cu || continue
  run $S /tmp/pk$i race
done
