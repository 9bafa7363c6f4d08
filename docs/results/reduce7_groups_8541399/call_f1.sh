#!/usr/bin/env bash
# Issue 31, call F1: reduce7 with groups of 2^19 / BLOCK: the GPU tests and the SASS test, then
# reduce7's defaults and the probe's one-shot finishes in alternating rounds, both methods.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/r; mkdir -p $R
start=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; echo "commit ${REDUCTION_COMMIT:-unknown}"; } > $R/gpu.txt
cat $R/gpu.txt
[[ -d build/release ]] || cmake --preset release > $R/build.log 2>&1
cmake --build build/release -j16 >> $R/build.log 2>&1 || { tail -30 $R/build.log; echo BUILD FAILED; tar -C $OUT -czf $OUT/r.tgz r; exit 1; }
echo "build done at $((SECONDS-start)) s" | tee -a $R/times.txt
timeout 200 ctest --test-dir build/release -L gpu -E 'classroom_|multi_gpu_two|mpirun' --output-on-failure > $R/ctest_gpu.log 2>&1; echo "ctest gpu rc $?"
ctest --test-dir build/release -R 'loads_in_flight_sass' --output-on-failure > $R/ctest_sass.log 2>&1; echo "ctest sass rc $?"
grep -hE "tests passed|\(Failed\)|\*\*\*Failed" $R/ctest_gpu.log $R/ctest_sass.log | head -10
echo "ctest done at $((SECONDS-start)) s" | tee -a $R/times.txt
P=build/release/bin/grid_layout_probe
r7() { # CSV METHOD ARGS
  local csv=$1 m=$2; shift 2
  build/release/bin/reduce7 --no-baseline "$@" --timing $m --iters $([[ $m == flushed ]] && echo 60 || echo 10) --warmup 20 --csv > $R/tmp.csv 2>>$R/errors.txt || echo "reduce7 $* FAILED" >> $R/errors.txt
  if [[ ! -s $csv ]]; then head -1 $R/tmp.csv | sed 's/^/timing,/' > $csv; fi
  tail -n +2 $R/tmp.csv | sed "s/^/$m,/" >> $csv
}
for round in 1 2 3; do
  $P --type float --n 2^24 --n 2^26 --n 2^28 --n 2^30 --only one-shot-512x4+grouped > $R/probe_float_$round.csv 2>>$R/errors.txt || echo "probe float $round FAILED" >> $R/errors.txt
  $P --type int --n 2^26 --n 2^28 --n 2^30 --only one-shot-512x4+packed,one-shot-512x4+fenced > $R/probe_int_$round.csv 2>>$R/errors.txt || echo "probe int $round FAILED" >> $R/errors.txt
  for m in back-to-back flushed; do
    for k in 24 26 28 30; do r7 $R/reduce7_$round.csv $m --type float --n 2^$k; done
    r7 $R/reduce7_$round.csv $m --type float --n 2^26 --grid one-shot
    for k in 26 28 30; do r7 $R/reduce7_$round.csv $m --type int --n 2^$k; done
  done
  echo "round $round done at $((SECONDS-start)) s" | tee -a $R/times.txt
  (( SECONDS - start > 450 )) && break
done
grep -v "^$" $R/errors.txt 2>/dev/null | grep -v "^grid_layout_probe: " | head
tar -C $OUT -czf $OUT/r.tgz r && rm -rf $R
