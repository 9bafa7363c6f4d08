#!/usr/bin/env bash
# Issue 31, call Z3 (branch issue31-entry, 657d050): reduce7 beside CUB like for like (both CCCLs),
# torch and cupy, then reduce7's grading.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/z3; mkdir -p $R
start=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; echo "commit ${REDUCTION_COMMIT:-unknown}"; } > $R/gpu.txt
cat $R/gpu.txt
{ [[ -f build/release/CMakeCache.txt ]] || cmake --preset release; } > $R/build.log 2>&1
cmake --build build/release -j16 >> $R/build.log 2>&1 || { tail -30 $R/build.log; echo BUILD FAILED; exit 1; }
echo "build done at $((SECONDS-start)) s" | tee -a $R/times.txt
STEPS="${STEPS:-cub peers}" timeout 330 scripts/issue31_gpu.sh $R/cub
cat $R/cub/summary.txt
echo "steps done at $((SECONDS-start)) s" | tee -a $R/times.txt
tar -C $OUT -czf $OUT/z3_cub.tgz z3
left=$((585 - (SECONDS-start)))
if (( left > 300 )); then timeout $left ctest --test-dir build/release -R '^classroom_grading_reduce7$' --output-on-failure > $R/grading_reduce7.log 2>&1; echo "grading rc $?"; grep -E "Passed|Failed|tests passed" $R/grading_reduce7.log | head -3; else echo "grading NOT RUN (time)"; fi
echo "all done at $((SECONDS-start)) s" | tee -a $R/times.txt
tar -C $OUT -czf $OUT/z3_all.tgz z3
