#!/usr/bin/env bash
# Issue 31, experiment X3 (at 40f34ed = reduce7 of 8541399): is the float gap to the probe's
# +grouped the type's? The same finish for int: reduce7 --finish last-block --grid one-shot
# beside the probe's one-shot-512x4+grouped, int and float, and float with --data uniform
# (random mantissas) beside --data integers; three alternating rounds, both methods.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/r; mkdir -p $R
start=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; echo "commit ${REDUCTION_COMMIT:-unknown}"; } > $R/gpu.txt
cat $R/gpu.txt
source scripts/lib/measure.sh
build_targets build/release grid_layout_probe reduce7 > $R/build.log 2>&1 || { tail -20 $R/build.log; echo BUILD FAILED; tar -C $OUT -czf $OUT/r.tgz r; exit 1; }
echo "build done at $((SECONDS-start)) s" | tee -a $R/times.txt
P=build/release/bin/grid_layout_probe
r7() { # CSV METHOD ARGS
  local csv=$1 m=$2; shift 2
  build/release/bin/reduce7 --no-baseline "$@" --timing $m --iters $([[ $m == flushed ]] && echo 60 || echo 10) --warmup 20 --csv > $R/tmp.csv 2>>$R/errors.txt || echo "reduce7 $* FAILED" >> $R/errors.txt
  if [[ ! -s $csv ]]; then head -1 $R/tmp.csv | sed 's/^/timing,/' > $csv; fi
  tail -n +2 $R/tmp.csv | sed "s/^/$m,/" >> $csv
}
for round in 1 2 3; do
  $P --type int --type float --n 2^26 --n 2^28 --n 2^30 --only one-shot-512x4+grouped > $R/probe_both_$round.csv 2>>$R/errors.txt || echo "probe $round FAILED" >> $R/errors.txt
  for m in back-to-back flushed; do
    for k in 26 28 30; do
      r7 $R/reduce7_$round.csv $m --type int --n 2^$k --finish last-block --grid one-shot
      r7 $R/reduce7_$round.csv $m --type float --n 2^$k --finish last-block --grid one-shot
    done
    for k in 28 30; do r7 $R/reduce7_$round.csv $m --type float --n 2^$k --finish last-block --grid one-shot --data uniform; done
  done
  echo "round $round done at $((SECONDS-start)) s" | tee -a $R/times.txt
  (( SECONDS - start > 450 )) && break
done
python3 scripts/rounds.py $R > $R/rounds.txt 2>&1; cat $R/rounds.txt
grep -v "^$" $R/errors.txt 2>/dev/null | grep -v "^grid_layout_probe: " | head
tar -C $OUT -czf $OUT/r.tgz r && rm -rf $R
