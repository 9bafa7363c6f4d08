#!/usr/bin/env bash
# Issue 31, experiment X7 (reduce7 as at 74ba1af): is the float gap to the probe's +grouped the
# instructions a one-shot block executes outside its loads? Four builds:
#   committed
#   skip              (x7_v_skip.patch): `if (i < vectors)` before the last-tile code, so a block
#                     whose tiles were all whole jumps over its 16 predicated loads (~47 instructions)
#   skip_count        (x7_v_skip_count.patch): skip + x5's count_inline (level 0 counted in the kernel)
#   skip_count_moved  (x7_v_skip_count_moved.patch): skip_count + the head and tail adds after the tiles
# The probe; three alternating rounds, both methods; int packed at 2^28 for committed and skip;
# then Nsight Compute's instructions per warp of each build's last-block at 2^26 one-shot.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/r; mkdir -p $R
start=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; echo "commit ${REDUCTION_COMMIT:-unknown}"; ncu --version | tail -1; } > $R/gpu.txt
cat $R/gpu.txt
source scripts/lib/measure.sh
BUILDS="committed skip skip_count skip_count_moved"
declare -A BIN=([committed]=build/release/bin/reduce7)
( build_targets build/release grid_layout_probe reduce7 > $R/build.log 2>&1 || echo "BUILD committed FAILED" >> $R/errors.txt ) &
for b in skip skip_count skip_count_moved; do
  G=/tmp/$b; BIN[$b]=$G/build/release/bin/reduce7; mkdir -p $G && tar --exclude=./build --exclude=./devrun --exclude=./.cccl35 -cf - . | tar -C $G -xf -
  ( cd $G && patch -p1 < $OLDPWD/devrun/x7_v_$b.patch > $R/patch_$b.log && build_targets build/release reduce7 > $R/build_$b.log 2>&1 || echo "BUILD $b FAILED" >> $R/errors.txt ) &
done
wait
echo "build done at $((SECONDS-start)) s" | tee -a $R/times.txt
[[ -s $R/errors.txt ]] && { cat $R/errors.txt; tail -20 $R/build*.log; tar -C $OUT -czf $OUT/r.tgz r; exit 1; }
P=build/release/bin/grid_layout_probe
r7() { # LABEL CSV METHOD ARGS
  local label=$1 csv=$2 m=$3; shift 3
  ${BIN[$label]} --no-baseline "$@" --timing $m --iters $([[ $m == flushed ]] && echo 60 || echo 10) --warmup 20 --csv > $R/tmp.csv 2>>$R/errors.txt || echo "reduce7 $label $* FAILED" >> $R/errors.txt
  if [[ ! -s $csv ]]; then head -1 $R/tmp.csv | sed 's/^/build,timing,/' > $csv; fi
  tail -n +2 $R/tmp.csv | sed "s/^/$label,$m,/" >> $csv
}
for round in 1 2 3; do
  $P --type float --n 2^26 --n 2^28 --n 2^30 --only one-shot-512x4+grouped > $R/probe_float_$round.csv 2>>$R/errors.txt || echo "probe $round FAILED" >> $R/errors.txt
  $P --type int --n 2^28 --only one-shot-512x4+packed > $R/probe_int_$round.csv 2>>$R/errors.txt || echo "probe int $round FAILED" >> $R/errors.txt
  for m in back-to-back flushed; do
    for b in $BUILDS; do
      for k in 26 28 30; do r7 $b $R/reduce7_$round.csv $m --type float --n 2^$k; done
      r7 $b $R/reduce7_$round.csv $m --type float --n 2^26 --grid one-shot
    done
    for b in committed skip; do r7 $b $R/reduce7_$round.csv $m --type int --n 2^28; done
  done
  echo "round $round done at $((SECONDS-start)) s" | tee -a $R/times.txt
  (( SECONDS - start > 420 )) && break
done
M=gpu__time_duration.sum,smsp__inst_executed.sum,sm__ctas_launched.sum,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed
for b in $BUILDS; do
  (( SECONDS - start > 540 )) && break
  ncu --clock-control none --csv --log-file $R/ncu_${b}_26.csv --metrics $M -k "regex:^shuffle_vector_single_pass" --launch-skip 2 --launch-count 3 ${BIN[$b]} --no-baseline --type float --n 2^26 --grid one-shot --iters 3 --warmup 2 > $R/ncu_$b.log 2>&1 || echo "ncu $b FAILED" >> $R/errors.txt
done
echo "ncu done at $((SECONDS-start)) s" | tee -a $R/times.txt
python3 scripts/rounds.py $R > $R/rounds.txt 2>&1; cat $R/rounds.txt
python3 scripts/ncu_pairs.py $R | grep -E "^==|per warp|gpu__time"
grep -v "^$" $R/errors.txt 2>/dev/null | grep -v "^grid_layout_probe: " | head
tar -C $OUT -czf $OUT/r.tgz r && rm -rf $R
