#!/usr/bin/env bash
# The measurements of docs/11-fixed-costs.md, in one batch on a GPU machine (about 8
# minutes on an H100): builds, measures, runs the new GPU tests, takes a small Nsight
# Systems timeline, and writes
#   docs/results/small_inputs.csv           every row: floors, stages, CUB (the toolkit's and
#                                           the wheel's), batches in a stream and in a graph,
#                                           reduce7's finishes (pdl, last-block, ...); int and float
#   docs/results/small_inputs_tests.txt     the graph and PDL tests
#   docs/results/small_inputs_one_tile.txt  nsys and ncu: reduce7 and CUB at n = 2^12, where each
#                                           is one launch of one block
#   docs/results/small_inputs_timeline.txt  nsys: reduce7 --finish two-pass and pdl, for each
#                                           reduction when its second pass starts and ends
#                                           relative to the end of its first
#
#   PROGRESS=/tmp/progress scripts/small_inputs_gpu.sh
#   scripts/small_inputs_gpu.sh --timeline-only     # only the build and the timeline
#
# REDUCTION_COMMIT names the commit where the tree is not the checkout's HEAD. Where
# `nsys profile` leaves a .qdstrm it could not import (the Nsight Systems that Nsight Compute
# carries on the lent H100s lacks libdw.so.1), its QdstrmImporter is run, with
# NSYS_EXTRA_LIBS=DIR added to its library path (a folder holding libdw.so.1 and
# libelf.so.1, e.g. Debian's libdw1 and libelf1 unpacked with dpkg -x).
#
# Needs .cccl35/ (the unpacked nvidia-cuda-cccl wheel, scripts/cccl_wheel_build.sh) for the
# newest CUB's rows; without it those rows are left out and the CSV says so.
set -euo pipefail
cd "$(dirname "$0")/.."
progress=${PROGRESS:-/dev/null}
say() { echo "[$(date +%T)] $*" | tee -a "$progress"; }
results=docs/results
csv=$results/small_inputs.csv
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')
gpu=$(nvidia-smi --query-gpu=name,serial --format=csv,noheader | head -1)

say "build: toolkit CCCL (build/small) and the wheel's CCCL (build/cccl), sm_$arch, side by side"
with_wheel=no
if [[ -d .cccl35 ]]; then
    with_wheel=yes
    CUDAARCHS=$arch BUILD_DIR=build/cccl scripts/cccl_wheel_build.sh small_inputs >build/cccl_build.log 2>&1 &
    wheel_build=$!
fi
# shellcheck source=scripts/lib/measure.sh
source scripts/lib/measure.sh  # build_targets
build_targets build/small small_inputs gpu_tests >build/small_build.log 2>&1 || { tail -30 build/small_build.log; exit 3; }
if [[ $with_wheel == yes ]]; then wait $wheel_build || { tail -30 build/cccl_build.log; exit 3; }; fi

small=build/small/bin/small_inputs
timeline_only=no
[[ ${1:-} == --timeline-only ]] && timeline_only=yes
if [[ $timeline_only == no ]]; then
    # Each run's CSV, its header dropped after the first, behind a first column naming the run.
    commands=()
    first=yes
    : >"$csv.tmp"
    measure() {  # SOURCE EXE ARGS...
        local source=$1 exe=$2; shift 2
        say "measure: $source: $(basename "$exe") $*"
        commands+=("$source: $exe $*")
        "$exe" "$@" --csv | awk -v source="$source" -v first=$first \
            'NR == 1 { if (first == "yes") print "source," $0; next } { print source "," $0 }' >>"$csv.tmp"
        first=no
    }
    wheel=build/cccl/bin/small_inputs
    common=(--iters 30 --warmup 3)
    for type in int float; do
        measure toolkit "$small" --type "$type" --sweep 2^10:2^26 --batch 32 "${common[@]}"
        measure toolkit-reduce7-variants "$small" --type "$type" --stages reduce7 --variants --sweep 2^10:2^26 --batch 32 "${common[@]}"
        measure toolkit-plateau "$small" --type "$type" --stages reduce7 --variants --sweep 2^28:2^30 --iters 20 --warmup 2
        if [[ $with_wheel == yes ]]; then
            measure wheel "$wheel" --type "$type" --stages reduce7 --variants --sweep 2^10:2^26 "${common[@]}"
            measure wheel-plateau "$wheel" --type "$type" --stages reduce7 --variants --sweep 2^28:2^30 --iters 20 --warmup 2
        fi
    done
    {
        cat "$csv.tmp"
        echo "# commit: ${REDUCTION_COMMIT:-$(git rev-parse --short HEAD)$(git diff --quiet || echo ' (with uncommitted changes)')}"
        echo "# GPU: $gpu (sm_$arch); $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1) driver"
        echo "# date: $(date -u +%Y-%m-%dT%H:%MZ)"
        echo "# CUB: toolkit rows from build/small ($(grep -m1 'CUB_VERSION [0-9]' "$(dirname "$(command -v nvcc)")/../include/cccl/cub/version.cuh" 2>/dev/null || echo 'toolkit CCCL')); wheel rows from build/cccl (.cccl35: $with_wheel)"
        for c in "${commands[@]}"; do echo "# command: $c --csv"; done
    } >"$csv"
    rm -f "$csv.tmp"
    say "wrote $csv ($(grep -vc '^#' "$csv") lines)"

    say "tests: every stage captured in a graph, reduce7 --finish pdl"
    build/small/bin/gpu_tests --gtest_filter='Graphs/*:Pdl/*:Reduce7Aligned/*pdl*' --gtest_brief=1 \
        >$results/small_inputs_tests.txt 2>&1 && tests=passed || tests=FAILED
    tail -3 $results/small_inputs_tests.txt | tee -a "$progress"
else
    tests=passed  # not run
fi

timeline=$results/small_inputs_timeline.txt
# Nsight Systems' CLI, or the one Nsight Compute carries (the lent H100s have only that one).
# shellcheck source=scripts/lib/nsys.sh
source scripts/lib/nsys.sh
nsys=$(find_nsys)
# nsys_profile NAME ARGS...: build/NAME.nsys-rep from small_inputs ARGS. Where nsys leaves a
# .qdstrm it could not import, its QdstrmImporter makes the report, with NSYS_EXTRA_LIBS on
# the library path (see the header).
nsys_profile() {
    local name=$1; shift
    rm -f build/$name.nsys-rep build/$name.qdstrm
    "$nsys" profile --trace=cuda --force-overwrite=true --output build/$name "$small" "$@" >/dev/null 2>&1 || true
    import_qdstrm "$nsys" build/$name
    return 0  # no report: the stats step below says so in the results file
}
if [[ -n $nsys ]]; then
    say "nsys: reduce7 at n = 2^20 int, --finish two-pass vs pdl, single reductions in a stream"
    {
        echo "# $("$nsys" --version 2>&1 | head -1); GPU: $gpu; commit ${REDUCTION_COMMIT:-$(git rev-parse --short HEAD)}"
        echo "# each row: one reduction's first pass and its one-block second pass (scripts/pass_gaps.py)"
        for finish in two-pass pdl; do
            args=(--stages reduce7 --type int --n 2^20 --finish $finish --iters 40 --warmup 2)
            nsys_profile timeline_$finish "${args[@]}"
            echo "## --finish $finish: $nsys profile --trace=cuda $small ${args[*]}"
            "$nsys" stats --force-export=true --report cuda_gpu_trace --format csv build/timeline_$finish.nsys-rep 2>/dev/null |
                scripts/pass_gaps.py shuffle_vector_single_pass || echo "# pass_gaps.py: no pairs (above)"
        done
    } >"$timeline"
    say "wrote $timeline"

    # At n = 2^12 reduce7 and CUB are both one launch of one block, and CUB is faster (docs/11,
    # section 11.3): is the difference on the GPU or on the host? Each kernel's duration
    # (nsys, 200 timed runs) and, from Nsight Compute, what each executes.
    one_tile=$results/small_inputs_one_tile.txt
    say "nsys and ncu: reduce7 and CUB at n = 2^12, int and float"
    {
        echo "# reduce7 (default finish) and CUB's single-tile kernel at n = 2^12: each kernel's duration, then Nsight Compute"
        echo "# GPU: $gpu; commit ${REDUCTION_COMMIT:-$(git rev-parse --short HEAD)}; $(date -u '+%Y-%m-%d %H:%M UTC')"
        for type in int float; do
            args=(--stages reduce7 --type $type --n 2^12 --iters 200 --warmup 5)
            nsys_profile one_tile_$type "${args[@]}"
            echo "## $type: kernel durations (cuda_gpu_kern_sum): $nsys profile --trace=cuda $small ${args[*]}"
            "$nsys" stats --force-export=true --report cuda_gpu_kern_sum --format csv build/one_tile_$type.nsys-rep 2>/dev/null |
                grep -E 'Med \(ns\)|shuffle_vector_single_pass|SingleTile|one_tile_sum' >build/one_tile_$type.csv || true
            cat build/one_tile_$type.csv
            # Instances and Med (ns) are the 3rd and 5th fields; only the quoted name holds commas.
            awk -F, -v type=$type '/shuffle_vector_single_pass|SingleTile|one_tile_sum/ {
                name = $0 ~ /SingleTile/ ? "DeviceReduceSingleTileKernel" : $0 ~ /one_tile_sum/ ? "one_tile_sum" : "shuffle_vector_single_pass"
                printf "# median of %s, %s: %.2f us (%d launches)\n", name, type, $5 / 1000, $3 }' build/one_tile_$type.csv
        done
        ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || true)
        if [[ -n $ncu ]]; then
            args=(--stages reduce7 --type int --n 2^12 --iters 3 --warmup 1)
            kernels='shuffle_vector|SingleTile|one_tile_sum'
            echo "## int: Nsight Compute, every launch of the three (base clocks), the last of each shown: $ncu --kernel-name regex:'$kernels' ... $small ${args[*]}"
            "$ncu" --log-file build/one_tile_ncu.csv --csv --page details --kernel-name regex:"$kernels" \
                --section LaunchStats --section SpeedOfLight --section InstructionStats \
                "$small" "${args[@]}" >/dev/null 2>&1 || true
            # The last launch's value of each (kernel, metric); names cut at their parameter list.
            grep -E '"(Duration|Elapsed Cycles|Executed Instructions|Registers Per Thread|Grid Size|Block Size)"' build/one_tile_ncu.csv |
                awk -F'","' '{ sub(/\(.*/, "", $5); sub(/",?$/, "", $15); key = $5 " | " $13
                               if (!(key in value)) order[++n] = key; value[key] = $15 " " $14 }
                             END { for (i = 1; i <= n; ++i) print order[i] " = " value[order[i]] }' || true
            grep '"Executed Instructions"' build/one_tile_ncu.csv |
                awk -F'","' '{ name = $5 ~ /SingleTile/ ? "DeviceReduceSingleTileKernel" : $5 ~ /one_tile_sum/ ? "one_tile_sum" : "shuffle_vector_single_pass"
                               v = $15; gsub(/[",]/, "", v); if (!(name in value)) order[++n] = name; value[name] = v }
                             END { for (i = 1; i <= n; ++i) printf "# executed instructions, %s: %s\n", order[i], value[order[i]] }' || true
        fi
    } >"$one_tile"
    say "wrote $one_tile"
else
    echo "# nsys not found on $gpu: no timeline" >"$timeline"
    say "nsys not found: no timeline"
fi
say "done: tests $tests"
[[ $tests == passed ]]
