#!/bin/bash
# device_grade.sh FILE...: on the GPU machine, from the repository root: builds the grader (classroom) and the
# reduce4 autograder, then grades each FILE as root with --run-as nobody, seed 7, like tools/grade.sh. Reports to $OUT.
set -o pipefail
R=${SRC:-$PWD}; T=${WORKDIR:-/tmp/r11}; mkdir -p $T; exec > >(tee -a $OUT/device_grade.txt) 2>&1
if [ ! -x $T/build/bin/classroom ]; then
  cmake -S $R -B $T/build -G Ninja -DCMAKE_BUILD_TYPE=Release > $T/cfg.log 2>&1 || { tail -20 $T/cfg.log; exit 1; }
  cmake --build $T/build --target classroom -j 16 > $T/bld.log 2>&1 || { tail -20 $T/bld.log; exit 1; }
  $T/build/bin/classroom generate reduce4 --out $T/gen --cuda-archs 90 | tail -1
  mkdir -p $T/trusted; chmod 700 $T/trusted
fi
id nobody
for f in "$@"; do
  n=$(basename $f .cu); echo "===== $n ($(date -u +%H:%M:%S))"
  rm -rf $T/sub-$n $T/work-$n; mkdir -p $T/sub-$n/reduce4 $T/work-$n; chmod 755 $T/work-$n; cp $f $T/sub-$n/reduce4/kernel.cu
  $T/build/bin/classroom grade --autograder $T/gen/autograder --submission $T/sub-$n --work $T/work-$n --trusted $T/trusted \
    --run-as nobody --seed 7 --jobs 16 --time-budget 1500 --results $OUT/results-$n.json --report $OUT/report-$n.txt > $T/grade-$n.log 2>&1
  echo "exit $?"; grep -E '^(pass|FAIL|total)|RACECHECK SUMMARY|ERROR SUMMARY' $OUT/report-$n.txt | head -20
done
