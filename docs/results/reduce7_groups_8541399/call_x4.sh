#!/usr/bin/env bash
# Issue 31, experiment X4 (reduce7 as at 8541399): Nsight Compute counters of reduce7's
# last-block after one block per tile beside the probe's +grouped (the pair that differs,
# x3/), and of reduce7's packed beside the probe's +packed (a pair that ties), int, 2^26 and
# 2^28; three launches each after two (ncu --launch-skip 2 --launch-count 3).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
R=$OUT/r; mkdir -p $R
start=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; echo "commit ${REDUCTION_COMMIT:-unknown}"; ncu --version | tail -1; } > $R/gpu.txt
cat $R/gpu.txt
source scripts/lib/measure.sh
build_targets build/release grid_layout_probe reduce7 > $R/build.log 2>&1 || { tail -20 $R/build.log; echo BUILD FAILED; tar -C $OUT -czf $OUT/r.tgz r; exit 1; }
echo "build done at $((SECONDS-start)) s" | tee -a $R/times.txt
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__cycles_active.avg,sm__ctas_launched.sum,launch__registers_per_thread,launch__shared_mem_per_block_static,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_membar_per_warp_active.pct,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_drain_per_warp_active.pct,lts__t_sectors_op_atom.sum,lts__t_sectors_op_red.sum,lts__t_sectors_op_write.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
prof() { # NAME KERNEL_REGEX COMMAND...
  local name=$1 k=$2; shift 2
  ncu --clock-control none --csv --log-file $R/ncu_$name.csv --metrics $M -k "regex:$k" --launch-skip 2 --launch-count 3 "$@" > $R/ncu_$name.log 2>&1 || echo "ncu $name FAILED" | tee -a $R/errors.txt
}
for k in 26 28; do
  prof r7_lastblock_$k '^shuffle_vector_single_pass' build/release/bin/reduce7 --no-baseline --type int --n 2^$k --finish last-block --grid one-shot --iters 3 --warmup 2
  prof probe_grouped_$k '^strided_tiles($|<)' build/release/bin/grid_layout_probe --type int --n 2^$k --only one-shot-512x4+grouped --runs 3 --warmup 2 --batches 0
  prof r7_packed_$k '^shuffle_vector_single_pass' build/release/bin/reduce7 --no-baseline --type int --n 2^$k --iters 3 --warmup 2
  prof probe_packed_$k '^strided_tiles($|<)' build/release/bin/grid_layout_probe --type int --n 2^$k --only one-shot-512x4+packed --runs 3 --warmup 2 --batches 0
done
echo "all done at $((SECONDS-start)) s" | tee -a $R/times.txt
tar -C $OUT -czf $OUT/r.tgz r && rm -rf $R
