#!/usr/bin/env bash
# min's combine two ways, on one GPU, one after the other: as ops/operators.cuh has it,
# Max's rule on the negated values (32 registers for the float kernel), and written out as
# Max's mirror, `is_nan(a) | (a < b) | ((a == b) & signbit(a)) ? a : b` (36 registers, so
# 6 blocks of 256 per SM instead of 8). docs/10-your-own-reduction.md quotes the result.
#
#   scripts/min_registers.sh [OUTDIR]        # default: docs/results/min_registers
#
# Builds the mirror in a copy of this tree (the tree itself is not changed), times min and
# max of float and double at 2^24 ... 2^28 three times with each, and profiles min float at
# 2^28 with each (scripts/profile_ops.sh). Needs build/release (README.md), ncu and a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/results/min_registers}
[[ -x build/release/bin/reduce_ops ]] || { echo "min_registers.sh: build/release/bin/reduce_ops not found: build first (README.md)" >&2; exit 3; }
mkdir -p "$out"

negated='            return -Max<Acc>::combine(-a, -b);'
mirror='            return is_nan(a) | (a < b) | ((a == b) \& cuda::std::signbit(a)) ? a : b;'
grep -qF -- "$negated" ops/operators.cuh || { echo "min_registers.sh: Min::combine in ops/operators.cuh is not the negated form" >&2; exit 3; }
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
tar --exclude=./build --exclude=./.git -cf - . | tar -xf - -C "$copy"
sed -i "s#^$negated\$#$mirror#" "$copy/ops/operators.cuh"
grep -q 'return is_nan(a) | (a < b)' "$copy/ops/operators.cuh" || { echo "min_registers.sh: could not write the mirror" >&2; exit 3; }
(cd "$copy" && cmake --preset release >/dev/null && cmake --build --preset release -j "$(nproc)" --target reduce_ops >/dev/null)

csv=$out/min_ab.csv
{
    echo "min and max of float and double, three runs with each form of Min::combine, one after the other"
    echo "$(nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader), $(date -u '+%Y-%m-%d %H:%M UTC'), commit ${REDUCTION_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
} >"$out/environment.txt"
echo "variant,repetition,$(build/release/bin/reduce_ops --op min --type float --n 2^10 --iters 1 --warmup 0 --csv | head -1)" >"$csv"
for variant in negated mirror; do
    build=build/release
    [[ $variant == mirror ]] && build=$copy/build/release
    for repetition in 1 2 3; do
        "$build/bin/reduce_ops" --op min,max --type float,double --sizes 2^24:2^28 --csv |
            awk -v v=$variant -v r=$repetition 'NR > 1 { print v "," r "," $0 }' >>"$csv"
    done
    { echo "\$ scripts/profile_ops.sh min float 2^28   # Min::combine: $variant"; scripts/profile_ops.sh min float 2^28 --build "$build"; } \
        >"$out/profile_min_$variant.txt"
done
echo "min_registers.sh: done, results in $out"
