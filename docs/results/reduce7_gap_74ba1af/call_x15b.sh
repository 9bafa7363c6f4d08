#!/usr/bin/env bash
# X15b: call_x15.sh as the device ran it right after X15, on the same machine, with its build lines
# replaced (by sed in the call) so that X15's binaries in /tmp/straight, /tmp/dyn and build/ ran again.
# Issue 31, experiment X15 (prepared at 8ede595; reduce7 as at 74ba1af): x14's `straight` finish led
# the probe on the resident grid (2^26) but stayed 0.07% behind it and probe_finish on the one-shot
# grid (2^28, 2^30), where x13's groups of 512 had helped. The candidate:
#   straight  (x14_v_straight.patch): two straight levels, groups of 1,024, predicated loads
#   dyn       (x15_v_dyn.patch): the same, but groups of BLOCK (one partial a thread) whenever the
#             grid is more than one group of 1,024; a resident grid is still one group
# Three alternating rounds with the probe, float 2^26, 2^28 and 2^30, both methods; then every
# result of dyn checked over block sizes, types and grids. Files stay under $OUT/r (no tar).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/r; mkdir -p $R
start=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; echo "commit ${REDUCTION_COMMIT:-unknown}"; which nsys && nsys --version; } > $R/gpu.txt 2>&1
cat $R/gpu.txt
source scripts/lib/measure.sh
BUILDS="straight dyn"
declare -A BIN=()
: # X15b: builds kept from X15 on this machine
for b in straight dyn; do
  G=/tmp/$b; BIN[$b]=$G/build/release/bin/reduce7
  p=x14_v_$b; [[ $b == dyn ]] && p=x15_v_$b
  :
done
wait
echo "build done at $((SECONDS-start)) s" | tee -a $R/times.txt
[[ -s $R/errors.txt ]] && { cat $R/errors.txt; tail -20 $R/build*.log; exit 1; }
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
for b in dyn; do
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
rm -f $R/tmp.csv
