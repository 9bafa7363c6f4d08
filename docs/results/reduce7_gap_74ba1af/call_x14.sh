#!/usr/bin/env bash
# Issue 31, experiment X14 (prepared at 8ede595; reduce7 as at 74ba1af): x13 found that groups of
# 512 closed part of the one-shot gap and that loads2 (a finishing thread's two partials loaded
# without a branch between them) closed the resident grid's at 2^26. Two candidate finishes:
#   committed
#   probe_finish (x12_v_probe_finish.patch): x12's reference
#   pred      (x14_v_pred.patch): the committed finish (level loop, out of line, groups of 1,024)
#             with a fixed count of predicated loads per thread (unrolled by 8) for the partials
#   straight  (x14_v_straight.patch): two straight levels, not out of line, groups of 1,024 with
#             the same predicated loads; one group (a resident grid) is the result
# Three alternating rounds with the probe, float 2^26 (resident), 2^28 and 2^30 (one-shot), both
# methods; ncu durations at 2^28; then every result checked over block sizes, types and grids
# (several groups at each block size: 2^24 + 3 on a one-shot grid).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/r; mkdir -p $R
start=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; echo "commit ${REDUCTION_COMMIT:-unknown}"; which nsys && nsys --version; } > $R/gpu.txt 2>&1
cat $R/gpu.txt
source scripts/lib/measure.sh
BUILDS="committed probe_finish pred straight"
declare -A BIN=([committed]=build/release/bin/reduce7)
( build_targets build/release grid_layout_probe reduce7 > $R/build.log 2>&1 || echo "BUILD committed FAILED" >> $R/errors.txt ) &
for b in probe_finish pred straight; do
  G=/tmp/$b; BIN[$b]=$G/build/release/bin/reduce7; mkdir -p $G && tar --exclude=./build --exclude=./devrun --exclude=./.cccl35 -cf - . 2>/dev/null | tar -C $G -xf -
  p=x14_v_$b; [[ $b == probe_finish ]] && p=x12_v_$b
  ( cd $G && patch -p1 < $OLDPWD/devrun/$p.patch > $R/patch_$b.log && build_targets build/release reduce7 > $R/build_$b.log 2>&1 || echo "BUILD $b FAILED" >> $R/errors.txt ) &
done
wait
echo "build done at $((SECONDS-start)) s" | tee -a $R/times.txt
[[ -s $R/errors.txt ]] && { cat $R/errors.txt; tail -20 $R/build*.log; tar -C $OUT -czf $OUT/r.tgz r; exit 1; }
P=build/release/bin/grid_layout_probe
r7() { # LABEL CSV METHOD ARGS (LABEL: a build, or BUILD+os for its --grid one-shot row)
  local label=$1 csv=$2 m=$3; shift 3
  ${BIN[${label%+os}]} --no-baseline "$@" --timing $m --iters $([[ $m == flushed ]] && echo 60 || echo 10) --warmup 20 --csv > $R/tmp.csv 2>>$R/errors.txt || echo "reduce7 $label $* FAILED" >> $R/errors.txt
  if [[ ! -s $csv ]]; then head -1 $R/tmp.csv | sed 's/^/build,timing,/' > $csv; fi
  tail -n +2 $R/tmp.csv | sed "s/^/$label,$m,/" >> $csv
}
for round in 1 2 3; do
  (( SECONDS - start > 330 )) && break
  $P --type float --n 2^26 --n 2^28 --n 2^30 --only one-shot-512x4+grouped > $R/probe_float_$round.csv 2>>$R/errors.txt || echo "probe $round FAILED" >> $R/errors.txt
  for m in back-to-back flushed; do
    for b in $BUILDS; do
      r7 $b $R/reduce7_$round.csv $m --type float --n 2^26
      r7 $b $R/reduce7_$round.csv $m --type float --n 2^28
      r7 $b $R/reduce7_$round.csv $m --type float --n 2^30
    done
  done
  echo "round $round done at $((SECONDS-start)) s" | tee -a $R/times.txt
done
M=gpu__time_duration.sum
ncu --clock-control none --cache-control none --csv --metrics $M -k "regex:strided_tiles" --launch-skip 120 --launch-count 40 $P --type float --n 2^28 --only one-shot-512x4+grouped --runs 1 --warmup 0 --batches 2 > $R/ncu_probe_28.csv 2>&1
for b in $BUILDS; do
  ncu --clock-control none --cache-control none --csv --metrics $M -k "regex:shuffle_vector" --launch-skip 30 --launch-count 40 ${BIN[$b]} --no-baseline --type float --n 2^28 --timing back-to-back --iters 2 --warmup 2 > $R/ncu_${b}_28.csv 2>&1
done
python3 scripts/ncu_pairs.py --durations $R | tee $R/durations.csv
echo "ncu done at $((SECONDS-start)) s" | tee -a $R/times.txt
for b in pred straight; do
  for t in float double; do
    for blk in 32 64 128 256 512 1024; do
      for args in "--n 1000003" "--n 16777219 --grid one-shot" "--n 67108869 --grid one-shot --data uniform" "--n 4099 --finish two-pass"; do
        ${BIN[$b]} --no-baseline --type $t --block $blk $args --iters 3 --warmup 1 --csv >> $R/check_$b.csv 2>>$R/check_errors.txt || echo "CHECK $b $t $blk $args FAILED rc=$?" >> $R/check_errors.txt
      done
    done
  done
done
echo "checks done at $((SECONDS-start)) s: $(grep -c FAILED $R/check_errors.txt 2>/dev/null) failed, $(grep -c ',true,' $R/check_*.csv | paste -sd' ') rows verified" | tee -a $R/times.txt
python3 scripts/rounds.py $R > $R/rounds.txt 2>&1; cat $R/rounds.txt
grep -v "^$" $R/errors.txt 2>/dev/null | grep -v "^grid_layout_probe: " | head
tar -C $OUT -czf $OUT/r.tgz r && rm -rf $R
