#!/bin/bash
# grade.sh FILE NAME: one submission through `classroom grade` as root, --run-as nobody (no GPU here).
# The grader is /tmp/r9build/bin/classroom, built from `git archive HEAD` of /work/main (4814862);
# the autograder from `classroom generate reduce4 --out /tmp/r9/gen --cuda-archs 90`.
f=$1; n=$2
rm -rf /tmp/r9/sub-$n /tmp/r9/work-$n; mkdir -p /tmp/r9/sub-$n/reduce4 /tmp/r9/work-$n; chmod 755 /tmp/r9/work-$n
cp "$f" /tmp/r9/sub-$n/reduce4/kernel.cu
/tmp/r9build/bin/classroom grade --autograder /tmp/r9/gen/autograder --submission /tmp/r9/sub-$n \
  --work /tmp/r9/work-$n --trusted /tmp/r9/trusted --run-as nobody --seed 7 --jobs 8 --time-budget 1500 \
  --results /tmp/r9/results-$n.json --report /tmp/r9/report-$n.txt > /tmp/r9/grade-$n.log 2>&1
echo "exit $?" >> /tmp/r9/grade-$n.log
