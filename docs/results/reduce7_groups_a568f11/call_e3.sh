#!/usr/bin/env bash
# Issue 31, call E3: reduce7 with last-block by groups out of line (4 loads in flight again),
# packed fenced on long inputs: GPU tests (and the SASS test), then blocks, probe and public.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/r; mkdir -p $R
start=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; echo "commit ${REDUCTION_COMMIT:-unknown}"; } > $R/gpu.txt
cat $R/gpu.txt
[[ -d build/release ]] || cmake --preset release > $R/build.log 2>&1
cmake --build build/release -j16 >> $R/build.log 2>&1 || { tail -30 $R/build.log; echo BUILD FAILED; tar -C $OUT -czf $OUT/r.tgz r; exit 1; }
echo "build done at $((SECONDS-start)) s" | tee -a $R/times.txt
timeout 150 ctest --test-dir build/release -L gpu -E 'classroom_|multi_gpu_two|mpirun' --output-on-failure > $R/ctest_gpu.log 2>&1; echo "ctest gpu rc $?"
ctest --test-dir build/release -R 'loads_in_flight_sass' --output-on-failure > $R/ctest_sass.log 2>&1; echo "ctest sass rc $?"
grep -E "tests passed|Failed|\*\*\*" $R/ctest_gpu.log $R/ctest_sass.log | head -10
echo "ctest done at $((SECONDS-start)) s" | tee -a $R/times.txt
for t in int float; do scripts/sass.sh reduce7 "shuffle_vector_single_pass<512u, 4, $t>" > $R/sass_reduce7_512_$t.txt 2>&1; done
STEPS="${STEPS:-blocks probe public}" timeout $((595 - (SECONDS-start))) scripts/issue31_gpu.sh $R/front
echo "all done at $((SECONDS-start)) s" | tee -a $R/times.txt
tar -C $OUT -czf $OUT/r.tgz r && rm -rf $R
