#!/bin/bash
# device_probe2.sh: the hook through an exec chain like the judge's (the sanitizer's target execs the program), on the GPU machine.
cd classroom/tests/attacks/review11/tools || exit 1
exec > >(tee $OUT/device_probe2.txt) 2>&1
nvcc -arch=sm_90 -O2 -o /tmp/probe hook_probe.cu && nvcc -arch=sm_90 -O2 -DNO_HOOK -o /tmp/probe_nohook hook_probe.cu
for p in probe_nohook probe; do
  for chain in "" "/usr/bin/env PROBE_ENV=1"; do
    for t in racecheck memcheck; do
      m=race; extra="--racecheck-report analysis"; [ $t = memcheck ] && { m=oob; extra=""; }
      echo "===== $p, $t ($m), exec chain: '${chain:-none}'"
      PROBE_ENV=1 compute-sanitizer --tool $t --error-exitcode 86 --target-processes all $extra $chain /tmp/$p $m 2>&1 | grep -v '^=========     ' | tail -14
      echo "exit status ${PIPESTATUS[0]}"
    done
  done
done
