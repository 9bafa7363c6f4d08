#!/bin/bash
# grade.sh FILE NAME: one submission through classroom grade as root --run-as nobody (no GPU here)
f=$1; n=$2
rm -rf /tmp/r8/sub-$n /tmp/r8/work-$n; mkdir -p /tmp/r8/sub-$n/reduce4 /tmp/r8/work-$n; chmod 755 /tmp/r8/work-$n
cp "$f" /tmp/r8/sub-$n/reduce4/kernel.cu
/tmp/review8-build/bin/classroom grade --autograder /tmp/r8/gen/autograder --submission /tmp/r8/sub-$n \
  --work /tmp/r8/work-$n --trusted /tmp/r8/trusted --run-as nobody --seed 7 --jobs 2 --time-budget 900 \
  --results /tmp/r8/results-$n.json --report /tmp/r8/report-$n.txt > /tmp/r8/grade-$n.log 2>&1
echo "exit $?" >> /tmp/r8/grade-$n.log
