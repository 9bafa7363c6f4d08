#!/usr/bin/env bash
# Issue 31, call F2 (the machine of F1, its build kept): the front: reduce7's defaults at three
# block sizes, the probe and the public kernels (scripts/issue31_gpu.sh's blocks, probe, public).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/r; mkdir -p $R
start=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; echo "commit ${REDUCTION_COMMIT:-unknown}"; } > $R/gpu.txt
cat $R/gpu.txt
cmake --build build/release -j16 > $R/build.log 2>&1 || { tail -30 $R/build.log; echo BUILD FAILED; tar -C $OUT -czf $OUT/r.tgz r; exit 1; }
for t in int float; do scripts/sass.sh reduce7 "shuffle_vector_single_pass<512u, 4, $t>" > $R/sass_reduce7_512_$t.txt 2>&1; done
STEPS="${STEPS:-blocks probe public}" timeout $((590 - (SECONDS-start))) scripts/issue31_gpu.sh $R/front
cat $R/front/summary.txt
echo "all done at $((SECONDS-start)) s" | tee -a $R/times.txt
tar -C $OUT -czf $OUT/r.tgz r && rm -rf $R
