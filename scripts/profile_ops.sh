#!/usr/bin/env bash
# Nsight Compute counters for one operator and type of reduce_ops: our kernel, its variant
# (argmax: every_lane) and CUB's DeviceReduce kernels, each on the same input, one row per
# kernel launch (the L2 flush between runs is not profiled).
#
#   scripts/profile_ops.sh argmax half 2^28        # why argmax on half was slower than CUB
#   scripts/profile_ops.sh argmax float 2^22 --csv
#   scripts/profile_ops.sh max half 2^28 --build build/debug
#
# Each implementation runs twice (reduce_ops --iters 1 --warmup 0: the checked run and one
# timed run), so each kernel appears twice; CUB launches two kernels per run. Instructions
# per element = smsp__inst_executed.sum x 32 / n (warp instructions, 32 lanes each).
# Needs ncu (CUDA Toolkit) and a GPU; see scripts/profile.sh for ERR_NVGPUCTRPERM.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: scripts/profile_ops.sh OP TYPE [N] [--build DIR] [--csv]
OP and TYPE as reduce_ops takes them (one each); N defaults to 2^26.
Prints, for ours, every_lane (argmax only) and cub, each kernel's time, instructions,
issue-slot use, DRAM throughput, achieved occupancy, grid and registers.
EOF
}
[[ $# -ge 2 ]] || { usage >&2; exit 2; }
op=$1 type=$2
shift 2
n=2^26
build=build/release
csv=false
while [[ $# -gt 0 ]]; do
    case $1 in
        --build) build=${2:?--build needs a value}; shift 2 ;;
        --csv) csv=true; shift ;;
        -h|--help) usage; exit 0 ;;
        -*) echo "profile_ops.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
        *) n=$1; shift ;;
    esac
done
exe=$build/bin/reduce_ops
[[ -x $exe ]] || { echo "profile_ops.sh: $exe not found: build first (README.md)" >&2; exit 3; }
command -v ncu >/dev/null || {
    echo "profile_ops.sh: ncu (Nsight Compute) not found: it ships with the CUDA Toolkit; add its folder to PATH" >&2
    exit 3
}
# A bad operator, type or size is reported by reduce_ops itself, before any profiling.
"$exe" --op "$op" --type "$type" --n "$n" --help >/dev/null

metrics=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
metrics+=,launch__grid_size,launch__registers_per_thread
impls=(ours cub)
[[ $op == argmax ]] && impls=(ours every_lane cub)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# reduce_ops names each implementation's runs with an NVTX range "<op> <type> n=<n> <impl>"
# (ops/ops_bench.cu, common/timing.h); only kernels launched inside that range are profiled.
for impl in "${impls[@]}"; do
    if ! ncu --clock-control none --csv --nvtx --nvtx-include "regex:^$op $type n=[^ ]+ $impl/" \
            -k 'regex:reduce_single_pass|DeviceReduce' --metrics "$metrics" \
            "$exe" --op "$op" --type "$type" --n "$n" --iters 1 --warmup 0 >"$tmp/$impl.csv" 2>"$tmp/$impl.err"; then
        echo "profile_ops.sh: ncu failed on $impl:" >&2
        tail -5 "$tmp/$impl.err" "$tmp/$impl.csv" >&2 || true
        exit 3
    fi
done

# ncu's CSV has a header row naming its columns; the program's own output comes before it.
rows() {  # impl -> "id|kernel|metric|value" lines
    awk -F'","' '
        { sub(/^"/, "", $1); sub(/"\r?$/, "", $NF) }
        $1 == "ID" { for (i = 1; i <= NF; i++) col[$i] = i; header = 1; next }
        header && NF > 5 {
            k = $col["Kernel Name"]; v = $col["Metric Value"]
            sub(/\(.*/, "", k); sub(/<.*/, "", k); sub(/.*::/, "", k); gsub(/,/, "", v)
            print $1 "|" k "|" $col["Metric Name"] "|" v
        }' "$tmp/$1.csv"
}

IFS=, read -ra names <<<"$metrics"
if $csv; then
    echo "op,type,n,impl,launch,kernel,$metrics"
else
    echo "$op $type, n = $n ($(ncu --version | tail -1))"
    printf '%-11s %-6s %-28s' impl launch kernel
    printf ' %s' "time_ns inst_executed issue_active% dram% warps_active% grid regs"
    printf '\n'
fi
for impl in "${impls[@]}"; do
    rows "$impl" >"$tmp/$impl.rows"
    launch=0
    for id in $(cut -d'|' -f1 "$tmp/$impl.rows" | uniq); do
        kernel=$(awk -F'|' -v id="$id" '$1 == id { print $2; exit }' "$tmp/$impl.rows")
        values=()
        for m in "${names[@]}"; do
            values+=("$(awk -F'|' -v id="$id" -v m="$m" '$1 == id && $3 == m { print $4; exit }' "$tmp/$impl.rows")")
        done
        if $csv; then
            (IFS=,; echo "$op,$type,$n,$impl,$launch,$kernel,${values[*]}")
        else
            printf '%-11s %-6s %-28s' "$impl" "$launch" "$kernel"
            printf ' %s' "${values[@]}"
            printf '\n'
        fi
        launch=$((launch + 1))
    done
done
