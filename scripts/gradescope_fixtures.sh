#!/usr/bin/env bash
# The threat model's fixtures through Gradescope's own scripts (setup.sh, run_autograder) as
# root, on a machine with a GPU: builds the grading tests, runs GradescopePath for the
# fixtures whose names match PATTERN, then grades every kernel.cu under EXTRA (one upload
# each, named by its file) on the same /autograder. Writes each upload's report,
# results.json and run_autograder output, and a summary, to OUT.
#
#   sudo scripts/gradescope_fixtures.sh OUT [PATTERN] [EXTRA]
#   sudo scripts/gradescope_fixtures.sh docs/results/grading/gradescope '^(reference|racy)$'
# (REDUCTION_COMMIT names the commit where the tree is not a git checkout.) It replaces
# /autograder: run it on a grading machine or a throwaway one. With REUSE=1 a later part on the
# same machine keeps the /autograder an earlier part set up from the same kit (no setup.sh).
# TIME_LIMIT=SECONDS stops the gradings then and still writes what was graded (a lent machine's
# call limit).
set -uo pipefail
out=${1:?usage: gradescope_fixtures.sh OUT [PATTERN] [EXTRA]}
pattern=${2:-.*}
extra=${3:-}
[[ $(id -u) -eq 0 ]] || { echo "gradescope_fixtures.sh: run as root (Gradescope runs its scripts as root)" >&2; exit 2; }
cd "$(dirname "$0")/.."
mkdir -p "$out"
out=$(realpath "$out")
summary="$out/summary.txt"
{
  echo "# Gradescope fixtures ($pattern), $(nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | head -1)," \
       "$(date -u '+%Y-%m-%d %H:%M UTC'), commit ${REDUCTION_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
  echo "# $(/usr/local/cuda/bin/compute-sanitizer --version 2>/dev/null | grep -m1 Version)"
} >"$summary"
(cmake --preset release >/dev/null && cmake --build --preset release --target classroom_grading --parallel) >"$out/build.log" 2>&1 ||
  { echo "the build failed: $out/build.log" | tee -a "$summary"; exit 1; }
CLASSROOM_GRADESCOPE_TRIAL=1 CLASSROOM_GRADESCOPE_FIXTURES="$pattern" CLASSROOM_GRADESCOPE_REUSE="${REUSE:-0}" \
  timeout "${TIME_LIMIT:-infinity}" build/release/bin/classroom_grading --gtest_filter='GradescopePath.Every*' 2>&1 | tee "$out/gtest.log" |
  grep -E '^(reduce4 |Gradescope path:|setup.sh:|\[  (PASSED|FAILED)|.*Failure)' | tee -a "$summary"
if [[ ${PIPESTATUS[0]} -eq 124 ]]; then
  echo "stopped at TIME_LIMIT=$TIME_LIMIT s: the fixtures after the last line above were not graded" | tee -a "$summary"
  pkill -KILL -f /autograder/source/run_autograder; pkill -KILL -u classroom-student; sleep 1
fi
cp build/release/classroom/tests/grading/gradescope/* "$out/" 2>/dev/null
# Uploads from elsewhere (an attacker's), on the /autograder the test left set up.
if [[ -n $extra && -d /autograder/source ]]; then
  for file in "$extra"/*.cu; do
    name=$(basename "$file" .cu)
    rm -rf /autograder/submission /autograder/results && mkdir -p /autograder/submission /autograder/results
    cp "$file" /autograder/submission/kernel.cu
    start=$SECONDS
    bash /autograder/source/run_autograder >"$out/extra-$name.out" 2>&1
    status=$?
    score=$(grep -m1 '^  "score": ' /autograder/results/results.json 2>/dev/null | tr -dc '0-9.')
    cp /autograder/results/report.txt "$out/extra-$name.txt" 2>/dev/null
    cp /autograder/results/results.json "$out/extra-$name.json" 2>/dev/null
    echo "extra $name: ${score:-no results.json} (run_autograder exit $status, $((SECONDS - start)) s)" | tee -a "$summary"
  done
fi
echo "# left running by classroom-student: $(pgrep -u classroom-student -l | tr '\n' ' ')" >>"$summary"
