#!/usr/bin/env bash
# Issue 31, experiment X17 (branch issue31-finish at b746dc4): the branch's reduce7 (`dyn`, X15's
# finish) read 0.1% below the probe at 2^28 back to back in x15 and x15b. One guess: after a
# one-shot grid each finishing thread still issues kMost / BLOCK = 2 predicated loads (one off).
#   dyn   the branch's reduce7, as committed there
#   dyn1  (x17_v_dyn1.patch): after a one-shot grid, one load a thread
# Alternating rounds with the probe (as many as fit), float 2^28 both methods and 2^30 back to
# back; the folder is tarred after every round, so a call cut short keeps its rounds.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/r; mkdir -p $R
start=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; echo "commit ${REDUCTION_COMMIT:-unknown}"; } > $R/gpu.txt 2>&1
cat $R/gpu.txt
source scripts/lib/measure.sh
BUILDS="dyn dyn1"
declare -A BIN=([dyn]=build/release/bin/reduce7 [dyn1]=/tmp/dyn1/build/release/bin/reduce7)
( build_targets build/release grid_layout_probe reduce7 > $R/build.log 2>&1 || echo "BUILD dyn FAILED" >> $R/errors.txt ) &
G=/tmp/dyn1; mkdir -p $G && tar --exclude=./build --exclude=./devrun --exclude=./.cccl35 -cf - . 2>/dev/null | tar -C $G -xf -
( cd $G && patch -p1 < $OLDPWD/devrun/x17_v_dyn1.patch > $R/patch_dyn1.log && build_targets build/release reduce7 > $R/build_dyn1.log 2>&1 || echo "BUILD dyn1 FAILED" >> $R/errors.txt ) &
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
for round in 1 2 3 4 5 6; do
  (( SECONDS - start > ${ROUNDS_UNTIL:-150} )) && break
  $P --type float --n 2^28 --n 2^30 --only one-shot-512x4+grouped > $R/probe_float_$round.csv 2>>$R/errors.txt || echo "probe $round FAILED" >> $R/errors.txt
  for b in $BUILDS; do
    r7 $b $R/reduce7_$round.csv back-to-back --type float --n 2^28
    r7 $b $R/reduce7_$round.csv flushed --type float --n 2^28
    r7 $b $R/reduce7_$round.csv back-to-back --type float --n 2^30
  done
  echo "round $round done at $((SECONDS-start)) s" | tee -a $R/times.txt
  rm -f $R/tmp.csv; tar -C $OUT -czf $OUT/r.tgz r
done
python3 scripts/rounds.py $R > $R/rounds.txt 2>&1; cat $R/rounds.txt
grep -v "^$" $R/errors.txt 2>/dev/null | grep -v "^grid_layout_probe: " | head
rm -f $R/tmp.csv; tar -C $OUT -czf $OUT/r.tgz r && rm -rf $R
