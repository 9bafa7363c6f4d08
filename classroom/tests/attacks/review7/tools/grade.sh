#!/bin/bash
# grade.sh FILE NAME: one submission through classroom grade as root --run-as nobody (no GPU here)
f=$1; n=$2
rm -rf /tmp/r7/sub-$n /tmp/r7/work-$n; mkdir -p /tmp/r7/sub-$n/reduce4 /tmp/r7/work-$n; chmod 755 /tmp/r7/work-$n
cp "$f" /tmp/r7/sub-$n/reduce4/kernel.cu
/tmp/review7-build/bin/classroom grade --autograder /tmp/r7/gen/autograder --submission /tmp/r7/sub-$n \
  --work /tmp/r7/work-$n --trusted /tmp/r7/trusted --run-as nobody --seed 7 --jobs 2 --time-budget 900 \
  --results /tmp/r7/results-$n.json --report /tmp/r7/report-$n.txt > /tmp/r7/grade-$n.log 2>&1
echo "exit $?" >> /tmp/r7/grade-$n.log
