#!/usr/bin/env bash
# Re-measures every GPU figure that README.md and docs/ quote, on this machine's GPU, with
# the release build (build it first: README.md). Each output file starts with the command
# that produced it, or (CSV) is named with it below.
#
#   scripts/reproduce_results.sh [OUTDIR [PART ...]]     # default: docs/results, every part
#
# PARTs and what they write into OUTDIR:
#   readme     readme_table.txt    reduce_all at its defaults (the README's first command)
#   results    results.csv         reduce_all --variants at 2^20, 2^22 ... 2^28, int and float,
#                                  100 timed runs each, three repetitions (the spread)
#   targets    targets.csv         reduce7, CUB and the copy at 2^20 ... 2^29, three repetitions
#   rounding   rounding.csv        reduce_all --variants --data uniform, float and double, 2^20 ... 2^28
#   sweeps     sweep_int.csv, sweep_float.csv   reduce_all --sweep 2^10:2^29
#   profiles   profiles.txt, profiles.csv       scripts/profile.sh reduce1 ... reduce7 (needs ncu)
#   legacy     legacy.txt          reduce4's legacy last warp: sums, racecheck (needs compute-sanitizer)
#   explain    explain.txt         reduce0 ... reduce3 --explain
#   sass       sass_*.txt          scripts/sass.sh: the SASS the chapters quote (needs cuobjdump)
#   timeline   timeline.txt        scripts/timeline.sh (needs nsys)
#   launches   launches.txt        the kernels each stage launches in one run, from Nsight Compute
#   latency    latency.csv         dram_latency: one load's latency from DRAM and from L2
#   large      large_sizes.txt, large_sizes.csv   reduce_all at 2^32 + 5 int and float (input
#                                  made on the GPU, timed), and too_large.txt: what a request
#                                  larger than the GPU gets
#   ops        ops.csv, ops_repeats.csv, ops_2_30.csv, nan_table.txt, library_float.csv,
#                                  runner_op.txt, ops_profiles.txt   reduce_ops --op all
#                                  --type all at 2^20 ... 2^28 against CUB (three runs) and at
#                                  2^30, its NaN table, reduce_all's float sweep with the
#                                  library stages, reduce_all --op, and Nsight Compute's
#                                  counters for argmax (docs/10-your-own-reduction.md)
#   plot       docs/img/sweep.svg  from the sweeps (scripts/lib/svg_plot.py, no package needed)
# and always environment.txt (environment_PARTS.txt for some parts only): GPU, driver,
# CUDA, commit, date.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/results}
shift || true
parts=${*:-readme results targets rounding sweeps profiles legacy explain sass timeline launches latency large ops plot}
bin=build/release/bin
[[ -x $bin/reduce_all ]] || { echo "reproduce_results.sh: $bin/reduce_all not found: build first (README.md)" >&2; exit 3; }
mkdir -p "$out"

# environment.txt describes a run of every part; a run of some parts gets its own file,
# so that it does not relabel the files it did not write.
environment=environment.txt
[[ $# -gt 0 ]] && environment="environment_${parts// /_}.txt"

# shellcheck source=scripts/lib/measure.sh
source scripts/lib/measure.sh  # wanted, run, csv_into
# A command's CSV with a first column "repetition" holding $1.
with_repetition() {
    local repetition=$1
    shift
    "$@" | awk -v r="$repetition" 'NR == 1 { print "repetition," $0; next } { print r "," $0 }'
}

{
    date -u '+%Y-%m-%d %H:%M UTC'
    nvidia-smi --query-gpu=name,serial,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader
    nvcc --version | tail -1
    echo "commit ${REDUCTION_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
    echo "parts: $parts"
} >"$out/$environment"
cat "$out/$environment"

# Bring the GPU's clocks up before the first figure that counts.
$bin/reduce_all --n 2^28 --iters 5 --warmup 1 >/dev/null

if wanted readme; then run $bin/reduce_all | tee "$out/readme_table.txt"; fi

if wanted results; then
    rm -f "$out/results.csv"
    for repetition in 1 2 3; do
        for type in int float; do
            for k in 20 22 24 26 28; do
                csv_into "$out/results.csv" $bin/reduce_all --variants --type $type --n 2^$k --iters 100 --csv
            done
        done
    done
fi

if wanted targets; then
    rm -f "$out/targets.csv"
    for repetition in 1 2 3; do
        for type in int float; do
            for k in 20 21 22 24 26 28 29; do
                csv_into "$out/targets.csv" $bin/reduce7 --no-baseline --type $type --n 2^$k --iters 100 --csv
            done
        done
    done
fi

if wanted rounding; then
    rm -f "$out/rounding.csv"
    for type in float double; do
        for k in 20 22 24 26 28; do
            csv_into "$out/rounding.csv" $bin/reduce_all --variants --data uniform --type $type --n 2^$k --iters 20 --csv
        done
    done
fi

if wanted sweeps; then
    for type in int float; do
        $bin/reduce_all --sweep 2^10:2^29 --type $type --csv >"$out/sweep_$type.csv"
    done
fi

if wanted profiles; then
    if command -v ncu >/dev/null; then
        rm -f "$out/profiles.csv"
        # Every stage after the baseline (profile.sh sets each beside the one before it).
        for stage in $($bin/reduce_all --list-stages | tail -n +2); do
            run scripts/profile.sh $stage
            echo
            csv_into "$out/profiles.csv" scripts/profile.sh $stage --csv
        done >"$out/profiles.txt" 2>&1
    else
        echo "ncu not found: no profiles" | tee "$out/profiles.txt"
    fi
fi

if wanted legacy; then
    {
        cat "$out/environment.txt"
        for mode in legacy-plain legacy-volatile syncwarp; do
            run $bin/reduce4 --no-baseline --type int --n 2^22 --last-warp $mode || true
            echo
        done
        if command -v compute-sanitizer >/dev/null; then
            # The default (analysis) report aggregates; --racecheck-report hazard counts every hazard.
            for report in analysis hazard; do
                for mode in legacy-plain legacy-volatile syncwarp; do
                    echo "\$ compute-sanitizer --tool racecheck --racecheck-report $report $bin/reduce4 --no-baseline" \
                        "--type int --n 2^16 --iters 1 --warmup 0 --last-warp $mode"
                    compute-sanitizer --tool racecheck --racecheck-report $report $bin/reduce4 --no-baseline --type int \
                        --n 2^16 --iters 1 --warmup 0 --last-warp $mode 2>&1 | grep -E "RACECHECK SUMMARY|^reduce4 " || true
                done
            done
        fi
    } >"$out/legacy.txt" 2>&1
fi

if wanted explain; then
    for stage in reduce0 reduce1 reduce2 reduce3; do
        for block in 256 512; do run $bin/$stage --explain --block $block; echo; done
    done >"$out/explain.txt"
fi

if wanted sass; then
    if command -v cuobjdump >/dev/null; then
        # The kernels for int; reduce0 with its % and with the bit mask, reduce4 with __syncwarp()
        # and its two legacy last warps, reduce6 and reduce7 (vec=4) at block 256.
        run scripts/sass.sh reduce0 'interleaved_divergent<int, (Select)0>' >"$out/sass_reduce0_modulo.txt"
        run scripts/sass.sh reduce0 'interleaved_divergent<int, (Select)1>' >"$out/sass_reduce0_bitmask.txt"
        run scripts/sass.sh reduce1 'interleaved_convergent<int>' >"$out/sass_reduce1.txt"
        run scripts/sass.sh reduce4 'unroll_last_warp<int, (LastWarp)0>' >"$out/sass_reduce4_syncwarp.txt"
        run scripts/sass.sh reduce4 'unroll_last_warp<int, (LastWarp)1>' >"$out/sass_reduce4_legacy_volatile.txt"
        run scripts/sass.sh reduce4 'unroll_last_warp<int, (LastWarp)2>' >"$out/sass_reduce4_legacy_plain.txt"
        run scripts/sass.sh reduce6 'grid_stride<256u, int>' >"$out/sass_reduce6.txt"
        run scripts/sass.sh reduce7 'shuffle_vector_single_pass<512u, 4, int>' >"$out/sass_reduce7.txt"
    else
        echo "cuobjdump not found: no SASS" | tee "$out/sass_reduce1.txt"
    fi
fi

if wanted timeline; then
    { run scripts/timeline.sh --n 2^24 --type int || echo "timeline.sh failed (exit $?)"; } >"$out/timeline.txt" 2>&1
    # shellcheck source=scripts/lib/provenance.sh
    source scripts/lib/provenance.sh
    provenance "scripts/timeline.sh --n 2^24 --type int" >>"$out/timeline.txt"
fi

if wanted launches; then
    if command -v ncu >/dev/null; then
        # Each stage's runs sit in an NVTX range "<stage> <kernel> ..." (common/timing.h);
        # ncu lists every kernel launched inside it, in order: the L2 flush, then the stage's.
        for stage in $($bin/reduce_all --list-stages) cub; do
            echo "\$ ncu --clock-control none --nvtx --nvtx-include 'regex:^$stage .*/' --metrics gpu__time_duration.sum" \
                "$bin/reduce_all --n 2^24 --type int --iters 1 --warmup 0"
            ncu --clock-control none --nvtx --nvtx-include "regex:^$stage .*/" --metrics gpu__time_duration.sum \
                $bin/reduce_all --n 2^24 --type int --iters 1 --warmup 0 2>&1 |
                grep -E "^  [a-zA-Z_(].*\(|gpu__time_duration"
            echo
        done >"$out/launches.txt"
    else
        echo "ncu not found: no launches" | tee "$out/launches.txt"
    fi
fi

if wanted latency; then
    $bin/dram_latency >"$out/latency.csv"
    # shellcheck source=scripts/lib/provenance.sh
    source scripts/lib/provenance.sh
    provenance "$bin/dram_latency" >>"$out/latency.csv"
fi

if wanted large; then
    # Past 2^32 elements: every stage, CUB and the copy (when a second array fits).
    rm -f "$out/large_sizes.csv"
    {
        for type in int float; do
            run $bin/reduce_all --n 4294967301 --type $type --iters 10 --warmup 2
            csv_into "$out/large_sizes.csv" $bin/reduce_all --n 4294967301 --type $type --iters 10 --warmup 2 --csv
        done
    } | tee "$out/large_sizes.txt"
    {
        for args in "reduce7 --n 2^40" "reduce_all --sweep 2^20:2^38 --type double"; do
            echo "\$ $args"
            # shellcheck disable=SC2086
            $bin/$args && status=0 || status=$?
            echo "exit status $status"
        done
    } >"$out/too_large.txt" 2>&1
    cat "$out/too_large.txt"
fi

if wanted ops; then
    if [[ -x $bin/reduce_ops ]]; then
        $bin/reduce_ops --nan-table >"$out/nan_table.txt"
        $bin/reduce_ops --op all --type all --sizes 2^20:2^28 --csv >"$out/ops.csv"
        # Two more runs of the whole comparison, for the run-to-run spread of x CUB; the
        # first column says which (ops.csv is repetition 1).
        rm -f "$out/ops_repeats.csv"
        for repetition in 2 3; do
            csv_into "$out/ops_repeats.csv" with_repetition $repetition \
                $bin/reduce_ops --op all --type all --sizes 2^20:2^28 --csv
        done
        # Past the target's sizes: 2^30 elements (8 GiB of int64 or double), ten timed runs.
        $bin/reduce_ops --op all --type all --n 2^30 --iters 10 --csv >"$out/ops_2_30.csv" ||
            echo "reduce_ops --n 2^30: exit status $? (too large for this GPU?): ops_2_30.csv incomplete"
        $bin/reduce_all --sweep 2^20:2^28 --type float --no-baseline --csv >"$out/library_float.csv"
        run $bin/reduce_all --op argmax --type half,float --n 2^28 >"$out/runner_op.txt"
        if command -v ncu >/dev/null; then
            for profile in "argmax half 2^28" "argmax bfloat16 2^28" "argmax float 2^22" "absmax half 2^24" "min half 2^26"; do
                # shellcheck disable=SC2086  # $profile is the script's three arguments
                run scripts/profile_ops.sh $profile
                echo
            done >"$out/ops_profiles.txt"
        else
            echo "ncu not found: no ops_profiles.txt"
        fi
    else
        echo "reduce_ops not built (ops/): no ops part"
    fi
fi

if wanted plot; then
    python3 scripts/plot_sweep.py "$out/sweep_int.csv" "$out/sweep_float.csv" -o docs/img/sweep.svg
fi
echo "reproduce_results.sh: done ($parts), results in $out"
