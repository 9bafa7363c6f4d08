#!/usr/bin/env bash
# The instructor quick start of docs/classroom.md, tried from a fresh copy of the repository
# as a new instructor would, on a machine with a GPU, as root: build the classroom tool,
# generate an assignment, self-test its autograder, edit the rubric and pack the zip again,
# then Gradescope's path (the zip unpacked as /autograder/source, setup.sh, run_autograder
# for the reference, the handed-out stub and the reference again, warm), then a batch of the
# same two as two students. Writes a transcript (with each step's time) and the files it
# quotes to OUT.
#
#   sudo scripts/instructor_quickstart.sh OUT [ASSIGNMENT]     (default reduce4)
# (REDUCTION_COMMIT names the commit where the tree is not a git checkout.)
#
# It replaces /autograder: run it on a grading machine or a throwaway one.
set -uo pipefail
out=${1:?usage: instructor_quickstart.sh OUT [ASSIGNMENT]}
assignment=${2:-reduce4}
[[ $(id -u) -eq 0 ]] || { echo "instructor_quickstart.sh: run as root (Gradescope runs its scripts as root)" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(realpath "$out")
transcript="$out/quickstart.txt"
commit=${REDUCTION_COMMIT:-$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)}

# A fresh copy: the repository's files without any build folder, in a folder of its own.
place=$(mktemp -d)
tar -C "$repo" --exclude=./build --exclude=./.git -cf - . | tar -C "$place" -xf - && mkdir -p "$place/reduction"
(cd "$place" && find . -mindepth 1 -maxdepth 1 ! -name reduction -exec mv {} reduction/ \;)
cd "$place/reduction" || exit 1

step() {  # prints the command, runs it, prints its exit status and time
  echo; echo "\$ $*"
  local start=$SECONDS
  "$@"
  local status=$?
  echo "(exit $status, $((SECONDS - start)) s)"
  return $status
}
quiet() {  # the same for a long step: its output in OUT/<log>, its last lines here
  local log=$1; shift
  echo; echo "\$ $*   (output in $log; last lines:)"
  local start=$SECONDS
  "$@" >"$out/$log" 2>&1
  local status=$?
  tail -3 "$out/$log"
  echo "(exit $status, $((SECONDS - start)) s)"
  return $status
}

exec > >(tee "$transcript") 2>&1
echo "# The instructor quick start ($assignment) on $(nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | head -1),"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit, $(nproc) cores, $(cmake --version | head -1)"
echo "# a fresh copy of the repository in $place/reduction (no build folder)"

quiet configure.log cmake --preset release || exit 1
quiet build.log cmake --build --preset release --target classroom || exit 1
handout=../handout/$assignment
step build/release/bin/classroom generate "$assignment" --out "$handout" --time-budget 540 --cuda-archs 90 || exit 1
step ls "$handout" "$handout/student"
step cat "$handout/autograder/settings.sh"
step build/release/bin/classroom selftest "$handout/autograder"

# The instructor's edit: the rubric's partial credit off, then the zip packed again.
echo; echo "# Edit the rubric (partial credit off: all or nothing at the threshold) and pack the zip again:"
sed -i 's/^partial-credit .*/partial-credit off/' "$handout/autograder/rubric.txt"
step grep -n '^partial-credit' "$handout/autograder/rubric.txt"
step build/release/bin/classroom pack "$handout/autograder"

rm -rf /autograder && mkdir -p /autograder/source
step cmake -E chdir /autograder/source cmake -E tar xf "$(realpath "$handout/autograder.zip")"
step grep -n '^partial-credit' /autograder/source/rubric.txt
quiet setup.log bash /autograder/source/setup.sh || exit 1

first=${assignment%%..*}
first=${first#reduce}
last=${assignment##*reduce}   # reduce4 -> 4, reduce3..reduce5 -> 5
upload() {  # $1: a name; the kernels of every assigned stage from folder $2, as one zip's content
  rm -rf /autograder/submission /autograder/results && mkdir -p /autograder/submission /autograder/results
  local n
  for ((n = first; n <= last; n++)); do
    mkdir -p "/autograder/submission/reduce$n" && cp "$2/reduce$n/kernel.cu" "/autograder/submission/reduce$n/kernel.cu"
  done
  echo; echo "# Upload: $1"
  quiet "run_autograder-$1.out" bash /autograder/source/run_autograder
  cp /autograder/results/results.json "$out/results-$1.json" 2>/dev/null
  cp /autograder/results/report.txt "$out/report-$1.txt" 2>/dev/null
  echo "results.json:$(grep -m1 '"score"' /autograder/results/results.json 2>/dev/null | tr -d ',' || echo ' none')" \
       "$(grep -m1 '"execution_time"' /autograder/results/results.json 2>/dev/null | tr -d ',')"
}
upload reference "$handout/autograder/solution"
upload stub "$handout/student"
upload reference-warm "$handout/autograder/solution"

# Outside Gradescope: the same two as two students, each a folder with the stages' kernels.
submissions=$(mktemp -d)
chmod 0700 "$submissions"
for ((n = first; n <= last; n++)); do
  mkdir -p "$submissions/alice/reduce$n" "$submissions/bob/reduce$n"
  cp "$handout/autograder/solution/reduce$n/kernel.cu" "$submissions/alice/reduce$n/"
  cp "$handout/student/reduce$n/kernel.cu" "$submissions/bob/reduce$n/"
done
step build/release/bin/classroom batch --autograder "$handout/autograder" --submissions "$submissions" \
     --out "$place/graded" --run-as classroom-student
step cat "$place/graded/scores.csv"
cp "$place/graded/scores.csv" "$out/scores.csv" 2>/dev/null
echo; echo "# Left running by classroom-student: $(pgrep -u classroom-student -l | tr '\n' ' ')"
rm -rf "$place" "$submissions"
