#!/usr/bin/env bash
# Issue 31, call D: is the probe's one-shot-512x4+counted lead over reduce7 at 2^30 int its
# finish or its place in the probe's run? Each layout in its own process, alternated with
# reduce7's default, twice (A B R A B R), both methods.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/r; mkdir -p $R
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; echo "commit ${REDUCTION_COMMIT:-unknown}"; } > $R/gpu.txt
cat $R/gpu.txt
source scripts/lib/measure.sh
build_targets build/release grid_layout_probe reduce7 > $R/build.log 2>&1 || { tail -20 $R/build.log; exit 1; }
for rep in 1 2 3; do
  for l in one-shot-512x4+counted one-shot-512x4 one-shot-512x3; do
    build/release/bin/grid_layout_probe --type int --n 2^30 --only $l > $R/probe_${rep}_$l.csv 2>&1 || echo "probe $l failed"
  done
  for m in flushed back-to-back; do
    build/release/bin/reduce7 --no-baseline --type int --n 2^30 --timing $m --iters $([[ $m == flushed ]] && echo 100 || echo 10) --warmup 20 --csv > $R/reduce7_${rep}_$m.csv 2>&1 || echo "reduce7 failed"
  done
done
grep -h "^int" $R/probe_*.csv | sort -t, -k3,3 -k4,4 | cut -d, -f3,4,11
grep -h "^reduce7" $R/reduce7_*.csv | cut -d, -f1,4,13
tar -C $OUT -czf $OUT/r.tgz r && rm -rf $R
