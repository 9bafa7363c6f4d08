#!/usr/bin/env bash
# Two public sum kernels, built and run as their authors publish them, beside this repo's
# numbers (issue 31). Their code never enters this repository: the script builds it from
# checkouts you name, or from the copies that --stage put under build/public/ (ignored
# by git), for a GPU machine without network.
#
#   scripts/public_kernels.sh SIMVEIT_DIR FASTCU_DIR [OUTDIR]   # build and run (default OUTDIR docs/results/grid_layout)
#   scripts/public_kernels.sh --stage SIMVEIT_DIR FASTCU_DIR     # copy the files needed into build/public/
#   scripts/public_kernels.sh build/public/effective_reduction build/public/fast.cu OUTDIR
#
# What each program times, and how (read from their sources, not changed here):
#
#   simveit/effective_reduction kernel_9.cu (blog "Making vector sum really fast"):
#     2^30 int, values rand() % 100 (srand(42)). Kernel: 512 threads, batchSize 12, so
#     each thread 3 consecutive int4 loads (thread t: int4s 3t .. 3t+2 of its block's
#     chunk), one chunk per block (174,763 blocks: one-shot), a shared-memory tree to 64,
#     __reduce_add_sync for the last warp, one atomicAdd per block. Its launch function
#     does cudaMemset(d_out) then the kernel. One checked launch (prints h_out and the
#     CPU h_out_ref), then 1000 launches back to back (each memset + kernel) between one
#     event pair, no L2 flush; time = total / 1000. Prints "Time taken: X ms",
#     "Bandwidth: Y GB/s" (2^32 bytes / ms / 1e6) and "% of max bandwidth" against a fixed
#     3.3 TB/s. Built, as its Makefile says, with nvcc -std=c++17 -O3 -DNDEBUG -w
#     --expt-relaxed-constexpr --expt-extended-lambda --use_fast_math -arch=sm_90a -lineinfo.
#
#   pranjalssh/fast.cu sum.cu:
#     2^30 int, values rand() % 100 (srand(42)). Kernels 1-4 (kernel 4, the fastest: 1024
#     threads, 16 int4 loads BLOCK apart per thread, one tile per block (16,384 blocks:
#     one-shot), __ldcg for the first load, redux.sync, a shared atomic per warp and one
#     global atomicAdd per block; the kernel zeroes the result itself from thread 0 of
#     block 0), then cub::DeviceReduce::Sum. For each: 100 launches back to back between
#     one event pair, no warm-up of that kernel beforehand and no L2 flush; time = total /
#     100. Prints "Bandwidth: X GB/s" (2^32 bytes / ms / 1e6), "Time taken" and "Sum" (of
#     the last launch; the program prints no reference sum). Built, as its Makefile says,
#     with the same nvcc flags and -arch=sm_90a.
#
# Both count 2^32 bytes per run in decimal GB/s, as this repo does; neither flushes the L2
# (50 MiB, small beside 4 GiB, so it matters little at 2^30), and both time a stream of
# launches, like grid_layout_probe's back-to-back method, not its flushed one.
#
# Then the same launch functions under this repository's two methods (flushed median and
# back to back, every run checked), at 2^26, 2^28 and 2^30: tools/public_timer.cu, built
# into build/release by naming the checkouts to CMake (PUBLIC_SIMVEIT_DIR, PUBLIC_FASTCU_DIR).
# OUTDIR gets public_kernels.txt (each program's own output) and public_timed.csv (the
# timer's rows), each with provenance.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 3
# shellcheck source=scripts/lib/provenance.sh
source scripts/lib/provenance.sh
usage() { echo "usage: scripts/public_kernels.sh [--stage] SIMVEIT_DIR FASTCU_DIR [OUTDIR]" >&2; exit 2; }
stage=0
if [[ ${1:-} == --stage ]]; then stage=1; shift; fi
[[ $# -ge 2 ]] || usage
simveit=$1
fastcu=$2
out=${3:-docs/results/grid_layout}
simveit_files=(kernel_9.cu Makefile README.md)
fastcu_files=(sum.cu Makefile README.md LICENSE)
for f in "${simveit_files[@]:0:1}"; do [[ -f $simveit/$f ]] || { echo "public_kernels.sh: $simveit/$f not found (a checkout of simveit/effective_reduction?)" >&2; exit 3; }; done
for f in "${fastcu_files[@]:0:1}"; do [[ -f $fastcu/$f ]] || { echo "public_kernels.sh: $fastcu/$f not found (a checkout of pranjalssh/fast.cu?)" >&2; exit 3; }; done

# The commit of a checkout, only if the folder is the top of its own repository (a copy
# inside another repository, as build/public/ is, would report that one's commit).
checkout_commit() {
    local top
    top=$(git -C "$1" rev-parse --show-toplevel 2>/dev/null) && [[ $(realpath "$top") == "$(realpath "$1")" ]] &&
        git -C "$1" rev-parse HEAD && return
    cat "$1/COMMIT" 2>/dev/null || echo unknown
}

if (( stage )); then
    # Copies only; the checkouts' commits go into a note beside them.
    for pair in "effective_reduction:$simveit" "fast.cu:$fastcu"; do
        name=${pair%%:*}
        from=${pair#*:}
        to=build/public/$name
        mkdir -p "$to"
        if [[ $name == effective_reduction ]]; then files=("${simveit_files[@]}"); else files=("${fastcu_files[@]}"); fi
        for f in "${files[@]}"; do [[ -f $from/$f ]] && cp "$from/$f" "$to/"; done
        { echo "copied from $from by scripts/public_kernels.sh --stage on $(date -u '+%Y-%m-%d %H:%M UTC')"
          echo "commit: $(checkout_commit "$from")"; } >"$to/STAGED"
        echo "public_kernels.sh: staged $to" >&2
    done
    git check-ignore -q build/public || echo "public_kernels.sh: warning: build/public is not ignored by git" >&2
    exit 0
fi

command -v nvcc >/dev/null || { echo "public_kernels.sh: nvcc not found" >&2; exit 3; }
mkdir -p "$out"
bin=build/public/bin
mkdir -p "$bin"
# Their Makefiles' flags (both the same), -arch=sm_90a as they say: Hopper only.
flags=(-std=c++17 -O3 -DNDEBUG -w --expt-relaxed-constexpr --expt-extended-lambda --use_fast_math
       -Xcompiler=-fPIE -Xcompiler=-Wno-psabi -Xcompiler=-fno-strict-aliasing -arch=sm_90a -lineinfo)
report=$out/public_kernels.txt
: >"$report"
status=0
run_one() {  # NAME SOURCE
    local name=$1 source=$2
    echo "== $name ($source)" >>"$report"
    local dir
    dir=$(dirname "$source")
    if [[ -f $dir/STAGED ]]; then
        sed 's/^/# /' "$dir/STAGED" >>"$report"
    else
        echo "# checkout: $dir at commit $(checkout_commit "$dir")" >>"$report"
    fi
    echo "# build: nvcc ${flags[*]} $source -o $bin/$name" >>"$report"
    if ! nvcc "${flags[@]}" "$source" -o "$bin/$name" >>"$report" 2>&1; then
        echo "public_kernels.sh: $name: build failed (see $report)" >&2
        echo "# build failed" >>"$report"
        status=1
        return
    fi
    echo "# run: $bin/$name" >>"$report"
    if ! "$bin/$name" >>"$report" 2>&1; then
        echo "public_kernels.sh: $name: run failed (see $report)" >&2
        echo "# run failed" >>"$report"
        status=1
    fi
    echo >>"$report"
}
run_one effective_reduction_kernel_9 "$simveit/kernel_9.cu"
run_one fast_cu_sum "$fastcu/sum.cu"
provenance "scripts/public_kernels.sh $simveit $fastcu $out" >>"$report"
# One summary line per program: the bandwidths it printed.
grep -E '^(==|Bandwidth|<-)' "$report" | paste -sd' ' | sed 's/^/public_kernels.sh: /' >&2

# The same launch functions, timed by the harness (tools/public_timer.cu).
build=build/release
timed=$out/public_timed.csv
configure=(-DPUBLIC_SIMVEIT_DIR="$(realpath "$simveit")" -DPUBLIC_FASTCU_DIR="$(realpath "$fastcu")")
if [[ -f $build/CMakeCache.txt ]]; then cmake -S . -B "$build" "${configure[@]}" >/dev/null
else cmake --preset release "${configure[@]}" >/dev/null; fi &&
    cmake --build "$build" --target public_timer_kernel_9 public_timer_fast_cu -j "$(nproc)" >/dev/null || {
    echo "public_kernels.sh: building tools/public_timer.cu failed" >&2; exit 1; }
: >"$timed"
for timer in public_timer_kernel_9 public_timer_fast_cu; do
    # The first program's '#' lines and header, then only rows.
    if [[ ! -s $timed ]]; then "$build/bin/$timer" >>"$timed"; else "$build/bin/$timer" | grep -v -e '^#' -e '^timing,' >>"$timed"; fi ||
        { echo "public_kernels.sh: $timer failed" >&2; status=1; }
done
provenance "scripts/public_kernels.sh $simveit $fastcu $out (tools/public_timer.cu, defaults: --n 2^26 --n 2^28 --n 2^30 --timing both)" >>"$timed"
exit $status
