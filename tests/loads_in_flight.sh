#!/usr/bin/env bash
# reduce7 --loads N keeps N 16-byte loads in flight: in the SASS of each variant (int and
# float, block 256, 16-byte vectors), and of the default (4) at the default block 512, the
# number of LDG.E.128 issued before the first instruction that uses one is N
# (scripts/count_loads_before_use.sh). Before the variants had __launch_bounds__(256, 1),
# ptxas issued 4 of 8 or 16 (reduce7/variants.cuh); with the last-block finish inlined, its
# loop over a group's partials made it issue 3 of the default's 4 (reduce7/kernel.cu;
# docs/results/reduce7_groups_8541399/x2/loads_before_use_inline.txt).
# --grid auto's large tile (int and float, block 512, 8 loads at 32 registers) is a rolling window:
# more than the default's 4 issued before the first use, and fewer than all 8 (5 for int in
# the sm_90 build at 98e9e0d, 5 for float at feeb3f6:
# docs/results/reduce7_float_large_54de28d/sass_large_tile.txt).
#
#   tests/loads_in_flight.sh BINARY REPOSITORY
# Skips (a line starting "SKIPPED:") without cuobjdump or without sm_90 code in BINARY. The
# sm_90 SASS is dumped once and every count reads the dump (each dump of reduce7 takes seconds).
set -uo pipefail
binary=$1
repo=$2
command -v cuobjdump >/dev/null || { echo "SKIPPED: cuobjdump not found (CUDA Toolkit, or pip's nvidia-cuda-cuobjdump)"; exit 0; }
elves=$(cuobjdump -lelf "$binary" 2>/dev/null)
[[ $elves == *sm_90* ]] || { echo "SKIPPED: $binary has no sm_90 code (configure with CUDAARCHS including 90)"; exit 0; }
sass=$(mktemp --suffix=.sass)
trap 'rm -f "$sass"' EXIT
cuobjdump -sass --gpu-architecture sm_90 "$binary" >"$sass" || { echo "FAILED: cuobjdump -sass of $binary"; exit 1; }
failed=0
# count KERNEL: sets `line` to the script's before_first_use line for KERNEL and `got` to its
# count; on no count, says so and returns 1.
count() {
    line=$("$repo/scripts/count_loads_before_use.sh" "$sass" "$1" | grep before_first_use) || {
        echo "FAILED: no SASS count for $1"; failed=1; return 1; }
    got=$(sed -n 's/.*before_first_use=\([0-9]*\).*/\1/p' <<<"$line")
}
# "BLOCK LOADS" pairs: every --loads at block 256, and the default (4) at the default block 512.
for type in int float; do
    for shape in "256 4" "256 1" "256 2" "256 8" "256 16" "512 4"; do
        read -r block loads <<<"$shape"
        suffix=$([[ $loads == 4 ]] && echo "" || echo ", $loads")
        count "shuffle_vector_single_pass<${block}u, 4, $type$suffix>(" || continue
        if [[ $got == "$loads" ]]; then
            echo "ok: $type --block $block --loads $loads: $got loads before the first use"
        else
            echo "FAILED: $type --block $block --loads $loads: $got loads before the first use, not $loads ($line)"
            failed=1
        fi
    done
done
for type in int float; do
    if count "shuffle_vector_single_pass<512u, 4, $type, 8>("; then
        if [[ -n $got && $got -gt 4 && $got -lt 8 ]]; then
            echo "ok: $type --grid auto's large tile (block 512, 8 loads): $got loads before the first use (more than 4, fewer than 8)"
        else
            echo "FAILED: $type --grid auto's large tile: '$got' loads before the first use, not 5 to 7 ($line)"
            failed=1
        fi
    fi
done
exit $failed
