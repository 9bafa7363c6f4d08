#!/usr/bin/env bash
# Issue 31, experiment E1: the probe's finishes after a one-shot grid (packed, fenced, counted,
# grouped) beside reduce7's defaults and its one-shot two-pass, 2^24-2^30, int and float, both methods.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/r; mkdir -p $R
start=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; echo "commit ${REDUCTION_COMMIT:-unknown}"; } > $R/gpu.txt
cat $R/gpu.txt
[[ -d build/release ]] || cmake --preset release > $R/build.log 2>&1
cmake --build build/release -j16 --target grid_layout_probe reduce7 >> $R/build.log 2>&1 || { tail -30 $R/build.log; echo BUILD FAILED; exit 1; }
echo "build done at $((SECONDS-start)) s" | tee -a $R/times.txt
P=build/release/bin/grid_layout_probe
INT=one-shot-512x4,one-shot-512x4+counted,one-shot-512x4+packed,one-shot-512x4+fenced,one-shot-512x4+grouped,resident-512x4+grouped,one-shot-512x3
FLT=one-shot-512x4,one-shot-512x4+atomic,one-shot-512x4+grouped,resident-512x4+grouped
sizes="--n 2^24 --n 2^26 --n 2^28 --n 2^30"
r7() { # CSV METHOD ARGS
  local csv=$1 m=$2; shift 2
  build/release/bin/reduce7 --no-baseline "$@" --timing $m --iters $([[ $m == flushed ]] && echo 100 || echo 10) --warmup 20 --csv > $R/tmp.csv || echo "reduce7 $* FAILED" >> $R/errors.txt
  if [[ ! -s $csv ]]; then head -1 $R/tmp.csv | sed 's/^/timing,/' > $csv; fi
  tail -n +2 $R/tmp.csv | sed "s/^/$m,/" >> $csv
}
for round in 1 2; do
  $P --type int $sizes --only $INT > $R/probe_int_$round.csv 2> $R/probe_int_$round.err || echo "probe int $round FAILED" >> $R/errors.txt
  $P --type float $sizes --only $FLT > $R/probe_float_$round.csv 2> $R/probe_float_$round.err || echo "probe float $round FAILED" >> $R/errors.txt
  echo "probe round $round done at $((SECONDS-start)) s" | tee -a $R/times.txt
  for k in 24 26 28 30; do for m in flushed back-to-back; do
    r7 $R/reduce7_$round.csv $m --type int --n 2^$k
    r7 $R/reduce7_$round.csv $m --type float --n 2^$k
    [[ $round == 1 ]] && r7 $R/reduce7_$round.csv $m --type float --n 2^$k --grid one-shot --finish two-pass
  done; done
  echo "reduce7 round $round done at $((SECONDS-start)) s" | tee -a $R/times.txt
  (( SECONDS - start > 420 )) && break
done
cat $R/errors.txt 2>/dev/null
tar -C $OUT -czf $OUT/r.tgz r && rm -rf $R
