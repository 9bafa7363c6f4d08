#!/usr/bin/env bash
# Issue 31, call A: a fresh build at this tree, the GPU tests (the gradings apart), then
# reduce7's defaults at blocks 256/512/1024, the probe's layouts and the public kernels.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/r; mkdir -p $R
start=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; nvcc --version | tail -1; echo "commit ${REDUCTION_COMMIT:-unknown}"; } > $R/gpu.txt
cat $R/gpu.txt
cmake --preset release > $R/build.log 2>&1 && cmake --build build/release -j16 >> $R/build.log 2>&1 || { tail -30 $R/build.log; echo BUILD FAILED; tar -C $OUT -czf $OUT/r.tgz r; exit 1; }
echo "build done at $((SECONDS-start)) s" | tee -a $R/times.txt
if [[ -z ${SKIP_TESTS:-} ]]; then ctest --test-dir build/release -L gpu -E classroom_ --output-on-failure > $R/ctest_gpu.log 2>&1; echo "ctest gpu rc $?"; fi
grep -E "tests passed|tests failed|\*\*\*|Failed" $R/ctest_gpu.log | head -20
echo "gpu tests done at $((SECONDS-start)) s" | tee -a $R/times.txt
STEPS="${STEPS:-blocks probe public}" scripts/issue31_gpu.sh $R/front
echo "all done at $((SECONDS-start)) s" | tee -a $R/times.txt
tar -C $OUT -czf $OUT/r.tgz r && rm -rf $R
