#!/usr/bin/env bash
# Issue 31, call Z4 (branch issue31-entry, 657d050): every reduce7 figure the docs quote, again
# (scripts/reproduce_results.sh parts; sass and plot are made on the development machine).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/z4; mkdir -p $R
start=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; echo "commit ${REDUCTION_COMMIT:-unknown}"; } > $R/gpu.txt
cat $R/gpu.txt
{ [[ -f build/release/CMakeCache.txt ]] || cmake --preset release; } > $R/build.log 2>&1
cmake --build build/release -j16 >> $R/build.log 2>&1 || { tail -30 $R/build.log; echo BUILD FAILED; exit 1; }
echo "build done at $((SECONDS-start)) s" | tee -a $R/times.txt
for group in "${PARTS_A:-readme results targets rounding}" "${PARTS_B:-sweeps launches profiles large}"; do
  left=$((560 - (SECONDS-start)))
  timeout $left scripts/reproduce_results.sh $R/res $group >> $R/reproduce.log 2>&1; echo "reproduce [$group] rc $? at $((SECONDS-start)) s" | tee -a $R/times.txt
  tar -C $OUT -czf "$OUT/z4_${group%% *}.tgz" z4
done
tail -5 $R/reproduce.log
