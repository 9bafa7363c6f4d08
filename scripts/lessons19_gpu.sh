#!/usr/bin/env bash
# Every GPU measurement of issue 19's items 3 and 5, in one run (about 6 minutes on an
# H100): builds the release tree, then writes into docs/results (and docs/img):
#
#   item 3, bank conflicts (docs/02-bank-conflicts.md)
#     profile_reduce2.csv   scripts/profile.sh reduce2 --csv: reduce1, reduce0 --select
#                     bitmask and reduce2 at 2^22 int, with the stall counters
#     source_conflicts.csv   scripts/source_conflicts.sh: shared wavefronts per SASS instruction
#   item 5, bytes in flight (docs/05, 06, 07)
#     loads_sweep.csv, loads_ncu.csv   scripts/loads_sweep.sh (reduce7 --loads)
#     loaded_latency.csv   build/release/bin/dram_latency --loaded
#     ../img/loads_sweep.svg   scripts/plot_loads.py
#     sass_reduce6.txt, sass_reduce7.txt, sass_reduce4_legacy_plain.txt (the kernels the
#     chapters quote, again from this build), sass_reduce7_loads1.txt,
#     sass_reduce7_loads16.txt
#   environment_lessons19.txt   GPU, driver, CUDA, ncu, commit, date, the steps' status
#
#   PROGRESS=/tmp/progress.txt scripts/lessons19_gpu.sh
#
# Each step runs in its own bash (set -euo pipefail there); a failed step is logged and
# named in environment_lessons19.txt, the others still run, and the exit status is 1.
# Environment: PROGRESS (a file that gets one line per step; default /dev/null), LOGS
# (default build/lessons19-logs), OUT (if set, as on the device machine, the results and
# logs are copied there at the end). Measure from a clean tree: the files name HEAD.
set -euo pipefail
cd "$(dirname "$0")/.."
progress=${PROGRESS:-/dev/null}
logs=${LOGS:-build/lessons19-logs}
results=docs/results
mkdir -p "$logs" "$results" docs/img
started=$(date +%s)
note() { echo "[$(($(date +%s) - started)) s] $*" | tee -a "$progress" >&2; }

# The steps: each a function, exported, so that each runs in a fresh bash where
# set -e holds (inside `f || ...` bash ignores set -e, so a step must not run that way).
step_build() {
    # The release build of the scripts (build/release), for this machine's GPU only
    # (CMakeLists.txt asks nvidia-smi): these targets only, no tests.
    source scripts/lib/measure.sh
    build_targets build/release reduce0 reduce1 reduce2 reduce4 reduce6 reduce7 dram_latency
}
step_profile_reduce2() {
    source scripts/lib/provenance.sh
    scripts/profile.sh reduce2 --csv >docs/results/profile_reduce2.csv
    provenance "scripts/profile.sh reduce2 --csv ($(ncu --version | tail -1))" >>docs/results/profile_reduce2.csv
}
step_source_conflicts() {
    source scripts/lib/provenance.sh
    scripts/source_conflicts.sh --keep "$LOGS/source_reports" >docs/results/source_conflicts.csv
    provenance "scripts/source_conflicts.sh ($(ncu --version | tail -1))" >>docs/results/source_conflicts.csv
}
step_loads_sweep() { REPEATS=${REPEATS:-2} scripts/loads_sweep.sh docs/results sweep; }  # two: the spread
step_loads_ncu() { scripts/loads_sweep.sh docs/results ncu; }
step_loaded_latency() {
    source scripts/lib/provenance.sh
    build/release/bin/dram_latency --loaded >docs/results/loaded_latency.csv
    provenance "build/release/bin/dram_latency --loaded" >>docs/results/loaded_latency.csv
}
step_plot() { python3 scripts/plot_loads.py docs/results/loads_sweep.csv -o docs/img/loads_sweep.svg; }
step_sass() {
    local arch
    arch=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
    # NAME|INSTANTIATION: the kernels for int at block 256 (reduce7 at vec=4).
    local kernels=(
        "reduce6|grid_stride<256u, int>"
        "reduce7|shuffle_vector_single_pass<256u, 4, int>"
        "reduce4_legacy_plain|unroll_last_warp<int, (LastWarp)2>"
        "reduce7_loads1|shuffle_vector_single_pass<256u, 4, int, 1>"
        "reduce7_loads16|shuffle_vector_single_pass<256u, 4, int, 16>"
    )
    local entry name instantiation stage
    for entry in "${kernels[@]}"; do
        IFS='|' read -r name instantiation <<<"$entry"
        stage=${name%%_*}
        { echo "\$ scripts/sass.sh $stage $instantiation --arch $arch"; scripts/sass.sh "$stage" "$instantiation" --arch "$arch"; } \
            >"docs/results/sass_$name.txt"
        # An instantiation that is not in the library prints no function: an empty file is a failure.
        grep -q "Function : " "docs/results/sass_$name.txt" || { echo "sass: no function '$instantiation' in $stage" >&2; return 1; }
    done
}
export -f step_build step_profile_reduce2 step_source_conflicts step_loads_sweep step_loads_ncu step_loaded_latency \
    step_plot step_sass
export LOGS=$logs

failed=()
for step in build sass profile_reduce2 source_conflicts loaded_latency loads_ncu loads_sweep plot; do
    note "start $step (log $logs/$step.log)"
    if bash -c "set -euo pipefail; step_$step" >"$logs/$step.log" 2>&1; then
        note "done $step"
    else
        note "FAILED $step (exit $?): $(tail -3 "$logs/$step.log" | tr '\n' ' ')"
        failed+=("$step")
        [[ $step == build ]] && break  # nothing else can run
    fi
done

{
    echo "scripts/lessons19_gpu.sh: issue 19 items 3 and 5 (see the script's header for the files)"
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); took $(($(date +%s) - started)) s"
    nvidia-smi --query-gpu=name,serial,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader
    nvcc --version | tail -1
    echo "ncu: $(ncu --version 2>/dev/null | tail -1)"
    echo "commit ${REDUCTION_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}$(git diff --quiet HEAD -- . ':!docs' 2>/dev/null || echo ' (code changed since)')"
    echo "failed steps: ${failed[*]:-none}"
} >"$results/environment_lessons19.txt"
cat "$results/environment_lessons19.txt" >>"$progress"

if [[ -n ${OUT:-} ]]; then
    mkdir -p "$OUT/docs/results" "$OUT/docs/img" "$OUT/logs"
    cp "$results"/{environment_lessons19.txt,profile_reduce2.csv,source_conflicts.csv,loads_sweep.csv,loads_ncu.csv,loaded_latency.csv,sass_*.txt} \
        "$OUT/docs/results/" 2>/dev/null || true
    cp docs/img/loads_sweep.svg "$OUT/docs/img/" 2>/dev/null || true
    cp -r "$logs"/. "$OUT/logs/"
fi
note "finished; failed steps: ${failed[*]:-none}"
[[ ${#failed[@]} -eq 0 ]]
