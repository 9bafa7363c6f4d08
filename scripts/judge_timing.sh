#!/usr/bin/env bash
# How steady the grader's performance ratio is (docs/classroom.md, "How the performance
# thresholds were chosen"): builds the judge and the grading workers of reduce3..reduce7 from
# this tree (its kernels are the reference solutions), then runs judge --perf with each
# stage's worker graded against itself (the ratio's noise around 1.000) and the previous
# stage's worker graded against each stage's (the gap a threshold must split), REPEATS times
# each, and prints one line per judging: the ratios, the fixed cost the judge subtracted, and
# the ratio of the workers' own event times (printed by the judge, never judged), beside the
# in-process figure of each stage (CUDA events in one process).
#
#   scripts/judge_timing.sh [REPEATS] > docs/results/grading/judge_timing.csv   # a GPU; a minute or two
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${1:-3}
[[ $repeats =~ ^[1-9][0-9]*$ ]] || { echo "judge_timing.sh: REPEATS is a whole number, not '$repeats'" >&2; exit 2; }
build=build/judge-timing
commit=${REDUCTION_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
started=$(date -u '+%Y-%m-%d %H:%M UTC')
# reduce7's worker is in the tree already (classroom/ builds it, so that CI compiles it).
cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DREDUCTION_BUILD_TESTS=OFF \
      -DREDUCTION_WORKER_DIR="$PWD/classroom/worker" "-DGRADING_WORKERS=reduce3;reduce4;reduce5;reduce6" >/dev/null
cmake --build $build --target judge grade_worker_reduce3 grade_worker_reduce4 grade_worker_reduce5 \
      grade_worker_reduce6 grade_worker_reduce7 reduce3 reduce4 reduce5 reduce6 reduce7 >/dev/null
judge=$build/classroom/judge/judge
worker=$build/bin/grade_worker_reduce
export CLASSROOM_SEED=$RANDOM$RANDOM
echo "graded,reference,previous,repeat,vs_reference,previous_vs_reference,fixed_ms,event_vs_reference,event_previous_vs_reference,reference_slowdown,fixed_rise_ms,trust"
judging() {  # SUBMISSION REFERENCE PREVIOUS REPEAT
    $judge --perf --logs /tmp --worker ${worker}$1 --reference ${worker}$2 --previous ${worker}$3 |
        awk -v s=reduce$1 -v r=reduce$2 -v p=reduce$3 -v k=$4 '
            /^PERF [a-z]+ median_ms=/ { split($3, m, "="); t[$2] = m[2] }
            /^INFO [a-z]+ / { for (i = 3; i <= NF; ++i) if ($i ~ /^worker_event_ms_per_reduction=/) { split($i, e, "="); ev[$2] = e[2] } }
            /^FIXED ms=/ { split($2, f, "="); fixed = f[2] }
            /^CALIBRATION / { match($0, /slowdown [-+0-9.]+/); slowdown = substr($0, RSTART + 9, RLENGTH - 9)
                              match($0, /rise [-+0-9.]+/); rise = substr($0, RSTART + 5, RLENGTH - 5) }
            /^TRUST / { trust = $2 }
            END { printf "%s,%s,%s,%d,%.4f,%.4f,%.4f,%.4f,%.4f,%s,%s,%s\n", s, r, p, k, t["submission"] / t["reference"],
                         t["previous"] / t["reference"], fixed, ev["submission"] / ev["reference"], ev["previous"] / ev["reference"],
                         slowdown, rise, trust }'
}
for stage in 4 5 6 7; do
    for k in $(seq "$repeats"); do
        judging $stage $stage $((stage - 1)) "$k"        # the reference against itself
        judging $((stage - 1)) $stage $((stage - 1)) "$k"  # the previous stage handed in
    done
done
# The CSV first (its header on line 1, as tools/figures reads it), then what it was made with.
echo "# scripts/judge_timing.sh $repeats | commit $commit | $started"
echo "# GPU: $(nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | head -1)"
echo "# judge defaults: 2^26 int, requests of 16 inputs and of 4 to every worker (the fixed cost from the instructor's two), 3 calibration rounds of the instructor's workers alone, then 9 rounds with the submission's worker started and ended around each of its blocks; reference_slowdown and fixed_rise_ms: the rounds against the calibration (timing_model.h's bounds: 0.04 and 0.15 ms); trust: the judge's verdict; seed $CLASSROOM_SEED"
echo "# in process (CUDA events, one process, 2^26 int, median of 50): stage, ms"
for stage in 3 4 5 6 7; do
    $build/bin/reduce$stage --n 2^26 --type int --iters 50 --no-baseline --csv 2>/dev/null |
        awk -F, -v s=reduce$stage 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "median_ms") c = i; next }
                                   $1 == s { print "# " s "," $c }'
done
