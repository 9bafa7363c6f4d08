#!/usr/bin/env bash
# Issue 31, experiment X9 (reduce7 as at 74ba1af): is the float gap at 2^28 back to back in the
# kernel or between the kernels? Nsight Systems traces 3 batches of 100 back-to-back launches of
# the probe's one-shot-512x4+grouped and of three reduce7 builds at 2^28 (and 2^30) float:
#   committed, skip_g18 (x8_v_skip_g18.patch), skip_count_g18 (x9_v_skip_count_g18.patch: x7's
#   skip_count with groups of 2^18 / BLOCK); devrun/gaps.py gives each kernel's median duration
#   and the median gap between launches. Then two alternating rounds of the same builds.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/r; mkdir -p $R
start=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; echo "commit ${REDUCTION_COMMIT:-unknown}"; which nsys && nsys --version; } > $R/gpu.txt 2>&1
cat $R/gpu.txt
NSYS=$(command -v nsys || ls /opt/nvidia/nsight-systems/*/bin/nsys /usr/local/cuda/nsight-systems*/bin/nsys 2>/dev/null | head -1)
echo "nsys: $NSYS" | tee -a $R/gpu.txt
source scripts/lib/measure.sh
BUILDS="committed skip_g18 skip_count_g18"
declare -A BIN=([committed]=build/release/bin/reduce7)
( build_targets build/release grid_layout_probe reduce7 > $R/build.log 2>&1 || echo "BUILD committed FAILED" >> $R/errors.txt ) &
for b in skip_g18 skip_count_g18; do
  G=/tmp/$b; BIN[$b]=$G/build/release/bin/reduce7; mkdir -p $G && tar --exclude=./build --exclude=./devrun --exclude=./.cccl35 -cf - . 2>/dev/null | tar -C $G -xf -
  p=x8_v_$b; [[ $b == skip_count_g18 ]] && p=x9_v_$b
  ( cd $G && patch -p1 < $OLDPWD/devrun/$p.patch > $R/patch_$b.log && build_targets build/release reduce7 > $R/build_$b.log 2>&1 || echo "BUILD $b FAILED" >> $R/errors.txt ) &
done
wait
echo "build done at $((SECONDS-start)) s" | tee -a $R/times.txt
[[ -s $R/errors.txt ]] && { cat $R/errors.txt; tail -20 $R/build*.log; tar -C $OUT -czf $OUT/r.tgz r; exit 1; }
P=build/release/bin/grid_layout_probe
if [[ -n $NSYS ]]; then
  for k in 28 30; do
    $NSYS profile -t cuda -o $R/nsys_probe_$k -f true $P --type float --n 2^$k --only one-shot-512x4+grouped --runs 1 --warmup 0 --batches 3 > $R/nsys_probe_$k.log 2>&1
    $NSYS stats -r cuda_gpu_trace -f csv -o $R/nsys_probe_$k $R/nsys_probe_$k.nsys-rep >> $R/nsys_probe_$k.log 2>&1
    python3 devrun/gaps.py $R/nsys_probe_${k}_cuda_gpu_trace.csv "strided_tiles<512" | sed "s/^/2^$k probe /" | tee -a $R/gaps.txt
    for b in $BUILDS; do
      $NSYS profile -t cuda -o $R/nsys_${b}_$k -f true ${BIN[$b]} --no-baseline --type float --n 2^$k --timing back-to-back --iters 3 --warmup 2 > $R/nsys_${b}_$k.log 2>&1
      $NSYS stats -r cuda_gpu_trace -f csv -o $R/nsys_${b}_$k $R/nsys_${b}_$k.nsys-rep >> $R/nsys_${b}_$k.log 2>&1
      python3 devrun/gaps.py $R/nsys_${b}_${k}_cuda_gpu_trace.csv "shuffle_vector_single_pass" | sed "s/^/2^$k $b /" | tee -a $R/gaps.txt
    done
  done
  rm -f $R/*.nsys-rep $R/*.sqlite
fi
echo "nsys done at $((SECONDS-start)) s" | tee -a $R/times.txt
r7() { # LABEL CSV METHOD ARGS
  local label=$1 csv=$2 m=$3; shift 3
  ${BIN[$label]} --no-baseline "$@" --timing $m --iters $([[ $m == flushed ]] && echo 60 || echo 10) --warmup 20 --csv > $R/tmp.csv 2>>$R/errors.txt || echo "reduce7 $label $* FAILED" >> $R/errors.txt
  if [[ ! -s $csv ]]; then head -1 $R/tmp.csv | sed 's/^/build,timing,/' > $csv; fi
  tail -n +2 $R/tmp.csv | sed "s/^/$label,$m,/" >> $csv
}
for round in 1 2; do
  (( SECONDS - start > 330 )) && break
  $P --type float --n 2^28 --n 2^30 --only one-shot-512x4+grouped > $R/probe_float_$round.csv 2>>$R/errors.txt || echo "probe $round FAILED" >> $R/errors.txt
  for m in back-to-back flushed; do
    for b in $BUILDS; do
      for k in 28 30; do r7 $b $R/reduce7_$round.csv $m --type float --n 2^$k; done
    done
  done
  echo "round $round done at $((SECONDS-start)) s" | tee -a $R/times.txt
done
python3 scripts/rounds.py $R > $R/rounds.txt 2>&1; cat $R/rounds.txt
grep -v "^$" $R/errors.txt 2>/dev/null | grep -v "^grid_layout_probe: " | head
tar -C $OUT -czf $OUT/r.tgz r && rm -rf $R
