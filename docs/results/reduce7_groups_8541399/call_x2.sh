#!/usr/bin/env bash
# Issue 31, experiment X2 (at 7c64a08): X1 found reduce7's grouped last-block behind the
# probe's +grouped after one block per tile even with groups of 512 (2^26, 2^28). The probe's
# groups are of BLOCK blocks, one partial a thread, inline. Three builds of reduce7, in rounds
# with the probe, both methods: g4096 (as committed: groups of 4,096, a loop a level, out of
# line), blk-inline (groups of BLOCK, one load a thread, inline: x2_v_blk_inl.patch) and
# blk-noinline (the same out of line: x2_v_blk_noinl.patch).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/r; mkdir -p $R
start=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; echo "commit ${REDUCTION_COMMIT:-unknown}"; } > $R/gpu.txt
cat $R/gpu.txt
source scripts/lib/measure.sh
declare -A BIN=([g4096]=build/release/bin/reduce7)
( build_targets build/release grid_layout_probe reduce7 > $R/build.log 2>&1 || echo "BUILD g4096 FAILED" >> $R/errors.txt ) &
for v in blk_inl blk_noinl; do
  G=/tmp/$v; BIN[$v]=$G/build/release/bin/reduce7
  mkdir -p $G && tar --exclude=./build --exclude=./devrun --exclude=./.cccl35 -cf - . | tar -C $G -xf -
  ( cd $G && patch -p1 < $OLDPWD/devrun/x2_v_$v.patch > $R/patch_$v.log && build_targets build/release reduce7 > $R/build_$v.log 2>&1 || echo "BUILD $v FAILED" >> $R/errors.txt ) &
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
  $P --type float --n 2^24 --n 2^26 --n 2^28 --n 2^30 --only one-shot-512x4+grouped > $R/probe_float_$round.csv 2>>$R/errors.txt || echo "probe float $round FAILED" >> $R/errors.txt
  $P --type int --n 2^26 --n 2^28 --n 2^30 --only one-shot-512x4+packed,one-shot-512x4+fenced > $R/probe_int_$round.csv 2>>$R/errors.txt || echo "probe int $round FAILED" >> $R/errors.txt
  for m in back-to-back flushed; do
    for b in g4096 blk_inl blk_noinl; do
      for k in 24 26 28 30; do r7 $b $R/reduce7_$round.csv $m --type float --n 2^$k; done
      for k in 24 26; do r7 $b $R/reduce7_$round.csv $m --type float --n 2^$k --grid one-shot; done
    done
    for b in g4096 blk_inl; do for k in 26 28 30; do r7 $b $R/reduce7_$round.csv $m --type int --n 2^$k; done; done
  done
  echo "round $round done at $((SECONDS-start)) s" | tee -a $R/times.txt
  (( SECONDS - start > 400 )) && break
done
grep -v "^$" $R/errors.txt 2>/dev/null | grep -v "^grid_layout_probe: " | head
tar -C $OUT -czf $OUT/r.tgz r && rm -rf $R
