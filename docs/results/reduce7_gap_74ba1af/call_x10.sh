#!/usr/bin/env bash
# Issue 31, experiment X10 (reduce7 as at 74ba1af): x9's Nsight Compute durations put the float
# gap at 2^28 inside the kernel (probe 338.7 us, reduce7 339.6 us, one launch at a time). Is it
# the kernel's entry? Three builds on top of x9's skip_count_g18:
#   skip_count_g18  (x9_v_skip_count_g18.patch)
#   nopdl           (x10_v_nopdl.patch): without the --finish pdl check at entry (no ACQBULK/PREEXIT in the SASS)
#   nopdl_nohead    (x10_v_nopdl_nohead.patch): also without the head and tail arithmetic (an aligned input
#                   assumed: only block 0 adds the elements after the last whole vector)
# Three alternating rounds with the probe; then each kernel's duration, one launch at a time (ncu).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/r; mkdir -p $R
start=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; echo "commit ${REDUCTION_COMMIT:-unknown}"; which nsys && nsys --version; } > $R/gpu.txt 2>&1
cat $R/gpu.txt
source scripts/lib/measure.sh
BUILDS="skip_count_g18 nopdl nopdl_nohead"
declare -A BIN=()
( build_targets build/release grid_layout_probe > $R/build.log 2>&1 || echo "BUILD probe FAILED" >> $R/errors.txt ) &
for b in $BUILDS; do
  G=/tmp/$b; BIN[$b]=$G/build/release/bin/reduce7; mkdir -p $G && tar --exclude=./build --exclude=./devrun --exclude=./.cccl35 -cf - . 2>/dev/null | tar -C $G -xf -
  p=x10_v_$b; [[ $b == skip_count_g18 ]] && p=x9_v_$b
  ( cd $G && patch -p1 < $OLDPWD/devrun/$p.patch > $R/patch_$b.log && build_targets build/release reduce7 > $R/build_$b.log 2>&1 || echo "BUILD $b FAILED" >> $R/errors.txt ) &
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
  (( SECONDS - start > 330 )) && break
  $P --type float --n 2^28 --n 2^30 --only one-shot-512x4+grouped > $R/probe_float_$round.csv 2>>$R/errors.txt || echo "probe $round FAILED" >> $R/errors.txt
  for m in back-to-back flushed; do
    for b in $BUILDS; do
      r7 $b $R/reduce7_$round.csv $m --type float --n 2^28
      [[ $m == back-to-back ]] && r7 $b $R/reduce7_$round.csv $m --type float --n 2^30
    done
  done
  echo "round $round done at $((SECONDS-start)) s" | tee -a $R/times.txt
done
M=gpu__time_duration.sum
ncu --clock-control none --cache-control none --csv --metrics $M -k "regex:strided_tiles" --launch-skip 120 --launch-count 40 $P --type float --n 2^28 --only one-shot-512x4+grouped --runs 1 --warmup 0 --batches 2 > $R/ncu_probe_28.csv 2>&1
for b in $BUILDS; do
  ncu --clock-control none --cache-control none --csv --metrics $M -k "regex:shuffle_vector" --launch-skip 30 --launch-count 40 ${BIN[$b]} --no-baseline --type float --n 2^28 --timing back-to-back --iters 2 --warmup 2 > $R/ncu_${b}_28.csv 2>&1
done
for f in $R/ncu_*_28.csv; do python3 -c "
import csv, statistics, sys
v = [float(r[-1].replace(',', '')) for r in csv.reader(open(sys.argv[1])) if len(r) > 14 and r[12] == 'gpu__time_duration.sum']
print(sys.argv[1].split('/')[-1], len(v), 'launches, median', statistics.median(v), 'ns, min', min(v), 'max', max(v))
" $f | tee -a $R/durations.txt; done
echo "ncu done at $((SECONDS-start)) s" | tee -a $R/times.txt
python3 scripts/rounds.py $R > $R/rounds.txt 2>&1; cat $R/rounds.txt
grep -v "^$" $R/errors.txt 2>/dev/null | grep -v "^grid_layout_probe: " | head
tar -C $OUT -czf $OUT/r.tgz r && rm -rf $R
