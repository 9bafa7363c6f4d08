#!/usr/bin/env bash
# Gradescope's path, tried as a new instructor would, on a machine with a GPU, as root:
# generate an assignment, unpack autograder.zip as /autograder/source, run setup.sh and
# run_autograder exactly as Gradescope does, for two uploads: the reference solution and
# an attempt to read the solution at compile time with the source check switched off (the
# privilege drop alone must stop it). Prints a transcript; writes nothing outside
# /autograder and the --out folder.
#
#   sudo scripts/gradescope_trial.sh [--classroom build/release/bin/classroom] [--assignment reduce4]
# (REDUCTION_COMMIT names the commit where the tree is not a git checkout.)
#
# It replaces /autograder: run it on a grading machine or a throwaway one, never on a
# Gradescope runner in use.
set -uo pipefail
classroom=build/release/bin/classroom
assignment=reduce4
while [[ $# -gt 0 ]]; do
  case "$1" in
    --classroom) classroom=$2; shift 2 ;;
    --assignment) assignment=$2; shift 2 ;;
    *) echo "gradescope_trial.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ $(id -u) -eq 0 ]] || { echo "gradescope_trial.sh: run as root (Gradescope runs setup.sh and run_autograder as root)" >&2; exit 2; }
classroom=$(realpath "$classroom")
handout=$(mktemp -d)
step() { echo; echo "\$ $*"; "$@"; echo "(exit $?)"; }

echo "# Gradescope trial of $assignment on $(nvidia-smi --query-gpu=name,serial --format=csv,noheader | head -1), $(date -u '+%Y-%m-%d %H:%M UTC'), commit ${REDUCTION_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
step "$classroom" generate "$assignment" --out "$handout"
stage=${assignment%%..*}
cp "$handout/autograder/solution/$stage/kernel.cu" "$handout/reference.cu"

rm -rf /autograder && mkdir -p /autograder/source
step cmake -E chdir /autograder/source cmake -E tar xf "$handout/autograder.zip"
echo; echo "\$ bash /autograder/source/setup.sh   (output in setup.log; last lines:)"
start=$SECONDS
bash /autograder/source/setup.sh >"$handout/setup.log" 2>&1
echo "(exit $?, $((SECONDS - start)) s)"; tail -3 "$handout/setup.log"

echo; echo "# What the student's user can reach after setup:"
step ls -ld /autograder/source /autograder/trusted /autograder/results /autograder/work
step ls /autograder/source
step runuser -u classroom-student -- cat /autograder/source/manifest.txt
step runuser -u classroom-student -- ls /autograder/trusted
step runuser -u classroom-student -- touch /autograder/results/results.json

grade() {  # $1: a name, $2: the kernel.cu to upload
  rm -rf /autograder/submission /autograder/results && mkdir -p /autograder/submission /autograder/results
  cp "$2" /autograder/submission/kernel.cu
  echo; echo "# Upload: $1"; echo "\$ /autograder/source/run_autograder"
  start=$SECONDS
  bash /autograder/source/run_autograder >/dev/null 2>&1
  echo "(exit $?, $((SECONDS - start)) s); /autograder/results/report.txt:"
  cat /autograder/results/report.txt
}
grade "the reference solution (one file, as Gradescope receives it)" "$handout/reference.cu"
cp /autograder/results/results.json "$handout/reference.json"

# The instructor switches the source check off for this one upload, to show that the
# privilege drop alone keeps the solution (removed at setup, and unreadable) out of reach.
printf '#include "/autograder/source/solution/%s/kernel.cu"\n' "$stage" >"$handout/include-solution.cu"
cp /autograder/source/source_policy.txt "$handout/policy.txt"
echo "check off" >/autograder/source/source_policy.txt
grade "one line, #include \"/autograder/source/solution/$stage/kernel.cu\", with the source check off" "$handout/include-solution.cu"
cp "$handout/policy.txt" /autograder/source/source_policy.txt
echo; echo "# Left running by the student's user after the gradings:"
step pgrep -u classroom-student -l
rm -rf "$handout"
