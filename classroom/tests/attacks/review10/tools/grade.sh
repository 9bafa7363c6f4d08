#!/bin/bash
# grade.sh FILE NAME: one submission through `classroom grade` as root, --run-as nobody (no GPU here).
# The grader is /tmp/r10/build/bin/classroom, built from `git archive HEAD` of /work/main (6b321af);
# the autograder from `classroom generate reduce4 --out /tmp/r10/gen --cuda-archs 90`.
f=$1; n=$2
rm -rf /tmp/r10/sub-$n /tmp/r10/work-$n; mkdir -p /tmp/r10/sub-$n/reduce4 /tmp/r10/work-$n; chmod 755 /tmp/r10/work-$n
cp "$f" /tmp/r10/sub-$n/reduce4/kernel.cu
/tmp/r10/build/bin/classroom grade --autograder /tmp/r10/gen/autograder --submission /tmp/r10/sub-$n \
  --work /tmp/r10/work-$n --trusted /tmp/r10/trusted --run-as nobody --seed 7 --jobs 8 --time-budget 1500 \
  --results /tmp/r10/results-$n.json --report /tmp/r10/report-$n.txt > /tmp/r10/grade-$n.log 2>&1
echo "exit $?" >> /tmp/r10/grade-$n.log
