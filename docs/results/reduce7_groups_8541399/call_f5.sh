#!/usr/bin/env bash
# Issue 31, call F5 (8541399, two GPUs): the multi-GPU tests (reduce_multi_gpu sums each shard
# with reduce7), as root and as an ordinary user: scripts/multi_gpu_tests.sh --label-only.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/r; mkdir -p $R
start=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; echo "commit ${REDUCTION_COMMIT:-unknown}"; } > $R/gpu.txt
cat $R/gpu.txt
[[ -d build/release ]] || cmake --preset release > $R/build.log 2>&1
cmake --build build/release -j32 --target reduce_multi_gpu multi_gpu_host_tests multi_gpu_gpu_tests >> $R/build.log 2>&1 || { tail -30 $R/build.log; echo BUILD FAILED; tar -C $OUT -czf $OUT/r.tgz r; exit 1; }
echo "build done at $((SECONDS-start)) s" | tee -a $R/times.txt
timeout $((580 - (SECONDS-start))) scripts/multi_gpu_tests.sh --user student --label-only $R/multi_gpu_tests.txt; echo "multi_gpu_tests rc $?"
grep -E "tests passed|Failed|\*\*\*|# " $R/multi_gpu_tests.txt | head -20
echo "all done at $((SECONDS-start)) s" | tee -a $R/times.txt
tar -C $OUT -czf $OUT/r.tgz r && rm -rf $R
