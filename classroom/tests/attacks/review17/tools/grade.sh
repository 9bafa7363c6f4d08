#!/bin/bash
# grade.sh FILE NAME: host grading of one reduce4/kernel.cu (the brief's command), as root with --run-as nobody.
# Autograder: /work/main/build/release/bin/classroom generate reduce4 --out /tmp/r17/gen --cuda-archs 90
F=$1; X=$2
cd /work/main
rm -rf /tmp/r17/sub_$X /tmp/r17/work_$X /tmp/r17/res_$X
mkdir -p /tmp/r17/sub_$X/reduce4 && cp "$F" /tmp/r17/sub_$X/reduce4/kernel.cu
build/release/bin/classroom grade --autograder /tmp/r17/gen/autograder --submission /tmp/r17/sub_$X --work /tmp/r17/work_$X --trusted /tmp/r17/trusted --run-as nobody --seed 7 --jobs 2 --time-budget 1500 --results /tmp/r17/res_$X --report /tmp/r17/rep_$X.txt > /tmp/r17/grade_$X.log 2>&1
echo "exit $?" >> /tmp/r17/grade_$X.log
tail -3 /tmp/r17/grade_$X.log
