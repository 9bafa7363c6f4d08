#!/usr/bin/env bash
# How long the README's two commands take, each from a fresh copy of this tree (no build
# folder): the first (configure, build the stages, run reduce_all) with every core and on four
# (taskset -c 0-3), the second (configure, build everything, ctest); and .ci/run on request.
# Each PART is one line of docs/results/build_times.txt (or OUT) with its time, the machine
# (cores, CPU, GPU), CUDAARCHS, the commit and the date; a run replaces the lines of the
# parts it times and keeps the others, so that times from different machines sit together.
#
#   scripts/build_times.sh [--out OUT] [--logs DIR] [PART ...]   # PARTs: first first4 second ci
#                                                    # (default: first first4 second)
#
# Each part's whole output goes to DIR/build_times_PART.log as it runs (DIR: build/ of this
# tree by default), so that a run cut short still shows where its time went.
#
# REDUCTION_COMMIT names the commit where the tree is not a git checkout.
# Without a GPU, reduce_all's run is left out of the first command's time (and said so), and
# the second command's GPU tests report themselves skipped, as they do anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
name=$(basename "$0")

out=docs/results/build_times.txt
logs=build
parts=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --out) out=${2:?--out needs a file}; shift ;;
        --logs) logs=${2:?--logs needs a folder}; shift ;;
        first|first4|second|ci) parts+=("$1") ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "$name: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[[ ${#parts[@]} -gt 0 ]] || parts=(first first4 second)

gpu=$(nvidia-smi --query-gpu=name,serial --format=csv,noheader 2>/dev/null | head -1 || true)
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
commit=${REDUCTION_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
[[ -n ${REDUCTION_COMMIT:-} || $commit == unknown ]] || git diff --quiet HEAD || commit+=" with uncommitted changes"
source_dir=$PWD

# A fresh copy of the tree (what git tracks, and new files it does not ignore) in a new folder.
fresh_copy() {
    local dir
    dir=$(mktemp -d "${TMPDIR:-/tmp}/build_times.XXXXXX")
    if git rev-parse --git-dir >/dev/null 2>&1; then
        git ls-files -z --cached --others --exclude-standard |
            while IFS= read -r -d '' file; do if [[ -e $file ]]; then printf '%s\0' "$file"; fi; done |
            tar --null -T - -cf - | tar -xf - -C "$dir"
    else
        tar --exclude=./build --exclude=./.deps --exclude=./.whl12 --exclude=./.git -cf - . | tar -xf - -C "$dir"
    fi
    echo "$dir"
}

now() { date +%s.%N; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
# Runs a step in the copy ($copy), output into $log; stops the part on failure.
step() {
    echo "\$ $*" >>"$log"
    if ! (cd "$copy" && "${pin[@]}" "$@") >>"$log" 2>&1; then
        tail -30 "$log" >&2
        echo "$name: failed: $* (in $copy)" >&2
        return 1
    fi
}

# One part: its line, "LABEL: TOTAL s = ... | machine | CUDAARCHS | commit | date".
time_part() {
    local part=$1 label cores t0 t1 t2 t3 detail run_note=""
    pin=()
    cores=$(nproc)
    case $part in
        first4)
            if [[ $cores -le 4 ]]; then echo "$name: first4: this machine has $cores cores, no more than 4: skipped" >&2; return 0; fi
            pin=(taskset -c 0-3)
            cores=4
            label="command 1, 4 cores (taskset -c 0-3)" ;;
        first) label="command 1, all $cores cores" ;;
        second) label="command 2, all $cores cores" ;;
        ci) label=".ci/run, all $cores cores" ;;
    esac
    copy=$(fresh_copy)
    mkdir -p "$logs"
    log=$(realpath "$logs")/build_times_$part.log
    : >"$log"
    echo "== $label (in $copy)" >&2
    t0=$(now)
    case $part in
        first|first4)
            step cmake --preset release
            t1=$(now)
            step cmake --build --preset stages
            t2=$(now)
            if [[ -n $gpu ]]; then
                step build/release/bin/reduce_all
            else
                run_note=" (no GPU: not run)"
            fi
            t3=$(now)
            detail="configure $(seconds "$t0" "$t1") + build $(seconds "$t1" "$t2") + reduce_all $(seconds "$t2" "$t3")$run_note" ;;
        second)
            step cmake --preset release
            t1=$(now)
            step cmake --build --preset release
            t2=$(now)
            step ctest --preset release
            t3=$(now)
            detail="configure $(seconds "$t0" "$t1") + build $(seconds "$t1" "$t2") + ctest $(seconds "$t2" "$t3"):"
            detail+=" $(grep -E '^[0-9]+% tests passed' "$log" | tail -1)" ;;
        ci)
            step env CI=true bash .ci/run
            t3=$(now)
            detail="the README's test command, then ctest --preset classroom:"
            detail+=" $(grep -E '^[0-9]+% tests passed' "$log" | paste -sd';' | sed 's/;/; then /')" ;;
    esac
    local line
    local archs="CUDAARCHS ${CUDAARCHS:-unset}"
    [[ $part == ci ]] && archs="CUDAARCHS $(sed -n 's/^export CUDAARCHS="\(.*\)"/\1/p' .ci/run) (set by .ci/run)"
    line="$label: $(seconds "$t0" "$t3") s = $detail | $(nproc) cores, $cpu, GPU: ${gpu:-none} | $archs"
    line+=" | commit $commit | $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "$line" >&2
    lines+=("$part|$line")
    rm -rf "$copy"
}

lines=()
for part in "${parts[@]}"; do time_part "$part"; done

# The file: its header, then every part's line, this run's replacing an earlier one's.
mkdir -p "$(dirname "$out")"
header="# scripts/build_times.sh: the README's commands, each timed from a fresh copy of the tree"
{
    echo "$header"
    echo "# command 1: cmake --preset release && cmake --build --preset stages && build/release/bin/reduce_all"
    echo "# command 2: cmake --preset release && cmake --build --preset release && ctest --preset release"
    for part in first first4 second ci; do
        found=""
        for entry in "${lines[@]}"; do
            if [[ ${entry%%|*} == "$part" ]]; then found=${entry#*|}; fi
        done
        if [[ -n $found ]]; then
            echo "$found"
        elif [[ -f $out ]]; then
            case $part in
                first) grep -E '^command 1, all ' "$out" || true ;;
                first4) grep -E '^command 1, 4 cores' "$out" || true ;;
                second) grep -E '^command 2, ' "$out" || true ;;
                ci) grep -E '^\.ci/run, ' "$out" || true ;;
            esac
        fi
    done
} >"$out.new"
mv "$out.new" "$out"
cd "$source_dir"
cat "$out"
