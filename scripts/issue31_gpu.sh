#!/usr/bin/env bash
# Everything issue 31 needs from one GPU machine, in one go (about 5-8 minutes on an H100):
#
#   scripts/issue31_gpu.sh OUTDIR
#
# Steps, each one's output in OUTDIR and one line in OUTDIR/summary.txt (ok or FAILED);
# a failed step is recorded and the next one runs:
#   build     cmake --build build/release --target grid_layout_probe reduce7 (configures the
#             release preset first if build/release is missing)
#   grid      reduce7_grid.csv: reduce7 --grid resident and one-shot, --finish atomic, last-block
#             and two-pass, int and float, 2^26 2^28 2^30, --timing flushed and back-to-back
#             (CUB in the same runs)
#   sweep     loads_sweep.csv: scripts/loads_sweep.sh's sweep (every --loads, 2^22 ... 2^30;
#             since 39b7372 the 8 and 16 variants keep all their loads in flight)
#   probe     grid_layout.csv: grid_layout_probe, int and float, 2^26, 2^28, 2^30, every layout
#   loads     grid_layout_loads.csv: the probe's loads-N kernels (all N loads issued first),
#             int, 2^28 and 2^30
#   sass      sass_loads.txt: 16-byte loads issued before the first use, in reduce7's --loads
#             kernels and the probe's (scripts/count_loads_before_use.sh; needs cuobjdump)
#   reduce7   reduce7_cub.csv: reduce7 and CUB's DeviceReduce::Sum (and the device copy) in
#             the same run, the harness's flushed timing, 100 runs, int and float, 3 sizes
#   peers     peers.csv: torch.sum and cupy.sum (scripts/peers.py; says so if neither is installed)
#   finishes  reduce7_finishes.csv: reduce7 --block 512, float and double, --finish last-block
#             on --grid resident and one-shot, 2^24 ... 2^30, both methods
#   shapes    reduce7_shapes.csv: reduce7 --grid one-shot --finish atomic, int 2^30, with
#             --block 256, 512, 1024 and --loads 1, 2, 8, 16: which tile a one-block-per-tile
#             grid reads fastest, both methods
#   blocks    reduce7_blocks.csv: reduce7's defaults at --block 256, 512, 1024, int and float,
#             2^26-2^30, both methods
#   public    public_kernels.txt: effective_reduction's kernel_9 and fast.cu's sum, from the
#             copies in build/public/ (scripts/public_kernels.sh --stage put them there), as
#             published; public_timed.csv: their launch functions under both of the harness's
#             methods; public_reduce7.csv: reduce7's int default, both methods, 2^26-2^30,
#             run before and after them (the drift over the step shows in the two)
#   counted   counted_probe.csv: grid_layout_probe, int, 2^26 2^28 2^30, one-shot-512x4 (the
#             result never zeroed), +memset (zeroed by a memset node before every launch, as
#             reduce7's atomic finish) and +counted (a finish that needs no memset: a total and
#             a count in the workspace, reset by the last block), both methods
#   cub       like_for_like.csv: small_inputs --stages reduce7 beside CUB, 2^13 ... 2^30, int
#             and float, --block 256 and 512, both methods, built against the toolkit's CCCL
#             (build/release) and, where .cccl35/ holds the unpacked nvidia-cuda-cccl wheel,
#             against the wheel's (build/cccl; scripts/cccl_wheel_build.sh)
#   ncu       grid_layout_ncu.csv, ncu_dram_metrics.txt (scripts/grid_probe.sh ... ncu)
#   trace     block_trace_resident-stride.csv, block_trace_one-shot.csv
# Without network: carry build/public (ignored by git) with the working tree.
# STEPS="build grid ..." runs only those steps (default: all, in the order above).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 3
[[ $# -eq 1 ]] || { echo "usage: scripts/issue31_gpu.sh OUTDIR" >&2; exit 2; }
out=$1
mkdir -p "$out"
build=build/release
summary=$out/summary.txt
steps=" ${STEPS:-build grid finishes shapes blocks sweep probe loads sass reduce7 peers counted cub public ncu trace} "
want() { [[ $steps == *" $1 "* ]]; }
# shellcheck source=scripts/lib/measure.sh
source scripts/lib/measure.sh  # labelled_rows, build_targets
: >"$summary"
start_all=$SECONDS
# step NAME COMMAND...: runs it with its output in OUTDIR/NAME.log, records ok/FAILED and the time.
step() {
    local name=$1 start=$SECONDS rc
    shift
    echo "issue31_gpu.sh: $name ..." >&2
    "$@" >"$out/$name.log" 2>&1
    rc=$?
    local line
    if (( rc == 0 )); then line="ok"; else line="FAILED (exit $rc): $(tail -1 "$out/$name.log")"; fi
    printf '%-8s %4ds  %s\n' "$name" $((SECONDS - start)) "$line" | tee -a "$summary" >&2
}

do_build() { build_targets "$build" grid_layout_probe reduce7; }

do_loads() {
    "$build/bin/grid_layout_probe" --type int --n 2^28 --n 2^30 --loads \
        --only resident-stride,one-shot,resident-stride-loads1,resident-stride-loads2,resident-stride-loads4,resident-stride-loads8,resident-stride-loads16,one-shot-loads1,one-shot-loads2,one-shot-loads4,one-shot-loads8,one-shot-loads16 \
        >"$out/grid_layout_loads.csv" || return
    # shellcheck source=scripts/lib/provenance.sh
    source scripts/lib/provenance.sh
    provenance "scripts/issue31_gpu.sh $out (loads)" >>"$out/grid_layout_loads.csv"
}

do_sass() {
    local f=$out/sass_loads.txt
    : >"$f"
    local t l
    for t in int float; do
        for l in "" ", 1" ", 2" ", 8" ", 16"; do
            scripts/count_loads_before_use.sh "$build/bin/reduce7" "shuffle_vector_single_pass<256u, 4, $t$l>(" --arch sm_90 >>"$f" || return
        done
        for k in "strided_tiles<256u, 4, $t>(" "contiguous_tiles<256u, 4, $t>(" "consecutive_vectors<512u, 3, $t>("; do
            scripts/count_loads_before_use.sh "$build/bin/grid_layout_probe" "$k" --arch sm_90 >>"$f" || return
        done
        for l in 1 2 4 8 16; do
            scripts/count_loads_before_use.sh "$build/bin/grid_layout_probe" "strided_tiles_all_loads_first<256u, $l, $t>(" --arch sm_90 >>"$f" || return
        done
    done
    cat "$f"
}

do_reduce7() {
    local csv=$out/reduce7_cub.csv first=1 t k
    : >"$csv"
    for t in int float; do
        for k in 26 28 30; do
            "$build/bin/reduce7" --no-baseline --type "$t" --n "2^$k" --iters 100 --warmup 20 --csv >"$out/reduce7.tmp" || return
            if (( first )); then cat "$out/reduce7.tmp"; else tail -n +2 "$out/reduce7.tmp"; fi >>"$csv"
            first=0
        done
    done
    rm -f "$out/reduce7.tmp"
    # shellcheck source=scripts/lib/provenance.sh
    source scripts/lib/provenance.sh
    provenance "scripts/issue31_gpu.sh $out (reduce7 --no-baseline --iters 100 --warmup 20 --csv)" >>"$csv"
}

# reduce7_rows CSV METHOD ARGS...: one reduce7 run (--timing METHOD: 100 flushed runs, or 10
# batches of 100 back to back; 20 warm-ups) appended to CSV with a first column naming the
# method; the header only into an empty CSV.
reduce7_rows() {
    local csv=$1 m=$2
    shift 2
    "$build/bin/reduce7" --no-baseline "$@" --timing "$m" --iters "$([[ $m == flushed ]] && echo 100 || echo 10)" \
        --warmup 20 --csv >"$out/reduce7_rows.tmp" || return
    labelled_rows "$csv" timing "$m" "$out/reduce7_rows.tmp"
    rm -f "$out/reduce7_rows.tmp"
}


# reduce7's grid (--grid resident | one-shot) under each finish, int and float, both timing
# methods, beside CUB in the same runs.
do_grid() {
    local csv=$out/reduce7_grid.csv t k g f m
    : >"$csv"
    for m in flushed back-to-back; do
        for t in int float; do
            for k in 26 28 30; do
                for g in resident one-shot; do
                    for f in atomic last-block two-pass; do
                        reduce7_rows "$csv" "$m" --type "$t" --n "2^$k" --grid "$g" --finish "$f" || return
                    done
                done
            done
        done
    done
    # shellcheck source=scripts/lib/provenance.sh
    source scripts/lib/provenance.sh
    provenance "scripts/issue31_gpu.sh $out (grid: reduce7 --grid G --finish F --timing M --iters 100 flushed, 10 batches of 100 back-to-back --warmup 20 --csv)" >>"$csv"
}

# float's and double's deterministic default, last-block, at block 512 on either grid (the
# resident one, and one block per tile, where its partials add up by groups), 2^24 ... 2^30,
# both methods: where the default's switch to one block per tile (a long input:
# reduce7/variants.cuh, kLongInputWaves) should be (issue 31).
do_finishes() {
    local csv=$out/reduce7_finishes.csv run n
    local sizes="16777216 67108864 100663296 134217728 201326592 268435456" runs=()
    for n in $sizes 1073741824; do runs+=("float $n"); done
    for n in $sizes; do runs+=("double $n"); done
    : >"$csv"
    for run in "${runs[@]}"; do
        # shellcheck disable=SC2086 # "TYPE N", two words
        set -- $run
        for m in flushed back-to-back; do
            reduce7_rows "$csv" "$m" --type "$1" --n "$2" --block 512 --finish last-block --grid resident || return
            reduce7_rows "$csv" "$m" --type "$1" --n "$2" --block 512 --finish last-block --grid one-shot || return
        done
    done
    # shellcheck source=scripts/lib/provenance.sh
    source scripts/lib/provenance.sh
    provenance "scripts/issue31_gpu.sh $out (finishes: reduce7 --type T --n N --block 512 --finish F --grid G, both methods)" >>"$csv"
}

# The tile a one-block-per-tile grid reads fastest: reduce7's block and loads, int 2^30.
do_shapes() {
    local csv=$out/reduce7_shapes.csv m shape
    : >"$csv"
    for m in flushed back-to-back; do
        for shape in "--block 256" "--block 512" "--block 1024" "--loads 1" "--loads 2" "--loads 8" "--loads 16"; do
            # shellcheck disable=SC2086 # the shape is two words
            reduce7_rows "$csv" "$m" --type int --n 2^30 --grid one-shot --finish atomic $shape || return
        done
    done
    # shellcheck source=scripts/lib/provenance.sh
    source scripts/lib/provenance.sh
    provenance "scripts/issue31_gpu.sh $out (shapes: reduce7 --type int --n 2^30 --grid one-shot --finish atomic --block B | --loads L, both methods)" >>"$csv"
}

# reduce7's defaults (int: one block per tile; float: last-block, fixed grid) at --block
# 256, 512 and 1024, int and float, 2^26-2^30, both methods.
do_blocks() {
    local csv=$out/reduce7_blocks.csv m t k b
    : >"$csv"
    for m in flushed back-to-back; do
        for t in int float; do
            for k in 26 28 30; do
                for b in 256 512 1024; do reduce7_rows "$csv" "$m" --type "$t" --n "2^$k" --block "$b" || return; done
            done
        done
    done
    # shellcheck source=scripts/lib/provenance.sh
    source scripts/lib/provenance.sh
    provenance "scripts/issue31_gpu.sh $out (blocks: reduce7 --type T --n 2^K --block B, defaults otherwise, both methods)" >>"$csv"
}

# reduce7's int default, both methods, 2^26-2^30, into CSV.
reduce7_default_int() {
    local csv=$1 m k
    for m in flushed back-to-back; do
        for k in 26 28 30; do reduce7_rows "$csv" "$m" --type int --n "2^$k" || return; done
    done
}

do_public() {
    local csv=$out/public_reduce7.csv
    : >"$csv"
    reduce7_default_int "$csv" || return
    scripts/public_kernels.sh build/public/effective_reduction build/public/fast.cu "$out" || return
    reduce7_default_int "$csv" || return
    # shellcheck source=scripts/lib/provenance.sh
    source scripts/lib/provenance.sh
    provenance "scripts/issue31_gpu.sh $out (public: reduce7 --type int --n 2^K, both methods, before and after scripts/public_kernels.sh)" >>"$csv"
}

do_counted() {
    local csv=$out/counted_probe.csv
    "$build/bin/grid_layout_probe" --type int --n 2^26 --n 2^28 --n 2^30 \
        --only one-shot-512x4,one-shot-512x4+memset,one-shot-512x4+counted >"$csv" || return
    # shellcheck source=scripts/lib/provenance.sh
    source scripts/lib/provenance.sh
    provenance "scripts/issue31_gpu.sh $out (counted)" >>"$csv"
}

# reduce7 beside CUB at every size from 2^13 (one CSV, a first column naming the build).
do_cub() {
    local csv=$out/like_for_like.csv builds=(release) b t blk m
    build_targets "$build" small_inputs || return
    if [[ -d .cccl35 ]]; then
        BUILD_DIR=build/cccl scripts/cccl_wheel_build.sh small_inputs >"$out/cccl_build.log" 2>&1 || return
        builds+=(cccl)
    fi
    : >"$csv"
    for b in "${builds[@]}"; do
        for m in flushed back-to-back; do
            for t in int float; do
                for blk in 256 512; do
                    "build/$b/bin/small_inputs" --stages reduce7 --no-baseline --type "$t" --block "$blk" --sweep 2^13:2^30 \
                        --timing "$m" --iters "$([[ $m == flushed ]] && echo 30 || echo 10)" --warmup 3 --csv \
                        >"$out/cub.tmp" || return
                    labelled_rows "$csv" build,timing "$b,$m" "$out/cub.tmp"
                done
            done
        done
    done
    rm -f "$out/cub.tmp"
    # shellcheck source=scripts/lib/provenance.sh
    source scripts/lib/provenance.sh
    provenance "scripts/issue31_gpu.sh $out (cub: small_inputs --stages reduce7 --no-baseline --type T --block B --sweep 2^13:2^30 --timing M --iters 30 flushed, 10 batches of 100 back-to-back --warmup 3 --csv; builds: ${builds[*]})" >>"$csv"
}

do_peers() {
    # torch cannot tell the memory clock: give it the probe's peak.
    local peak
    peak=$(sed -n 's/^# peak: \([0-9.]*\) GB\/s.*/\1/p' "$out/grid_layout.csv" 2>/dev/null | head -1)
    python3 scripts/peers.py ${peak:+--peak-gbps "$peak"} >"$out/peers.csv"
}

want build && step build do_build
want grid && step grid do_grid
want finishes && step finishes do_finishes
want shapes && step shapes do_shapes
want blocks && step blocks do_blocks
want sweep && step sweep env ITERS=100 scripts/loads_sweep.sh "$out" sweep
want probe && step probe scripts/grid_probe.sh "$out" probe
want loads && step loads do_loads
if want sass; then
    if command -v cuobjdump >/dev/null; then step sass do_sass; else echo "sass     skipped: cuobjdump not found" | tee -a "$summary" >&2; fi
fi
want reduce7 && step reduce7 do_reduce7
want peers && step peers do_peers
want counted && step counted do_counted
want cub && step cub do_cub
if want public; then
    if [[ -f build/public/effective_reduction/kernel_9.cu && -f build/public/fast.cu/sum.cu ]]; then
        step public do_public
    else
        echo "public   skipped: build/public/ has no staged copies (scripts/public_kernels.sh --stage SIMVEIT_DIR FASTCU_DIR)" | tee -a "$summary" >&2
    fi
fi
want ncu && step ncu scripts/grid_probe.sh "$out" ncu
want trace && step trace scripts/grid_probe.sh "$out" trace
echo "total    $((SECONDS - start_all))s" | tee -a "$summary" >&2
