#!/usr/bin/env bash
# One call to a lent GPU machine: phases run one after the other into OUTDIR, each a script
# of this repository, with OUTDIR packed into PACK_TO/<OUTDIR's name>.tgz after every phase.
# A lent machine returns only a few files and stops a call at its time limit; packing after
# each phase returns what ended. A results README records a call as this one command line
# (the per-call scripts in docs/results/*/call_*.sh, from before this script, repeat its
# boilerplate).
#
#   [PACK_TO=$OUT] scripts/device_call.sh OUTDIR PHASE...
#
# PHASE (lists inside a phase are separated by commas, so that a phase is one word):
#   build               configure the release preset where needed (this GPU's architecture
#                       only, CMakeLists.txt) and build everything
#   gpu-tests[:REGEX]   ctest -L gpu, the classroom's gradings apart (-E classroom_); with REGEX,
#                       ctest -R REGEX instead
#   two-gpus            scripts/multi_gpu_tests.sh --user student --label-only (root; a second
#                       GPU, else its tests report themselves skipped)
#   front:STEPS         STEPS="STEPS" scripts/issue31_gpu.sh OUTDIR/front
#   grading:PARTS       scripts/grading_gpu.sh OUTDIR/grading PARTS (root)
#   reproduce:PARTS     scripts/reproduce_results.sh OUTDIR/reproduce PARTS
#   rounds:ARGFILE      scripts/alternate_rounds.sh OUTDIR/rounds ARGS, ARGFILE holding one
#                       argument a line (a committed file: the rows, builds and patches)
#
# Writes OUTDIR/gpu.txt (provenance: command, commit, GPUs, CUDA, date), OUTDIR/<phase>.log (its
# characters other than letters, digits, '_', '.' and '-' as '_'),
# OUTDIR/summary.txt (a line a phase: exit status, seconds, its last summing-up line) and
# OUTDIR/times.txt. A failed phase is recorded and the next one runs; the exit status is 1
# when any failed. REDUCTION_COMMIT names the commit where the copy's .git is not the tree's.
set -uo pipefail
usage() { sed -n '9,22p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[[ $# -ge 2 && $1 != -* ]] || usage
invocation="scripts/device_call.sh$(printf ' %q' "$@")"
out=$(realpath -m "$1")
shift
cd "$(dirname "$0")/.." || exit 3
for phase in "$@"; do
    case $phase in
        build | gpu-tests | gpu-tests:?* | two-gpus | front:?* | grading:?* | reproduce:?*) ;;
        rounds:?*) [[ -f ${phase#rounds:} ]] || { echo "device_call.sh: ${phase#rounds:}: no such file" >&2; exit 2; } ;;
        *) echo "device_call.sh: unknown phase '$phase'" >&2; usage ;;
    esac
done
mkdir -p "$out"
# shellcheck source=scripts/lib/provenance.sh
source scripts/lib/provenance.sh
# shellcheck source=scripts/lib/measure.sh
source scripts/lib/measure.sh  # build_targets
{
    provenance "$invocation"
    nvidia-smi -L 2>&1 | sed 's/^/# /'
} >"$out/gpu.txt"
cat "$out/gpu.txt"
start=$SECONDS
pack() { [[ -z ${PACK_TO:-} ]] || tar -C "$(dirname "$out")" -czf "$PACK_TO/$(basename "$out").tgz" "$(basename "$out")"; }
status=0
for phase in "$@"; do
    list=${phase#*:}
    list=${list//,/ }
    log=$out/${phase//[^A-Za-z0-9_.-]/_}.log
    began=$SECONDS
    case $phase in
        build)
            build_targets build/release all ;;
        gpu-tests)
            ctest --test-dir build/release -L gpu -E classroom_ --output-on-failure ;;
        gpu-tests:*)
            ctest --test-dir build/release -R "$list" --output-on-failure ;;
        two-gpus)
            scripts/multi_gpu_tests.sh --user student --label-only "$out/two_gpus.txt" ;;
        front:*)
            STEPS=$list scripts/issue31_gpu.sh "$out/front" && cat "$out/front/summary.txt" ;;
        grading:*)
            # shellcheck disable=SC2086  # the parts: several words
            scripts/grading_gpu.sh "$out/grading" $list && cat "$out/grading/summary.txt" ;;
        reproduce:*)
            # shellcheck disable=SC2086
            scripts/reproduce_results.sh "$out/reproduce" $list ;;
        rounds:*)
            mapfile -t arguments <"$list"
            TAR=${PACK_TO:+$PACK_TO/$(basename "$out")_rounds.tgz} scripts/alternate_rounds.sh "$out/rounds" "${arguments[@]}" ;;
    esac >"$log" 2>&1
    phase_status=$?
    (( phase_status == 0 )) || status=1
    verdict=$(grep -E 'tests failed|FAILED|passed|done' "$log" | tail -1)
    echo "$phase: exit $phase_status, $((SECONDS - began)) s; ${verdict:-$(tail -1 "$log")}" | tee -a "$out/summary.txt"
    echo "$phase done at $((SECONDS - start)) s" >>"$out/times.txt"
    pack
done
exit $status
