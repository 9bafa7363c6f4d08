#!/usr/bin/env bash
# Bytes in flight, isolated (docs/05-complete-unroll.md, 06, 07): reduce7 with each
# --loads (the independent 16-byte loads each thread issues before it adds any),
# everything else fixed (the grid: the blocks that fit at once; block 256; vec=4), at
# n = 2^22 ... 2^30, int and float. If bytes in flight limit the kernel, its GB/s rises
# with --loads until the DRAM's bandwidth does; if not, the lines lie on each other.
# The grid is reduce7's fixed one (--grid resident), as when docs/results/loads_sweep.csv was
# measured: since 1f1319d the atomic finish (int's default) otherwise gets one block per tile.
# (reduce6 has no --loads: its two loads per step are the lesson's quoted code.)
#
#   scripts/loads_sweep.sh [OUTDIR [PART ...]]     # default: docs/results, both parts
#
# PARTs and what they write into OUTDIR (CSV header on line 1, '#' lines after the data):
#   sweep   loads_sweep.csv   reduce7's --csv records (CUB's too, timed in the same run),
#                             with the --loads given and the repetition as first columns
#   ncu     loads_ncu.csv     Nsight Compute on the first launch at 2^22 and 2^28, int,
#                             --loads 1, 4 and 16: DRAM throughput and bytes, long-scoreboard
#                             stalls per issue, instructions, active warps, registers, time
# Environment: BUILD (default build/release), REPEATS (sweep repetitions, default 1),
# ITERS (timed runs per record, default 100). Needs a GPU; the ncu part needs ncu.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/provenance.sh
source scripts/lib/provenance.sh
# shellcheck source=scripts/lib/ncu_metrics.sh
source scripts/lib/ncu_metrics.sh
out=${1:-docs/results}
shift || true
parts=${*:-sweep ncu}
build=${BUILD:-build/release}
repeats=${REPEATS:-1}
iters=${ITERS:-100}
stages=(reduce7)
loads_choices=(1 2 4 8 16)
for stage in "${stages[@]}"; do
    [[ -x $build/bin/$stage ]] || { echo "loads_sweep.sh: $build/bin/$stage not found: build first (README.md)" >&2; exit 3; }
done
mkdir -p "$out"
# shellcheck source=scripts/lib/measure.sh
source scripts/lib/measure.sh  # wanted

if wanted sweep; then
    csv=$out/loads_sweep.csv
    rm -f "$csv"
    for repetition in $(seq "$repeats"); do
        for stage in "${stages[@]}"; do
            for type in int float; do
                for k in 22 24 26 28 30; do
                    for loads in "${loads_choices[@]}"; do
                        echo "loads_sweep.sh: $stage --loads $loads $type 2^$k (repetition $repetition)" >&2
                        $build/bin/$stage --no-baseline --type $type --n 2^$k --block 256 --loads "$loads" --grid resident --iters "$iters" --csv |
                            awk -v l="$loads" -v r="$repetition" -v first="$([[ -s $csv ]] && echo 0 || echo 1)" '
                                NR == 1 { if (first) print "loads,repetition," $0; next }
                                { print l "," r "," $0 }' >>"$csv"
                    done
                done
            done
        done
    done
    provenance "scripts/loads_sweep.sh $out sweep (BUILD=$build REPEATS=$repeats ITERS=$iters)" >>"$csv"
fi

if wanted ncu; then
    command -v ncu >/dev/null || { echo "loads_sweep.sh: ncu (Nsight Compute) not found" >&2; exit 3; }
    csv=$out/loads_ncu.csv
    metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size
    declare -A kernel=([reduce7]=shuffle_vector_single_pass)
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    echo "stage,loads,type,n,metric,unit,value" >"$csv"
    for stage in "${stages[@]}"; do
        for k in 22 28; do
            for loads in 1 4 16; do
                echo "loads_sweep.sh: ncu $stage --loads $loads int 2^$k" >&2
                if ! ncu_first_launch "$tmp/raw.csv" "$tmp/log" "$metrics" "^${kernel[$stage]}" \
                        $build/bin/$stage --no-baseline --type int --n 2^$k --block 256 --loads "$loads" --grid resident --iters 1 --warmup 0; then
                    echo "loads_sweep.sh: ncu failed on $stage --loads $loads 2^$k:" >&2
                    tail -5 "$tmp/log" "$tmp/raw.csv" >&2 2>/dev/null || true
                    exit 3
                fi
                IFS=, read -ra names <<<"$metrics"
                for m in "${names[@]}"; do
                    echo "$stage,$loads,int,$((1 << k)),$m,$(ncu_unit "$tmp/raw.csv" "$m"),\"$(ncu_value "$tmp/raw.csv" "$m")\""
                done >>"$csv"
            done
        done
    done
    provenance "scripts/loads_sweep.sh $out ncu (BUILD=$build; $(ncu --version | tail -1))" >>"$csv"
fi
echo "loads_sweep.sh: done ($parts), results in $out" >&2
