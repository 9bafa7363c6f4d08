#!/bin/bash
# grade.sh FILE NAME: one submission through `classroom grade` as root, --run-as nobody (no GPU on the host).
# The grader is $CLASSROOM, default /work/main/build/release/bin/classroom (at HEAD 2c027cb when the evidence was taken, 17:10-17:30 UTC);
# the autograder from `classroom generate reduce4 --out /tmp/r11/gen --cuda-archs 90`.
f=$1; n=$2
rm -rf /tmp/r11/sub-$n /tmp/r11/work-$n; mkdir -p /tmp/r11/sub-$n/reduce4 /tmp/r11/work-$n; chmod 755 /tmp/r11/work-$n
cp "$f" /tmp/r11/sub-$n/reduce4/kernel.cu
${CLASSROOM:-/work/main/build/release/bin/classroom} grade --autograder /tmp/r11/gen/autograder --submission /tmp/r11/sub-$n \
  --work /tmp/r11/work-$n --trusted /tmp/r11/trusted --run-as nobody --seed 7 --jobs 2 --time-budget 1500 \
  --results /tmp/r11/results-$n.json --report /tmp/r11/report-$n.txt > /tmp/r11/grade-$n.log 2>&1
echo "exit $?" >> /tmp/r11/grade-$n.log
