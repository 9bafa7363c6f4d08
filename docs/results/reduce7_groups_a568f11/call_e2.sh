#!/usr/bin/env bash
# Issue 31, call E2: reduce7 with last-block by groups (one block per tile on long inputs) and
# packed fenced on long inputs: GPU tests, SASS, then finishes, blocks and the probe.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/r; mkdir -p $R
start=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; echo "commit ${REDUCTION_COMMIT:-unknown}"; } > $R/gpu.txt
cat $R/gpu.txt
[[ -d build/release ]] || cmake --preset release > $R/build.log 2>&1
cmake --build build/release -j16 >> $R/build.log 2>&1 || { tail -30 $R/build.log; echo BUILD FAILED; tar -C $OUT -czf $OUT/r.tgz r; exit 1; }
echo "build done at $((SECONDS-start)) s" | tee -a $R/times.txt
timeout 200 ctest --test-dir build/release -L gpu -E 'classroom_|multi_gpu_two|mpirun' --output-on-failure > $R/ctest_gpu.log 2>&1; echo "ctest rc $?"
grep -E "tests passed|Failed|Not Run|\*\*\*" $R/ctest_gpu.log | head -20
echo "ctest done at $((SECONDS-start)) s" | tee -a $R/times.txt
for t in int float; do scripts/sass.sh reduce7 "shuffle_vector_single_pass<512u, 4, $t>" > $R/sass_reduce7_512_$t.txt 2>&1; done
grep -c MEMBAR $R/sass_reduce7_512_*.txt
STEPS="${STEPS:-finishes blocks probe}" timeout $((590 - (SECONDS-start))) scripts/issue31_gpu.sh $R/front
cat $R/front/summary.txt
echo "all done at $((SECONDS-start)) s" | tee -a $R/times.txt
tar -C $OUT -czf $OUT/r.tgz r && rm -rf $R
