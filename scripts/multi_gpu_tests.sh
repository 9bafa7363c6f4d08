#!/usr/bin/env bash
# The test suite on a machine with two GPUs or more, as root and as an ordinary user, into one
# record: README's `ctest --preset release` (everything, the two-GPU, two-process and mpirun
# tests included) as whoever runs this, then `ctest -L multi_gpu` as the ordinary user USER.
# Build first (README.md, command 2's cmake steps).
#
#   scripts/multi_gpu_tests.sh [--user USER] [--label-only] OUTFILE
#
# --label-only runs `ctest -L multi_gpu` in both places (build the multi-GPU targets only:
# reduce_multi_gpu multi_gpu_host_tests multi_gpu_gpu_tests), for a check of that folder alone.
#
# --user needs root. It is meant for a lent or scratch machine: it creates USER if there is
# none, lets every user into the folders above the repository (o+x) and makes the build's
# Testing/ folder writable by all, which is all ctest and the multi-GPU tests write there.
set -uo pipefail
cd "$(dirname "$0")/.."
user=
if [[ ${1:-} == --user ]]; then
    user=${2:?--user needs a name}
    shift 2
fi
label_only=no
if [[ ${1:-} == --label-only ]]; then
    label_only=yes
    shift
fi
out=${1:?usage: scripts/multi_gpu_tests.sh [--user USER] OUTFILE}
build=build/release
[[ -d $build ]] || { echo "multi_gpu_tests.sh: $build not found: build first (README.md)" >&2; exit 3; }
source scripts/lib/provenance.sh
mkdir -p "$(dirname "$out")"

# Runs ctest, echoing the command, and keeps its output's summary and any failure.
suite() {
    local who=$1
    shift
    echo
    echo "\$ $*   # as $who"
    local log status
    log=$(mktemp)
    "$@" >"$log" 2>&1
    status=$?
    # Every test's line for the multi-GPU ones, the summary, and what failed.
    grep -E "multi_gpu|tests passed|tests failed|\*\*\*|Failed|Not Run|Skipped|Total Test time" "$log"
    echo "(exit status $status)"
    rm -f "$log"
    return $status
}

{
    provenance "scripts/multi_gpu_tests.sh${user:+ --user $user}$([[ $label_only == yes ]] && echo ' --label-only') $out"
    echo "# GPUs: $(nvidia-smi --query-gpu=name,serial --format=csv,noheader 2>/dev/null | sort | uniq -c | xargs)"
    echo "# mpirun: $(command -v mpirun || echo none) $(mpirun --version 2>&1 | head -1)"
    echo "# user: $(id -un) (uid $(id -u))"
    status=0
    if [[ $label_only == yes ]]; then
        suite "$(id -un)" ctest --test-dir "$build" -L multi_gpu --output-on-failure || status=1
    else
        suite "$(id -un)" ctest --preset release --output-on-failure || status=1
    fi
    if [[ -n $user ]]; then
        if [[ $(id -u) != 0 ]]; then
            echo "--user needs root"
            status=1
        else
            id "$user" >/dev/null 2>&1 || useradd -m "$user"
            dir=$PWD
            while [[ $dir != / ]]; do chmod o+x "$dir"; dir=$(dirname "$dir"); done
            chmod -R o+rX .
            mkdir -p "$build/Testing/Temporary"
            chmod -R a+rwX "$build/Testing"
            echo "# $user: uid $(id -u "$user"), groups $(id -Gn "$user"); /dev/nvidia0: $(stat -c '%A' /dev/nvidia0 2>/dev/null)"
            suite "$user" runuser -u "$user" -- env PATH="$PATH" ctest --test-dir "$build" -L multi_gpu --output-on-failure ||
                status=1
        fi
    fi
    echo
    echo "multi_gpu_tests.sh: $([[ $status == 0 ]] && echo passed || echo FAILED)"
    exit $status
} 2>&1 | tee "$out"
exit "${PIPESTATUS[0]}"
