#!/usr/bin/env bash
# argmax's warp reduction two ways, on one GPU, one after the other: as ops/reduce_op.cuh
# has it, ArgMax::warp_reduce with redux.sync (a few instructions across the warp), and the
# shuffle tree every other operator uses (five steps, each moving value and index and
# running the whole combine). docs/10-your-own-reduction.md quotes the result.
#
#   scripts/argmax_warp_reduce.sh [OUTDIR]      # default: docs/results/argmax_warp_reduce
#
# Builds the shuffle form in a copy of this tree (scripts/lib/ab_variant.sh: reduce_op.cuh's
# warp_reduce told that no operator has its own), times argmax of every type at 2^20 ...
# 2^28 three times with each, and profiles argmax float at 2^22 and half at 2^28 with each
# (scripts/profile_ops.sh). Needs build/release (README.md), ncu and a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/ab_variant.sh
source scripts/lib/ab_variant.sh

ab_variant "${1:-docs/results/argmax_warp_reduce}" ops/reduce_op.cuh \
    '    constexpr bool kOwnWarpReduce = ReducesWarp<Op>::value;' \
    '    constexpr bool kOwnWarpReduce = false;  // argmax_warp_reduce.sh: the shuffle tree' \
    redux shuffles "argmax of every type, three runs with each warp reduction, one after the other" \
    argmax_ab.csv "argmax_float_2_22:argmax float 2^22" "argmax_half_2_28:argmax half 2^28" \
    -- --op argmax --type all --sizes 2^20:2^28
