#!/usr/bin/env bash
# min's combine two ways, on one GPU, one after the other: as ops/operators.cuh has it,
# Max's rule on the negated values (32 registers for the float kernel), and written out as
# Max's mirror, `is_nan(a) | (a < b) | ((a == b) & signbit(a)) ? a : b` (36 registers, so
# 6 blocks of 256 per SM instead of 8). docs/10-your-own-reduction.md quotes the result.
#
#   scripts/min_registers.sh [OUTDIR]        # default: docs/results/min_registers
#
# Builds the mirror in a copy of this tree (scripts/lib/ab_variant.sh), times min and max of
# float and double at 2^24 ... 2^28 three times with each, and profiles min float at 2^28
# with each (scripts/profile_ops.sh). Needs build/release (README.md), ncu and a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/ab_variant.sh
source scripts/lib/ab_variant.sh

ab_variant "${1:-docs/results/min_registers}" ops/operators.cuh \
    '            return -Max<Acc>::combine(-a, -b);' \
    '            return is_nan(a) | (a < b) | ((a == b) & cuda::std::signbit(a)) ? a : b;' \
    negated mirror "min and max of float and double, three runs with each form of Min::combine, one after the other" \
    min_ab.csv "min:min float 2^28" -- --op min,max --type float,double --sizes 2^24:2^28
