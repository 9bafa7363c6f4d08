#!/usr/bin/env bash
# scripts/device_call.sh, no GPU needed: a call with an unknown phase or a missing rounds file
# is refused before it writes anything; a failed phase is recorded and the next one still
# runs; the exit status says that one failed; OUTDIR is packed into PACK_TO.
#
#   tests/device_call/check.sh REPOSITORY
set -u
repository=${1:?usage: check.sh REPOSITORY}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "device_call_check: $*"; exit 1; }
# A copy of scripts/ alone: the driver runs from its repository's root, which then has no
# build/release, so each gpu-tests phase fails (ctest cannot enter it) without a GPU.
mkdir -p "$work/repo" "$work/pack"
cp -r "$repository/scripts" "$work/repo/"
cd "$work/repo" || exit 1

refused() {  # PATTERN PHASE...: the call exits 2 and says PATTERN
    local pattern=$1
    shift
    scripts/device_call.sh "$work/out" "$@" >"$work/log" 2>&1
    [[ $? == 2 ]] && grep -q -- "$pattern" "$work/log"
}
refused "unknown phase 'bogus'" build bogus || fail "an unknown phase is not refused"
refused "no/such/file: no such file" rounds:no/such/file || fail "a missing rounds file is not refused"
scripts/device_call.sh "$work/out" >"$work/log" 2>&1
[[ $? == 2 ]] || fail "a call without a phase is not refused"
[[ ! -e $work/out ]] || fail "a refused call wrote OUTDIR"

PACK_TO=$work/pack scripts/device_call.sh "$work/out" gpu-tests:first gpu-tests:second >"$work/log" 2>&1
status=$?
[[ $status == 1 ]] || fail "two failed phases end with exit status $status, not 1"
[[ $(grep -c '^gpu-tests:first: exit [1-9]' "$work/out/summary.txt") == 1 &&
   $(grep -c '^gpu-tests:second: exit [1-9]' "$work/out/summary.txt") == 1 ]] ||
    fail "summary.txt does not record both failed phases: $(cat "$work/out/summary.txt")"
[[ -s $work/out/gpu-tests_first.log && -s $work/out/gpu-tests_second.log ]] || fail "a phase's log is missing or empty"
grep -q '^# command: scripts/device_call.sh' "$work/out/gpu.txt" || fail "gpu.txt has no command line"
[[ $(grep -c 'done at' "$work/out/times.txt") == 2 ]] || fail "times.txt does not have a line a phase"
tar -tzf "$work/pack/out.tgz" | grep -q '^out/summary.txt$' || fail "OUTDIR was not packed into PACK_TO"
echo "device_call_check: passed"
