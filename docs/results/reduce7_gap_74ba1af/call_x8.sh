#!/usr/bin/env bash
# Issue 31, experiment X8 (reduce7 as at 74ba1af): does the size of the last-block's groups set
# the float gap to the probe's +grouped (groups of BLOCK) on a one-shot grid? Four builds, each
# with x7's skip (x7_v_skip.patch):
#   skip       groups of 2^19 / BLOCK (1,024 at block 512), as committed
#   skip_g18   (x8_v_skip_g18.patch) 2^18 / BLOCK: 512
#   skip_g17   (x8_v_skip_g17.patch) 2^17 / BLOCK: 256
#   skip_g16   (x8_v_skip_g16.patch) 2^16 / BLOCK: 128
# The probe at the start and (renamed ...@end) the end of each round, to see any drift within
# a round; three alternating rounds, both methods.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/r; mkdir -p $R
start=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; echo "commit ${REDUCTION_COMMIT:-unknown}"; ncu --version | tail -1; } > $R/gpu.txt
cat $R/gpu.txt
source scripts/lib/measure.sh
BUILDS="skip skip_g18 skip_g17 skip_g16"
declare -A BIN=()
( build_targets build/release grid_layout_probe > $R/build.log 2>&1 || echo "BUILD probe FAILED" >> $R/errors.txt ) &
for b in $BUILDS; do
  G=/tmp/$b; BIN[$b]=$G/build/release/bin/reduce7; mkdir -p $G && tar --exclude=./build --exclude=./devrun --exclude=./.cccl35 -cf - . | tar -C $G -xf -
  ( cd $G && p=x8_v_$b; [[ $b == skip ]] && p=x7_v_skip; patch -p1 < $OLDPWD/devrun/$p.patch > $R/patch_$b.log && build_targets build/release reduce7 > $R/build_$b.log 2>&1 || echo "BUILD $b FAILED" >> $R/errors.txt ) &
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
  for m in back-to-back flushed; do
    for b in $BUILDS; do
      for k in 26 28 30; do r7 $b $R/reduce7_$round.csv $m --type float --n 2^$k; done
      r7 $b $R/reduce7_$round.csv $m --type float --n 2^26 --grid one-shot
    done
  done
  $P --type float --n 2^26 --n 2^28 --n 2^30 --only one-shot-512x4+grouped 2>>$R/errors.txt | sed 's/one-shot-512x4+grouped/one-shot-512x4+grouped@end/' > $R/probe_floatend_$round.csv || echo "probe end $round FAILED" >> $R/errors.txt
  echo "round $round done at $((SECONDS-start)) s" | tee -a $R/times.txt
  (( SECONDS - start > 420 )) && break
done
python3 scripts/rounds.py $R > $R/rounds.txt 2>&1; cat $R/rounds.txt
grep -v "^$" $R/errors.txt 2>/dev/null | grep -v "^grid_layout_probe: " | head
tar -C $OUT -czf $OUT/r.tgz r && rm -rf $R
