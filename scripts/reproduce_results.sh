#!/usr/bin/env bash
# Re-measures every GPU figure that README.md and docs/ quote, on this machine's GPU, with
# the release build (build it first: README.md). Each output file starts with the command
# that produced it.
#
#   scripts/reproduce_results.sh [OUTDIR]        # default: docs/results
#
# Writes into OUTDIR:
#   environment.txt     GPU, driver, CUDA, commit, date
#   readme_table.txt    reduce_all at its defaults (the README's first command)
#   lessons_int.txt     reduce_all --type int --n 2^22 (the lesson chapters' size)
#   results.csv         reduce_all at 2^20 ... 2^28, int and float, 100 timed runs each
#   targets.csv         reduce7, CUB and the copy at 2^20 ... 2^29, three repetitions
#   variants.txt        reduce7 --variants at 2^20 and 2^28, int and float
#   sweep_int.csv, sweep_float.csv   reduce_all --sweep 2^10:2^29
#   profiles.txt        scripts/profile.sh reduce1 ... reduce7 (needs ncu)
#   legacy.txt          reduce4's legacy last warp: sums and racecheck (needs compute-sanitizer)
#   explain.txt         reduce0 ... reduce3 --explain
# and, where matplotlib is installed, docs/img/sweep.png.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/results}
bin=build/release/bin
[[ -x $bin/reduce_all ]] || { echo "reproduce_results.sh: $bin/reduce_all not found: build first (README.md)" >&2; exit 3; }
mkdir -p "$out"

# Runs a command, printing it first (as "$ command") so every file says how it was made.
run() { echo "\$ $*"; "$@"; }
# Appends a CSV to a file, keeping only the first header.
csv_into() {
    local file=$1
    shift
    if [[ -s $file ]]; then "$@" | tail -n +2 >>"$file"; else "$@" >"$file"; fi
}

{
    date -u '+%Y-%m-%d %H:%M UTC'
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader
    nvcc --version | tail -1
    echo "commit ${REDUCTION_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
} >"$out/environment.txt"
cat "$out/environment.txt"

# Bring the GPU's clocks up before the first figure that counts.
$bin/reduce_all --n 2^28 --iters 5 --warmup 1 >/dev/null

run $bin/reduce_all | tee "$out/readme_table.txt"
run $bin/reduce_all --type int --n 2^22 >"$out/lessons_int.txt"

rm -f "$out/results.csv" "$out/targets.csv"
for type in int float; do
    for k in 20 22 24 26 28; do
        csv_into "$out/results.csv" $bin/reduce_all --type $type --n 2^$k --iters 100 --csv
    done
done
for repetition in 1 2 3; do
    for type in int float; do
        for k in 20 21 22 24 26 28 29; do
            csv_into "$out/targets.csv" $bin/reduce7 --no-baseline --type $type --n 2^$k --iters 100 --csv
        done
    done
done

{
    for type in int float; do
        for k in 20 28; do run $bin/reduce7 --variants --no-baseline --type $type --n 2^$k --iters 50; echo; done
    done
} >"$out/variants.txt"

for type in int float; do
    $bin/reduce_all --sweep 2^10:2^29 --type $type --csv >"$out/sweep_$type.csv"
done

if command -v ncu >/dev/null; then
    for stage in reduce1 reduce2 reduce3 reduce4 reduce5 reduce6 reduce7; do
        run scripts/profile.sh $stage
        echo
    done >"$out/profiles.txt" 2>&1
else
    echo "ncu not found: no profiles" | tee "$out/profiles.txt"
fi

{
    for mode in legacy-plain legacy-volatile syncwarp; do
        run $bin/reduce4 --no-baseline --type int --n 2^22 --last-warp $mode || true
        echo
    done
    if command -v compute-sanitizer >/dev/null; then
        for mode in legacy-plain legacy-volatile syncwarp; do
            echo "\$ compute-sanitizer --tool racecheck $bin/reduce4 --no-baseline --type int --n 2^16 --iters 1 --warmup 0 --last-warp $mode"
            compute-sanitizer --tool racecheck $bin/reduce4 --no-baseline --type int --n 2^16 --iters 1 --warmup 0 \
                --last-warp $mode 2>&1 | grep -E "RACECHECK SUMMARY|check|FAIL" || true
        done
    fi
} >"$out/legacy.txt" 2>&1

for stage in reduce0 reduce1 reduce2 reduce3; do
    for block in 256 512; do run $bin/$stage --explain --block $block; echo; done
done >"$out/explain.txt"

if python3 -c "import matplotlib" 2>/dev/null; then
    python3 scripts/plot_sweep.py "$out/sweep_int.csv" "$out/sweep_float.csv" -o docs/img/sweep.png
else
    echo "matplotlib not found: no plot (python3 -m pip install --user matplotlib)"
fi
echo "reproduce_results.sh: done, results in $out"
