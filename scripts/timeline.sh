#!/usr/bin/env bash
# An Nsight Systems timeline of the runner: every timed kernel sits inside an NVTX range
# named "<stage> <kernel> <type> n=<n>", so the timeline shows which stage ran where.
#
#   scripts/timeline.sh                       # reduce_all at its defaults
#   scripts/timeline.sh --n 2^24 --type int   # any reduce_all options
#
# Writes build/timeline.nsys-rep (open it in the Nsight Systems GUI) and prints the NVTX
# and kernel summaries.
set -euo pipefail
# shellcheck source=scripts/lib/nsys.sh
source "$(dirname "$0")/lib/nsys.sh"
nsys=$(find_nsys)
[[ -n $nsys ]] || {
    echo "timeline.sh: nsys (Nsight Systems) not found: install Nsight Systems (developer.nvidia.com/nsight-systems) and add it to PATH" >&2
    exit 3
}
exe=build/release/bin/reduce_all
[[ -x $exe ]] || { echo "timeline.sh: $exe not found: build first (README.md)" >&2; exit 3; }
out=build/timeline
echo "nsys: $nsys ($("$nsys" --version 2>&1 | head -1))"
rm -f "$out.nsys-rep" "$out.qdstrm"
"$nsys" profile --trace=cuda,nvtx --force-overwrite=true --output "$out" "$exe" --iters 5 --warmup 1 "$@" || true
import_qdstrm "$nsys" "$out"  # where nsys could not convert its own recording
[[ -f $out.nsys-rep ]] || {
    echo "timeline.sh: nsys wrote no $out.nsys-rep, and its QdstrmImporter made none from a .qdstrm (see ${out}_import.log)" >&2
    exit 3
}
"$nsys" stats --force-export=true --report nvtx_sum --report cuda_gpu_kern_sum --report cuda_gpu_trace "$out.nsys-rep"
