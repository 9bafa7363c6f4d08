#!/usr/bin/env bash
# Issue 31, experiment X6 (reduce7 as at 8541399): x5's count_inline, and inline_first
# (x6_v_count_inline_first.patch: the same with last-block tested first in the kernel's
# finish, so that its path has no jump table), beside the probe; two alternating rounds.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/r; mkdir -p $R
start=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; echo "commit ${REDUCTION_COMMIT:-unknown}"; ncu --version | tail -1; } > $R/gpu.txt
cat $R/gpu.txt
source scripts/lib/measure.sh
declare -A BIN=([count_inline]=/tmp/count_inline/build/release/bin/reduce7 [inline_first]=/tmp/inline_first/build/release/bin/reduce7)
( build_targets build/release grid_layout_probe > $R/build.log 2>&1 || echo "BUILD probe FAILED" >> $R/errors.txt ) &
for v in count_inline:x5_v_count_inline.patch inline_first:x6_v_count_inline_first.patch; do
  G=/tmp/${v%%:*}; mkdir -p $G && tar --exclude=./build --exclude=./devrun --exclude=./.cccl35 -cf - . | tar -C $G -xf -
  ( cd $G && patch -p1 < $OLDPWD/devrun/${v#*:} > $R/patch_${v%%:*}.log && build_targets build/release reduce7 > $R/build_${v%%:*}.log 2>&1 || echo "BUILD ${v%%:*} FAILED" >> $R/errors.txt ) &
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
for round in 1 2; do
  $P --type float --n 2^26 --n 2^28 --n 2^30 --only one-shot-512x4+grouped > $R/probe_float_$round.csv 2>>$R/errors.txt || echo "probe $round FAILED" >> $R/errors.txt
  for m in back-to-back flushed; do
    for b in count_inline inline_first; do
      for k in 28 30; do r7 $b $R/reduce7_$round.csv $m --type float --n 2^$k; done
      r7 $b $R/reduce7_$round.csv $m --type float --n 2^26 --grid one-shot
    done
  done
  echo "round $round done at $((SECONDS-start)) s" | tee -a $R/times.txt
  (( SECONDS - start > 200 )) && break
done
python3 scripts/rounds.py $R > $R/rounds.txt 2>&1; cat $R/rounds.txt
grep -v "^$" $R/errors.txt 2>/dev/null | grep -v "^grid_layout_probe: " | head
tar -C $OUT -czf $OUT/r.tgz r && rm -rf $R
