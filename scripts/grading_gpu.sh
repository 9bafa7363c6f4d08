#!/usr/bin/env bash
# The classroom kit's GPU checks, one part after another, on a machine with a GPU, as root
# (the Gradescope parts replace /autograder: a grading machine or a throwaway one). Each part
# logs to OUT/<part>.log; OUT/summary.txt gets one line per part: its name, exit status,
# time and the last line that sums it up (CTest's "tests passed" line, a script's verdict).
# The gradings' reports and results.json are copied to OUT/examples as they are written.
#
#   sudo scripts/grading_gpu.sh OUT PART...
# PART: build             the release preset's classroom, classroom_tests and classroom_grading
#       host[:FILTER]     classroom_tests (the rubric, the forgiving-submission, lock and batch tests),
#                         or those of a GoogleTest filter
#       grader1 .. grader7  ctest's classroom_grading_reduceN (every fixture of one assignment)
#       run_of_stages     ctest's classroom_grading_run_of_stages (reduce3..reduce5, cold and warm)
#       judge_alone       ctest's classroom_grading_judge_alone (reduce4, the source check off)
#       quickstart        scripts/instructor_quickstart.sh OUT/quickstart
#       gradescope:REGEX  scripts/gradescope_fixtures.sh OUT/gradescope REGEX
#       cross_grading     classroom/tests/attacks/review4/cross_grading.sh (two gradings at once in two PID
#                         namespaces, one holding the user's task slots; after a gradescope part, which
#                         leaves /autograder set up)
#       judge_timing      scripts/judge_timing.sh 3 > OUT/judge_timing.csv (24 judgings: each stage against itself
#                         and against the previous stage)
set -uo pipefail
out=${1:?usage: grading_gpu.sh OUT PART...}
shift
[[ $(id -u) -eq 0 ]] || { echo "grading_gpu.sh: run as root" >&2; exit 2; }
cd "$(dirname "$0")/.." || exit
mkdir -p "$out/examples"
out=$(realpath "$out")
summary="$out/summary.txt"
examples=build/release/classroom/tests/grading/examples
[[ -f $summary ]] || echo "# $(nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | head -1)," \
  "commit ${REDUCTION_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}" >"$summary"

# shellcheck source=scripts/lib/measure.sh
source scripts/lib/measure.sh  # build_targets: the one build step of the scripts
ctest_part() { ctest --test-dir build/release -R "^$1\$" --output-on-failure; }
for part in "$@"; do
  log="$out/${part//[^A-Za-z0-9_]/_}.log"
  start=$SECONDS
  echo "$(date -u '+%H:%M:%S') $part started" >>"$summary"
  case "$part" in
    build) build_targets build/release classroom classroom_tests classroom_grading >"$log" 2>&1 ;;
    host) build/release/bin/classroom_tests --gtest_brief=1 >"$log" 2>&1 ;;
    host:*) build/release/bin/classroom_tests --gtest_brief=1 --gtest_filter="${part#host:}" >"$log" 2>&1 ;;
    grader[1-7]) ctest_part "classroom_grading_reduce${part#grader}" >"$log" 2>&1 ;;
    run_of_stages) ctest_part classroom_grading_run_of_stages >"$log" 2>&1 ;;
    judge_alone) ctest_part classroom_grading_judge_alone >"$log" 2>&1 ;;
    quickstart) scripts/instructor_quickstart.sh "$out/quickstart" >"$log" 2>&1 ;;
    gradescope:*) scripts/gradescope_fixtures.sh "$out/gradescope" "${part#gradescope:}" >"$log" 2>&1 ;;
    cross_grading) bash classroom/tests/attacks/review4/cross_grading.sh . "$out/cross_grading" >"$log" 2>&1 ;;
    judge_timing) scripts/judge_timing.sh 3 >"$out/judge_timing.csv" 2>"$log" ;;
    *) echo "grading_gpu.sh: unknown part '$part'" >>"$summary"; continue ;;
  esac
  status=$?
  [[ -d $examples ]] && cp -p "$examples"/* "$out/examples/" 2>/dev/null
  verdict=$(grep -E 'tests passed|PASSED|FAILED|passed:|FAILED,|fixtures scored|could not|B-during-A' "$log" | tail -1)
  echo "$(date -u '+%H:%M:%S') $part: exit $status, $((SECONDS - start)) s; ${verdict:-$(tail -1 "$log")}" >>"$summary"
done
echo "$(date -u '+%H:%M:%S') done" >>"$summary"
