#!/bin/bash
# grade.sh FILE NAME [TRUSTED]: host grading of one reduce4/kernel.cu, as root with --run-as nobody (review 17's tools/grade.sh,
# in /tmp/r18). Autograder: build/release/bin/classroom generate reduce4 --out /tmp/r18/gen --cuda-archs 90
# On a host without a GPU it runs the tamper check, both checks and the worker's build, then stops at the GPU steps.
F=$1; X=$2
cd /work/main
T=${3:-/tmp/r18/trusted_$X}
rm -rf /tmp/r18/sub_$X /tmp/r18/work_$X /tmp/r18/res_$X; [ -n "$3" ] || rm -rf $T
mkdir -p /tmp/r18/sub_$X/reduce4 $T && cp "$F" /tmp/r18/sub_$X/reduce4/kernel.cu
build/release/bin/classroom grade --autograder /tmp/r18/gen/autograder --submission /tmp/r18/sub_$X --work /tmp/r18/work_$X --trusted $T --run-as nobody --seed 7 --jobs 4 --time-budget 1500 --results /tmp/r18/res_$X --report /tmp/r18/rep_$X.txt > /tmp/r18/grade_$X.log 2>&1
echo "exit $?" >> /tmp/r18/grade_$X.log
tail -3 /tmp/r18/grade_$X.log
