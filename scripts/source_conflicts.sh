#!/usr/bin/env bash
# Which instructions of reduce2 (and of reduce1 and reduce0 --select bitmask, beside it)
# still meet bank conflicts: Nsight Compute's source counters, one row per SASS instruction
# that used shared memory, with its wavefronts, the ideal count and the excess
# (docs/02-bank-conflicts.md). The kernel-level counters of scripts/profile.sh reduce2
# give the totals; this gives their place in the code.
#
#   scripts/source_conflicts.sh                       # 2^16 int, block 256 (the chapter's), CSV on stdout
#   scripts/source_conflicts.sh --n 2^20 --keep /tmp/reports
#
# A small n is enough: the counts per block do not depend on it, and the source counters
# replay the kernel many times. The first launch of each kernel is its first pass.
# Needs ncu (Nsight Compute), python3 and a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
n=2^16
build=build/release
keep=
while [[ $# -gt 0 ]]; do
    case $1 in
        --n) n=${2:?--n needs a value}; shift 2 ;;
        --build) build=${2:?--build needs a value}; shift 2 ;;
        --keep) keep=${2:?--keep needs a folder}; shift 2 ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        *) echo "source_conflicts.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
command -v ncu >/dev/null || { echo "source_conflicts.sh: ncu (Nsight Compute) not found" >&2; exit 3; }
reports=$(mktemp -d)
trap 'rm -rf "$reports"' EXIT

# "label|executable|kernel|extra options"
profiled=(
    "reduce1|reduce1|interleaved_convergent|"
    "reduce0 [select=bitmask]|reduce0|interleaved_divergent|--select bitmask"
    "reduce2|reduce2|sequential_addressing|"
)
header=--header
for entry in "${profiled[@]}"; do
    IFS='|' read -r label exe_name kernel extra <<<"$entry"
    exe=$build/bin/$exe_name
    [[ -x $exe ]] || { echo "source_conflicts.sh: $exe not found: build first (README.md)" >&2; exit 3; }
    report=$reports/$exe_name${extra:+_variant}
    # SourceCounters: the per-instruction counters (executions, shared wavefronts, ideal).
    # shellcheck disable=SC2086  # $extra is a list of options
    if ! ncu --clock-control none --section SourceCounters -k "regex:^$kernel" --launch-count 1 -f -o "$report" \
            "$exe" --no-baseline --n "$n" --type int --block 256 --iters 1 --warmup 0 $extra \
            >"$report.log" 2>&1; then
        echo "source_conflicts.sh: ncu failed on $label:" >&2
        tail -5 "$report.log" >&2
        exit 3
    fi
    ncu --import "$report.ncu-rep" --page source --csv --print-source sass >"$report.source.csv"
    python3 scripts/shared_source_rows.py "$report.source.csv" --label "$label" $header
    header=
done
if [[ -n $keep ]]; then
    mkdir -p "$keep"
    cp "$reports"/* "$keep"/
fi
