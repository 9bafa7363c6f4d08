#!/bin/bash
# device_grade_head.sh FILE...: device_grade.sh with the grader of the last commit (git archive HEAD), not the working tree's.
mkdir -p /tmp/head && git archive HEAD | tar -x -C /tmp/head && git log --oneline -1 | tee -a $OUT/device_grade.txt
SRC=/tmp/head WORKDIR=/tmp/r11h bash classroom/tests/attacks/review11/tools/device_grade.sh "$@"
