#!/usr/bin/env bash
# Issue 31, call Z2 (branch issue31-entry, 657d050): the build, the GPU tests (the gradings apart),
# then reduce7's defaults at blocks 256/512/1024, the probe's layouts and the public kernels
# (the front). Each phase tarred as it ends.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/z2; mkdir -p $R
start=$SECONDS
pack() { tar -C $OUT -czf $OUT/z2_$1.tgz z2; }
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; nvcc --version | tail -1; echo "commit ${REDUCTION_COMMIT:-unknown}"; } > $R/gpu.txt
cat $R/gpu.txt
{ [[ -f build/release/CMakeCache.txt ]] || cmake --preset release; } > $R/build.log 2>&1
cmake --build build/release -j16 >> $R/build.log 2>&1 || { tail -30 $R/build.log; echo BUILD FAILED; pack build; exit 1; }
echo "build done at $((SECONDS-start)) s" | tee -a $R/times.txt
ctest --test-dir build/release -L gpu -E classroom_ --output-on-failure > $R/ctest_gpu.log 2>&1; echo "ctest gpu rc $?"
grep -E "tests passed|tests failed|\*\*\*|Failed|Total Test" $R/ctest_gpu.log | head -20
echo "gpu tests done at $((SECONDS-start)) s" | tee -a $R/times.txt
pack tests
STEPS="blocks probe public" scripts/issue31_gpu.sh $R/front
echo "front done at $((SECONDS-start)) s" | tee -a $R/times.txt
cat $R/front/summary.txt
pack front
echo "finishes not run (this call: front only)"
echo "all done at $((SECONDS-start)) s" | tee -a $R/times.txt
pack all
