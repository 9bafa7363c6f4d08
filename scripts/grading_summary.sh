#!/usr/bin/env bash
# One CSV row per grading report that `ctest --preset grading` wrote (classroom/tests/
# test_grading.cpp): the stage, the submission, the score, and the performance test's
# measured time ratios, for docs/classroom.md.
#
#   scripts/grading_summary.sh build/release/classroom/tests/grading/examples > docs/results/grading/grading.csv
set -euo pipefail
dir=${1:?usage: scripts/grading_summary.sh EXAMPLES_DIR}
echo "stage,fixture,score,max_score,vs_reference,vs_previous,previous_vs_reference,threshold"
for report in "$dir"/reduce*-*.txt; do
    name=$(basename "$report" .txt)
    stage=${name%%-*}
    fixture=${name#*-}
    awk -v stage="$stage" -v fixture="$fixture" '
        /^total: / { score = $2; max = $4 }
        /x the reference solution.s .* us and .*x the previous stage.s/ {
            for (i = 1; i <= NF; ++i) {
                if ($(i + 1) == "the" && $(i + 2) == "reference") vs_ref = $i
                if ($(i + 1) == "the" && $(i + 2) == "previous") vs_prev = $i
            }
        }
        /Full points at or below/ {
            for (i = 1; i <= NF; ++i) {
                if ($i == "below") threshold = $(i + 1)
                if ($i == "takes") prev_ref = $(i + 1)
            }
        }
        END {
            gsub(/x$/, "", vs_ref); gsub(/x$/, "", vs_prev); gsub(/x$/, "", threshold); gsub(/x$/, "", prev_ref)
            print stage "," fixture "," score "," max "," vs_ref "," vs_prev "," prev_ref "," threshold
        }' "$report"
done
