#!/usr/bin/env bash
# Device call A (issue 32): build at this tree, the GPU tests (the gradings apart), the
# reduce4 grading, then a scratch copy with a trivial reduce8 built and run by reduce_all.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/r; mkdir -p $R
start=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; nvcc --version | tail -1; echo "commit ${REDUCTION_COMMIT:-unknown}"; } > $R/gpu.txt
cat $R/gpu.txt
cmake --preset release > $R/build.log 2>&1 && cmake --build build/release -j16 >> $R/build.log 2>&1 || { tail -30 $R/build.log; echo BUILD FAILED; exit 1; }
echo "build done at $((SECONDS-start)) s" | tee -a $R/times.txt
ctest --test-dir build/release -L gpu -E classroom_grading --output-on-failure > $R/ctest_gpu.log 2>&1; echo "ctest gpu rc $?"
grep -E "tests passed|tests failed|\*\*\*|Failed" $R/ctest_gpu.log | head -20
echo "gpu tests done at $((SECONDS-start)) s" | tee -a $R/times.txt
left=$((560 - (SECONDS-start) - 90))
timeout $left ctest --test-dir build/release -R classroom_grading_reduce4 --output-on-failure > $R/ctest_grading_reduce4.log 2>&1; echo "grading rc $?"
grep -E "tests passed|tests failed|Passed|Failed" $R/ctest_grading_reduce4.log | head -5
echo "grading done at $((SECONDS-start)) s" | tee -a $R/times.txt
S=/tmp/s8; rm -rf $S; mkdir -p $S
tar --exclude=./build --exclude=./devrun --exclude=./.git -cf - . | tar -xf - -C $S
( cd $S && patch -p1 < $OLDPWD/devrun/add_reduce8.patch > $R/scratch_patch.txt 2>&1 && \
  cmake --preset release > $R/scratch_build.log 2>&1 && timeout 120 cmake --build build/release -j16 --target reduce_all reduce8 >> $R/scratch_build.log 2>&1 ) || { tail -20 $R/scratch_build.log; echo SCRATCH BUILD FAILED; }
( cd $S && build/release/bin/reduce_all --list-stages && build/release/bin/reduce_all --n 2^24 && build/release/bin/reduce8 --n 2^24 ) > $R/scratch_reduce_all.txt 2>&1; echo "scratch rc $?"
cat $R/scratch_reduce_all.txt | head -40
echo "all done at $((SECONDS-start)) s" | tee -a $R/times.txt
