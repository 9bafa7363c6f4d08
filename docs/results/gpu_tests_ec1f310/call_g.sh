#!/usr/bin/env bash
# Device calls G (issue 32): the classroom gradings one after another, as many as fit in
# the call (each about 250 s), after a build where the machine has none.
#   bash devrun/call_g.sh TEST...     e.g. classroom_grading_reduce1 classroom_grading_reduce2
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/r; mkdir -p $R
start=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; echo "commit ${REDUCTION_COMMIT:-unknown}"; } > $R/gpu.txt
cat $R/gpu.txt
if [[ ! -x build/release/bin/classroom_grading ]]; then
  cmake --preset release > $R/build.log 2>&1 && cmake --build build/release -j16 >> $R/build.log 2>&1 || { tail -30 $R/build.log; echo BUILD FAILED; exit 1; }
else
  cmake --build build/release -j16 > $R/build.log 2>&1 || { tail -30 $R/build.log; echo BUILD FAILED; exit 1; }
fi
echo "build done at $((SECONDS-start)) s"
for t in "$@"; do
  left=$((585 - (SECONDS-start)))
  if (( left < 270 )); then echo "NOT RUN (time): $t"; continue; fi
  timeout $left ctest --test-dir build/release -R "^$t\$" --output-on-failure > $R/$t.log 2>&1; echo "$t rc $? at $((SECONDS-start)) s"
  grep -E "Test *#|tests passed|tests failed" $R/$t.log | head -3
done
