#!/usr/bin/env bash
# Nsight Compute counters that show one lesson: the stage before and the stage itself,
# side by side, on the first (largest) pass of each at the same size.
#
#   scripts/profile.sh reduce2                  # bank conflicts: reduce1 -> reduce2
#   scripts/profile.sh reduce7 --n 2^26 --type float
#   scripts/profile.sh reduce1 --build build/debug
#   scripts/profile.sh reduce1 --csv            # lesson,column,metric,unit,value rows
#
# Where a lesson has a labelled variant, it gets a column too: reduce1's and reduce2's
# lessons also profile reduce0 --select bitmask (the divergent tree without the %, and a
# tree whose threads never share a bank), reduce3's also reduce3 --running-sum shared
# (reduce2's tree after the first add).
#
# Needs ncu (Nsight Compute, part of the CUDA Toolkit) and a GPU; profiling counters may
# need root or the driver's "profiling for all users" setting (ERR_NVGPUCTRPERM).
# Clocks are left as they are (--clock-control none): counts do not depend on them,
# durations do, and the device may be shared.
set -euo pipefail
# shellcheck source=scripts/lib/ncu_metrics.sh
source "$(dirname "$0")/lib/ncu_metrics.sh"

usage() {
    cat <<'EOF'
usage: scripts/profile.sh reduceN [--n N] [--type int|float|double] [--block B] [--build DIR] [--csv]
Profiles reduce(N-1) and reduceN (and the lesson's labelled variants) with the Nsight
Compute metrics of reduceN's lesson and prints them side by side, or as CSV.
Defaults: --n 2^22 --type int --block 256 --build build/release
EOF
}

[[ $# -ge 1 ]] || { usage >&2; exit 2; }
stage=$1
shift
n=2^22
type=int
block=256
build=build/release
csv=false
while [[ $# -gt 0 ]]; do
    case $1 in
        --n) n=${2:?--n needs a value}; shift 2 ;;
        --type) type=${2:?--type needs a value}; shift 2 ;;
        --block) block=${2:?--block needs a value}; shift 2 ;;
        --build) build=${2:?--build needs a value}; shift 2 ;;
        --csv) csv=true; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "profile.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done

# The kernel each stage launches, as ncu names it.
declare -A kernel=(
    [reduce0]=interleaved_divergent [reduce1]=interleaved_convergent [reduce2]=sequential_addressing
    [reduce3]=first_add_during_load [reduce4]=unroll_last_warp [reduce5]=complete_unroll
    [reduce6]=grid_stride [reduce7]=shuffle_vector_single_pass)
[[ -n ${kernel[$stage]:-} ]] || { echo "profile.sh: '$stage' is not a stage: use reduce0 ... reduce7" >&2; exit 2; }

time_metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
case $stage in
    reduce0|reduce1)  # divergence: how many of a warp's 32 lanes each instruction used (pred_on: did work)
        lesson="warp divergence (docs/01-divergence.md)"
        metrics=smsp__thread_inst_executed_per_inst_executed.ratio,smsp__thread_inst_executed_pred_on_per_inst_executed.ratio,smsp__sass_branch_targets_threads_divergent.sum,smsp__inst_executed.sum,$time_metrics ;;
    reduce2)  # bank conflicts in shared-memory loads and stores, and how they cost time: a
        # conflicted access takes one wavefront per distinct bank row, so the shared-memory
        # pipe stays busy longer (MIO throttle: the queue to it is full), the warp waits
        # longer for the loaded value (short scoreboard), and the other warps wait at the
        # barrier for the slowest (barrier); each stall is per instruction issued.
        lesson="shared-memory bank conflicts (docs/02-bank-conflicts.md)"
        metrics=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,smsp__inst_executed.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,$time_metrics ;;
    reduce3)  # half the blocks, twice the loads per thread, no idle threads in step one
        lesson="first add during the load (docs/03-first-add.md)"
        metrics=launch__grid_size,smsp__inst_executed.sum,smsp__thread_inst_executed_per_inst_executed.ratio,dram__bytes_read.sum,smsp__sass_inst_executed_op_shared_ld.sum,$time_metrics ;;
    reduce4)  # time warps spend waiting at barriers, and instructions
        lesson="barriers and the last warp (docs/04-sync-removal.md)"
        metrics=smsp__warps_issue_stalled_barrier.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__inst_executed.sum,$time_metrics ;;
    reduce5)  # instructions the unrolled tree no longer needs
        lesson="complete unrolling (docs/05-complete-unroll.md)"
        metrics=smsp__inst_executed.sum,smsp__sass_inst_executed_op_branch.sum,smsp__warps_issue_stalled_barrier.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,sm__warps_active.avg.pct_of_peak_sustained_active,$time_metrics ;;
    reduce6)  # fewer blocks, more work each: fewer instructions per byte, loads in flight
        lesson="grid-stride loops and occupancy (docs/06-grid-stride.md)"
        metrics=launch__grid_size,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,$time_metrics ;;
    reduce7)  # fewer load instructions, no shared-memory tree
        lesson="warp shuffles and vector loads (docs/07-shuffles-vectors.md)"
        metrics=smsp__sass_inst_executed_op_global_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,smsp__inst_executed.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,launch__grid_size,$time_metrics ;;
esac

command -v ncu >/dev/null || {
    echo "profile.sh: ncu (Nsight Compute) not found: it ships with the CUDA Toolkit; add its folder to PATH" >&2
    exit 3
}
before=$stage
[[ $stage == reduce0 ]] || before=reduce$(( ${stage#reduce} - 1 ))

# The columns: "label|executable|extra options", the stage before first.
columns=("$before|$before|")
case $stage in
    reduce1|reduce2) columns+=("reduce0 [select=bitmask]|reduce0|--select bitmask") ;;
esac
columns+=("$stage|$stage|")
case $stage in
    reduce3) columns+=("reduce3 [running-sum=shared]|reduce3|--running-sum shared") ;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in "${!columns[@]}"; do
    IFS='|' read -r label exe_name extra <<<"${columns[$i]}"
    exe=$build/bin/$exe_name
    [[ -x $exe ]] || { echo "profile.sh: $exe not found: build first (README.md)" >&2; exit 3; }
    # The first launch of the stage's kernel is its first pass, over all n values.
    # shellcheck disable=SC2086  # $extra is a list of options
    if ! ncu_first_launch "$tmp/$i.csv" "$tmp/$i.out" "$metrics" "^${kernel[$exe_name]}" \
            "$exe" --no-baseline --n "$n" --type "$type" --block "$block" --iters 1 --warmup 0 $extra; then
        echo "profile.sh: ncu failed on $label:" >&2
        tail -5 "$tmp/$i.out" "$tmp/$i.csv" >&2 2>/dev/null || true
        exit 3
    fi
done

value() { ncu_value "$tmp/$1.csv" "$2"; }
unit() { ncu_unit "$tmp/$1.csv" "$2"; }
label_of() { local l; IFS='|' read -r l _ <<<"${columns[$1]}"; echo "$l"; }

IFS=, read -ra names <<<"$metrics"
if $csv; then
    echo "lesson,column,metric,unit,value,n,type,block"
    for i in "${!columns[@]}"; do
        for m in "${names[@]}"; do
            echo "$stage,$(label_of "$i"),$m,$(unit "$i" "$m"),\"$(value "$i" "$m")\",$n,$type,$block"
        done
    done
    exit 0
fi
echo "$lesson: n = $n $type, block $block ($(ncu --version | tail -1))"
printf '%-74s %-8s' metric unit
for i in "${!columns[@]}"; do printf ' %28s' "$(label_of "$i")"; done
printf '\n'
for m in "${names[@]}"; do
    printf '%-74s %-8s' "$m" "$(unit "$((${#columns[@]} - 1))" "$m")"
    for i in "${!columns[@]}"; do printf ' %28s' "$(value "$i" "$m")"; done
    printf '\n'
done
