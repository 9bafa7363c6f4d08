#!/usr/bin/env bash
# Finding 1 on a GPU machine: two gradings at once, each in its own PID namespace (as two
# containers on one host are), both running the student's code as the same user id, each
# with its own lock (as containers each have their own /run). A grades
# 01-nproc-cross-grading.cu; B grades the reference once alone (control), then while A's
# feedback step holds the user's task slots.
#
#   sudo bash classroom/tests/attacks/review4/cross_grading.sh REPO OUT
# REPO: the kit's checkout (B's kernel is REPO/reduce4/kernel.cu, the reference).
# Needs /autograder as scripts/gradescope_fixtures.sh leaves it (setup.sh run: the tool in
# /autograder/classroom-build, /autograder/trusted, /autograder/work, classroom-student).
# Before the mend (f77b8d7), the review predicted: B alone 100 (exit 0); A 100 (exit 0;
# its feedback line "did not finish in time"); B during A 0 (exit 1: a recorded grade,
# "did not compile", e.g. "nvcc fatal : Failed to preprocess host compiler properties").
# Promised now: B alone 100 (exit 0); A 100; B during A exit 3, "could not grade", the
# task slots named (the grader checks them before anything of the student's runs and at
# the end: classroom/student_user.h), so no grade is recorded.
set -uo pipefail
repo=${1:?usage: cross_grading.sh REPO OUT}
out=${2:?usage: cross_grading.sh REPO OUT}
[[ $(id -u) -eq 0 ]] || { echo "run as root" >&2; exit 2; }
[[ -x /autograder/classroom-build/classroom && -d /autograder/trusted ]] ||
  { echo "set up /autograder first (scripts/gradescope_fixtures.sh)" >&2; exit 2; }
mkdir -p "$out"; out=$(realpath "$out")
source /autograder/source/settings.sh
source /autograder/source/requirements.sh
put_cuda_on_path
tool=/autograder/classroom-build/classroom
subs=/root/xg; rm -rf "$subs"; mkdir -p "$subs/A/reduce4" "$subs/B/reduce4"
here=$(dirname "$(realpath "$0")")
cp "$here/01-nproc-cross-grading.cu" "$subs/A/reduce4/kernel.cu"
cp "$repo/reduce4/kernel.cu" "$subs/B/reduce4/kernel.cu"
mkdir -p /run/classroomA /run/classroomB && chmod 700 /run/classroomA /run/classroomB
grade() {  # NAME WORK LOCKDIR SUBMISSION
  unshare -pf --mount-proc "$tool" grade --autograder /autograder/source --submission "$4" --work "$2" \
    --trusted /autograder/trusted --run-as classroom-student --time-budget "${time_budget_seconds:-540}" \
    --lock "$3/grading.lock" --results "$out/$1.json" --report "$out/$1.txt" >"$out/$1.out" 2>&1
  echo "$1: exit $? score $(grep -m1 '^  "score": ' "$out/$1.json" 2>/dev/null | tr -dc '0-9.')" | tee -a "$out/summary.txt"
}
: >"$out/summary.txt"
rm -rf /autograder/workB
start=$SECONDS; grade B-alone /autograder/workB /run/classroomB "$subs/B"; echo "B-alone: $((SECONDS-start)) s" >>"$out/summary.txt"
rm -rf /autograder/workB
grade A /autograder/work /run/classroomA "$subs/A" &
a=$!
for _ in $(seq 1200); do pgrep -u classroom-student -x gpu_tests >/dev/null && break; sleep 0.5; done
sleep 3
echo "classroom-student tasks when B starts: $(ps -L -u classroom-student --no-headers | wc -l)" | tee -a "$out/summary.txt"
start=$SECONDS; grade B-during-A /autograder/workB /run/classroomB "$subs/B"; echo "B-during-A: $((SECONDS-start)) s" >>"$out/summary.txt"
wait $a
echo "# left running by classroom-student: $(pgrep -u classroom-student -l | tr '\n' ' ')" >>"$out/summary.txt"
cat "$out/summary.txt"
