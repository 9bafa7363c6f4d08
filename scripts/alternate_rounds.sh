#!/usr/bin/env bash
# Alternating rounds of reduce7 builds beside grid_layout_probe, each program in its own
# process, then (optionally) each kernel's duration one launch at a time under Nsight
# Compute: the pattern of issue 31's gap experiments (docs/results/reduce7_gap_74ba1af/),
# in one script instead of a copy per call.
#
#   scripts/alternate_rounds.sh OUTDIR [--build NAME=PATCH]... --row 'REDUCE7 ARGS'...
#                               [--probe 'PROBE ARGS'] [--ncu 'REDUCE7 ARGS' 'PROBE ARGS']
#
#   --build NAME=PATCH   also time this tree with PATCH applied (patch -p1), built apart in
#                        /tmp/NAME; the tree as it is is the build `committed`
#   --row ARGS           one reduce7 row per build, method and round (e.g. '--type int --n 2^26')
#   --probe ARGS         grid_layout_probe's arguments for each round (e.g. '--type int --n 2^26
#                        --only one-shot-512x4+packed'); its CSV name takes its --type (one
#                        --type a probe; repeat --probe for the other type)
#   --ncu R7 PROBE       after the rounds: 40 launches of reduce7 (every build) with R7 and of
#                        the probe with PROBE, one at a time, no flush, gpu__time_duration.sum
#
# Environment: ROUNDS (3), METHODS ("back-to-back flushed"), CUTOFF (seconds after the build
# at which no new round starts; 330), TAR (a .tgz path: OUTDIR is packed there after the build
# and after every round and step, so a call cut short still returns what it measured; the
# device tool returns only a few files).
#
# Each round runs the probe, then every build's rows, the builds in an order that turns by one
# each round (docs/results/reduce7_entry_657d050/ ran them in a fixed order).
#
# Writes OUTDIR/reduce7_<round>.csv (build, timing, then reduce7's --csv columns),
# probe_<type>_<round>.csv, ncu_<name>.csv, and the readers' outputs rounds.txt
# (scripts/rounds.py) and durations.csv (scripts/ncu_pairs.py --durations); times.txt,
# errors.txt (what failed), runs.log (the programs' stderr), gpu.txt. Exit status 1 when a build or a run failed (errors.txt says which).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 3
usage() { sed -n '7,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[[ $# -ge 1 && $1 != -* ]] || usage
invocation="scripts/alternate_rounds.sh$(printf ' %q' "$@")"
out=$(realpath -m "$1")
shift
builds=(committed)
declare -A patch_of=()
rows=()
probes=()
ncu_reduce7=
ncu_probe=
while [[ $# -gt 0 ]]; do
    case $1 in
        --build)
            [[ ${2:-} == *=* ]] || usage
            name=${2%%=*}
            patch_of[$name]=$(realpath "${2#*=}") || exit 2
            builds+=("$name")
            shift 2 ;;
        --row) rows+=("${2:?--row needs arguments}"); shift 2 ;;
        --probe) probes+=("${2:?--probe needs arguments}"); shift 2 ;;
        --ncu) ncu_reduce7=${2:?--ncu needs two argument lists}; ncu_probe=${3:?--ncu needs two argument lists}; shift 3 ;;
        *) echo "alternate_rounds.sh: unknown option $1" >&2; usage ;;
    esac
done
(( ${#rows[@]} + ${#probes[@]} )) || { echo "alternate_rounds.sh: nothing to time: give --row or --probe" >&2; exit 2; }
mkdir -p "$out"
start=$SECONDS
pack() { [[ -z ${TAR:-} ]] || tar -C "$(dirname "$out")" -czf "$TAR" "$(basename "$out")"; }
stamp() { echo "$1 at $((SECONDS - start)) s" | tee -a "$out/times.txt"; pack; }
failed() { echo "$1" | tee -a "$out/errors.txt" >&2; }
# shellcheck source=scripts/lib/measure.sh
source scripts/lib/measure.sh  # build_targets, labelled_rows
# shellcheck source=scripts/lib/provenance.sh
source scripts/lib/provenance.sh
# shellcheck source=scripts/lib/tree_copy.sh
source scripts/lib/tree_copy.sh  # copy_tree, build_copy
{
    provenance "$invocation"
    echo "# builds: ${builds[*]}"
} >"$out/gpu.txt"
cat "$out/gpu.txt"
declare -A bin=([committed]=build/release/bin/reduce7)
probe=build/release/bin/grid_layout_probe
(build_targets build/release grid_layout_probe reduce7 >"$out/build.log" 2>&1 || failed "build committed FAILED") &
for name in "${builds[@]:1}"; do
    tree=/tmp/$name
    bin[$name]=$tree/build/release/bin/reduce7
    (copy_tree "$tree" || { failed "copy $name FAILED"; exit; }
     if ! patch -d "$tree" -p1 <"${patch_of[$name]}" >"$out/patch_$name.log"; then failed "patch $name FAILED"
     elif ! build_copy "$tree" reduce7 >"$out/build_$name.log" 2>&1; then failed "build $name FAILED"; fi) &
done
wait
stamp "build done"
[[ -s $out/errors.txt ]] && exit 1

reduce7_row() {  # BUILD CSV METHOD ARGS...
    local build=$1 csv=$2 method=$3 iters=10
    shift 3
    [[ $method == flushed ]] && iters=60
    # shellcheck disable=SC2068
    if ! "${bin[$build]}" --no-baseline $@ --timing "$method" --iters $iters --warmup 20 --csv >"$out/row.csv" 2>>"$out/runs.log"; then
        failed "reduce7 $build $* $method FAILED"
        return
    fi
    labelled_rows "$csv" build,timing "$build,$method" "$out/row.csv"
}
for ((round = 1; round <= ${ROUNDS:-3}; round++)); do
    (( SECONDS - start > ${CUTOFF:-330} )) && { stamp "round $round not started (CUTOFF)"; break; }
    for probe_args in ${probes[@]+"${probes[@]}"}; do
        probe_type=$(sed -n 's/.*--type \([a-z]*\).*/\1/p' <<<"$probe_args")
        # shellcheck disable=SC2086
        $probe $probe_args >"$out/probe_${probe_type:-int}_$round.csv" 2>>"$out/runs.log" || failed "probe ${probe_type:-int} round $round FAILED"
    done
    for method in ${METHODS:-back-to-back flushed}; do
        # The builds' order turns by one each round (round 1: as given, round 2: from the
        # second, ...), so that no build always runs first or last in a round.
        for ((k = 0; k < ${#builds[@]}; k++)); do
            build=${builds[(k + round - 1) % ${#builds[@]}]}
            for row in "${rows[@]}"; do reduce7_row "$build" "$out/reduce7_$round.csv" "$method" "$row"; done
        done
    done
    stamp "round $round done"
done
rm -f "$out/row.csv"

if [[ -n $ncu_reduce7 ]]; then
    metric=gpu__time_duration.sum
    # shellcheck disable=SC2086
    ncu --clock-control none --cache-control none --csv --metrics $metric -k "regex:strided_tiles|consecutive" \
        --launch-skip 120 --launch-count 40 $probe $ncu_probe --runs 1 --warmup 0 --batches 2 >"$out/ncu_probe.csv" 2>&1 || failed "ncu probe FAILED"
    for build in "${builds[@]}"; do
        # shellcheck disable=SC2086
        ncu --clock-control none --cache-control none --csv --metrics $metric -k "regex:shuffle_vector" \
            --launch-skip 30 --launch-count 40 "${bin[$build]}" --no-baseline $ncu_reduce7 --timing back-to-back --iters 2 --warmup 2 \
            >"$out/ncu_$build.csv" 2>&1 || failed "ncu $build FAILED"
    done
    python3 scripts/ncu_pairs.py --durations "$out" >"$out/durations.csv" 2>&1 || failed "ncu_pairs.py FAILED"
    cat "$out/durations.csv"
    stamp "ncu done"
fi
python3 scripts/rounds.py "$out" >"$out/rounds.txt" 2>&1 || failed "rounds.py FAILED"
cat "$out/rounds.txt"
pack
[[ ! -s $out/errors.txt ]] || { head "$out/errors.txt"; tail -5 "$out/runs.log" 2>/dev/null; exit 1; }
