# shellcheck shell=bash
# Sourced by the A/B scripts (min_registers.sh, argmax_warp_reduce.sh): the committed code
# and a variant without one change, built side by side and timed one after the other on
# one GPU, so that what the change does is measured, not assumed. The variant is a copy of
# this tree with one line of one file replaced; the tree itself is not changed.
#
#   ab_variant OUTDIR FILE ORIGINAL REPLACEMENT COMMITTED_NAME VARIANT_NAME TITLE CSV \
#              "LABEL:OP TYPE N" ... -- REDUCE_OPS_OPTIONS ...
#
# ORIGINAL, the line replaced, must occur in FILE exactly once, whole: a file that has moved
# on stops the script. Each form: three runs of reduce_ops with the options after --, into
# OUTDIR/CSV (first columns: the form's name, the repetition), and scripts/profile_ops.sh
# OP TYPE N for each "LABEL:OP TYPE N", into OUTDIR/profile_LABEL_NAME.txt. TITLE is the
# first line of OUTDIR/environment.txt. A relative OUTDIR is taken from the repository's
# root (the scripts cd there). environment.txt names HEAD's commit (or REDUCTION_COMMIT):
# measure from a clean tree. Needs build/release (README.md), ncu and a GPU.
# shellcheck source=scripts/lib/tree_copy.sh
source "$(dirname "${BASH_SOURCE[0]}")/tree_copy.sh"  # copy_tree, build_copy
ab_variant() {
    local name
    name=$(basename "$0")
    [[ $# -ge 10 ]] || { echo "$name: ab_variant needs 8 arguments, the profiles, -- and reduce_ops options" >&2; exit 2; }
    local out=$1 file=$2 original=$3 replacement=$4 title=$7 csv=$8 copy variant build repetition profile label
    local names=("$5" "$6") profiles=() times=()
    shift 8
    while [[ $# -gt 0 && $1 != -- ]]; do profiles+=("$1"); shift; done
    [[ $# -gt 1 ]] || { echo "$name: ab_variant needs -- and the reduce_ops options to time" >&2; exit 2; }
    shift
    times=("$@")
    [[ -x build/release/bin/reduce_ops ]] || { echo "$name: build/release/bin/reduce_ops not found: build first (README.md)" >&2; exit 3; }
    [[ $(grep -cxF -- "$original" "$file") == 1 ]] ||
        { echo "$name: $file has not exactly one line '$original'" >&2; exit 3; }
    mkdir -p "$out"
    copy=$(mktemp -d)
    # shellcheck disable=SC2064  # expand $copy now: it is local
    trap "rm -rf '$copy'" EXIT
    copy_tree "$copy"
    from=$original to=$replacement awk '$0 == ENVIRON["from"] { print ENVIRON["to"]; next } { print }' \
        "$file" >"$copy/$file"
    build_copy "$copy" reduce_ops >/dev/null || { echo "$name: the variant's build failed" >&2; exit 1; }

    {
        echo "$title"
        echo "$(nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader), $(date -u '+%Y-%m-%d %H:%M UTC'), commit ${REDUCTION_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
    } >"$out/environment.txt"
    echo "variant,repetition,$(build/release/bin/reduce_ops --op sum --type int --n 2^10 --iters 1 --warmup 0 --csv | head -1)" >"$out/$csv"
    for variant in "${names[@]}"; do
        build=build/release
        [[ $variant == "${names[1]}" ]] && build=$copy/build/release
        for repetition in 1 2 3; do
            "$build/bin/reduce_ops" "${times[@]}" --csv |
                awk -v v="$variant" -v r=$repetition 'NR > 1 { print v "," r "," $0 }' >>"$out/$csv"
        done
        for profile in ${profiles[@]+"${profiles[@]}"}; do
            label=${profile%%:*}
            # shellcheck disable=SC2086  # OP TYPE N: three arguments
            { echo "\$ scripts/profile_ops.sh ${profile#*:}   # $variant"; scripts/profile_ops.sh ${profile#*:} --build "$build"; } \
                >"$out/profile_${label}_$variant.txt"
        done
    done
    echo "$name: done, results in $out"
}
