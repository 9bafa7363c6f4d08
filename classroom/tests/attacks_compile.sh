#!/usr/bin/env bash
# Every attack in classroom/tests/attacks/ is a whole reduce4/kernel.cu, written against the
# tree as it was then; the GPU test that grades them (test_gradescope.cpp) is the only other
# place they are compiled. So that a change to reduce4's headers cannot break them unseen (at
# 39b7372 reduce4's variant declarations moved into legacy_last_warp.cuh, and five attacks
# that still declared them scored 0 for "did not compile", not for what they attack), this
# runs the CUDA front end (nvcc -cuda: no machine code, a second or two a file) on each, with
# reduce4's and common's headers, as the tree builds it.
#
#   classroom/tests/attacks_compile.sh NVCC REPO
set -uo pipefail
nvcc=${1:?usage: attacks_compile.sh NVCC REPO}
repo=${2:?usage: attacks_compile.sh NVCC REPO}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# One front end a core at a time (each is single-threaded; one after the other they took
# 104 s on CI's two cores), then the verdicts in the files' order.
cores=$(nproc 2>/dev/null || echo 2)
shopt -s nullglob
attacks=("$repo"/classroom/tests/attacks/[0-9]*.cu)
for i in "${!attacks[@]}"; do
    while (( $(jobs -rp | wc -l) >= cores )); do wait -n; done
    { "$nvcc" -std=c++20 -cuda -I "$repo/reduce4" -I "$repo/common" "${attacks[i]}" -o "$out/$i.ii" >"$out/$i.log" 2>&1
      echo $? >"$out/$i.status"; } &
done
wait
failed=0 count=0
for i in "${!attacks[@]}"; do
    count=$((count + 1))
    if [[ $(cat "$out/$i.status" 2>/dev/null) != 0 ]]; then
        echo "attacks_compile.sh: $(basename "${attacks[i]}") does not compile as reduce4/kernel.cu:"
        head -20 "$out/$i.log"
        failed=$((failed + 1))
    fi
done
(( count > 0 )) || { echo "attacks_compile.sh: no attack files under $repo/classroom/tests/attacks"; exit 1; }
echo "attacks_compile.sh: $((count - failed)) of $count attacks compile as reduce4/kernel.cu"
(( failed == 0 ))
