#!/usr/bin/env bash
# Issue 31, experiment X1 (at 7c64a08): is reduce7's float gap to the probe's +grouped at
# 2^28-2^30 the group of 4,096 (against the probe's 512), and where does one block per tile
# start to pay for last-block (float) on this machine? Builds reduce7 twice, as committed
# (kGroup 4096, build/release) and with kGroup 512 (a copy of the tree, build in /tmp/g512),
# then alternates them with the probe, in rounds, both methods; int's default beside the
# probe's packed and fenced finishes in the same rounds.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/r; mkdir -p $R
start=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; echo "commit ${REDUCTION_COMMIT:-unknown}"; } > $R/gpu.txt
cat $R/gpu.txt
source scripts/lib/measure.sh
G=/tmp/g512
mkdir -p $G && tar --exclude=./build --exclude=./devrun --exclude=./.cccl35 -cf - . | tar -C $G -xf -
sed -i 's/^constexpr unsigned kGroup = 4096;/constexpr unsigned kGroup = 512;/' $G/reduce7/variants.cuh
grep -n "^constexpr unsigned kGroup" $G/reduce7/variants.cuh reduce7/variants.cuh | tee $R/kgroup.txt
( build_targets build/release grid_layout_probe reduce7 > $R/build.log 2>&1 || echo "BUILD A FAILED" >> $R/errors.txt ) &
( cd $G && build_targets build/release reduce7 > $R/build_g512.log 2>&1 || echo "BUILD B FAILED" >> $R/errors.txt ) &
wait
echo "build done at $((SECONDS-start)) s" | tee -a $R/times.txt
[[ -s $R/errors.txt ]] && { cat $R/errors.txt; tail -20 $R/build*.log; tar -C $OUT -czf $OUT/r.tgz r; exit 1; }
P=build/release/bin/grid_layout_probe
declare -A BIN=([g4096]=build/release/bin/reduce7 [g512]=$G/build/release/bin/reduce7)
r7() { # LABEL CSV METHOD ARGS
  local label=$1 csv=$2 m=$3; shift 3
  ${BIN[$label]} --no-baseline "$@" --timing $m --iters $([[ $m == flushed ]] && echo 60 || echo 10) --warmup 20 --csv > $R/tmp.csv 2>>$R/errors.txt || echo "reduce7 $label $* FAILED" >> $R/errors.txt
  if [[ ! -s $csv ]]; then head -1 $R/tmp.csv | sed 's/^/build,timing,/' > $csv; fi
  tail -n +2 $R/tmp.csv | sed "s/^/$label,$m,/" >> $csv
}
for round in 1 2 3; do
  $P --type float --n 2^24 --n 2^26 --n 2^28 --n 2^30 --only one-shot-512x4+grouped,resident-512x4+grouped > $R/probe_float_$round.csv 2>>$R/errors.txt || echo "probe float $round FAILED" >> $R/errors.txt
  $P --type int --n 2^26 --n 2^28 --n 2^30 --only one-shot-512x4+packed,one-shot-512x4+fenced > $R/probe_int_$round.csv 2>>$R/errors.txt || echo "probe int $round FAILED" >> $R/errors.txt
  for m in back-to-back flushed; do
    for b in g4096 g512; do
      for k in 24 26 28 30; do r7 $b $R/reduce7_$round.csv $m --type float --n 2^$k; done
      for k in 24 26; do r7 $b $R/reduce7_$round.csv $m --type float --n 2^$k --grid one-shot; done
    done
    for k in 25 27; do for g in resident one-shot; do r7 g4096 $R/reduce7_$round.csv $m --type float --n 2^$k --grid $g; done; done
    for k in 26 28 30; do r7 g4096 $R/reduce7_$round.csv $m --type int --n 2^$k; done
  done
  echo "round $round done at $((SECONDS-start)) s" | tee -a $R/times.txt
  (( SECONDS - start > 380 )) && break
done
cat $R/errors.txt 2>/dev/null | grep -v "^$" | head
tar -C $OUT -czf $OUT/r.tgz r && rm -rf $R
