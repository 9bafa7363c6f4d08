#!/bin/bash
# /tmp/r16/grade.sh FILE NAME: host grading of one reduce4/kernel.cu (the brief's command)
F=$1; X=$2
cd /work/main
rm -rf /tmp/r16/sub_$X /tmp/r16/work_$X
mkdir -p /tmp/r16/sub_$X/reduce4 && cp "$F" /tmp/r16/sub_$X/reduce4/kernel.cu
build/release/bin/classroom grade --autograder /tmp/r16/gen/autograder --submission /tmp/r16/sub_$X --work /tmp/r16/work_$X --trusted /tmp/r16/trusted --run-as nobody --seed 7 --jobs 2 --time-budget 1500 --results /tmp/r16/res_$X --report /tmp/r16/rep_$X.txt > /tmp/r16/grade_$X.log 2>&1
echo "exit $?" >> /tmp/r16/grade_$X.log
tail -3 /tmp/r16/grade_$X.log
