#!/bin/bash
# grade.sh FILE NAME: one submission through `classroom grade` as root, --run-as nobody (no GPU on this host),
# as review11/tools/grade.sh, in /tmp/r12. The grader: $CLASSROOM, default /work/main/build/release/bin/classroom
# (built from HEAD bd232eb's classroom sources, 2fb88fc's defences); the autograder from
# `classroom generate reduce4 --out /tmp/r12/gen --cuda-archs 90`.
f=$1; n=$2
rm -rf /tmp/r12/sub-$n /tmp/r12/work-$n; mkdir -p /tmp/r12/sub-$n/reduce4 /tmp/r12/work-$n; chmod 755 /tmp/r12/work-$n
cp "$f" /tmp/r12/sub-$n/reduce4/kernel.cu
${CLASSROOM:-/work/main/build/release/bin/classroom} grade --autograder /tmp/r12/gen/autograder --submission /tmp/r12/sub-$n \
  --work /tmp/r12/work-$n --trusted /tmp/r12/trusted --run-as nobody --seed 7 --jobs 2 --time-budget 1500 \
  --results /tmp/r12/results-$n.json --report /tmp/r12/report-$n.txt > /tmp/r12/grade-$n.log 2>&1
echo "exit $?" >> /tmp/r12/grade-$n.log
