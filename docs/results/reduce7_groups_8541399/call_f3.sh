#!/usr/bin/env bash
# Issue 31, call F3: every reduce7 figure the docs quote, at 8541399 (scripts/reproduce_results.sh parts).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/r; mkdir -p $R
start=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; echo "commit ${REDUCTION_COMMIT:-unknown}"; } > $R/gpu.txt
cat $R/gpu.txt
[[ -x build/release/bin/reduce_all ]] || cmake --preset release > $R/build.log 2>&1
cmake --build build/release -j16 >> $R/build.log 2>&1 || { tail -30 $R/build.log; echo BUILD FAILED; exit 1; }
echo "build done at $((SECONDS-start)) s" | tee -a $R/times.txt
timeout $((580 - (SECONDS-start))) scripts/reproduce_results.sh $R/res ${PARTS:-readme results targets rounding sweeps sass launches profiles large plot} > $R/reproduce.log 2>&1; echo "reproduce rc $?"
tail -5 $R/reproduce.log
echo "all done at $((SECONDS-start)) s" | tee -a $R/times.txt
tar -C $OUT -czf $OUT/r.tgz r && rm -rf $R
