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
# nsys from PATH, else from an Nsight Systems or Nsight Compute install (the latter ships
# a copy of nsys for its own use).
nsys=$(command -v nsys || true)
if [[ -z $nsys ]]; then
    for candidate in /opt/nvidia/nsight-systems*/bin/nsys /usr/local/cuda/bin/nsys \
                     /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys; do
        [[ -x $candidate ]] && { nsys=$candidate; break; }
    done
fi
[[ -n $nsys ]] || {
    echo "timeline.sh: nsys (Nsight Systems) not found: install Nsight Systems (developer.nvidia.com/nsight-systems) and add it to PATH" >&2
    exit 3
}
exe=build/release/bin/reduce_all
[[ -x $exe ]] || { echo "timeline.sh: $exe not found: build first (README.md)" >&2; exit 3; }
out=build/timeline
echo "nsys: $nsys ($("$nsys" --version 2>&1 | head -1))"
"$nsys" profile --trace=cuda,nvtx --force-overwrite=true --output "$out" "$exe" --iters 5 --warmup 1 "$@"
[[ -f $out.nsys-rep ]] || {
    echo "timeline.sh: nsys wrote no $out.nsys-rep (it may have left only a .qdstrm it could not convert)" >&2
    exit 3
}
"$nsys" stats --force-export=true --report nvtx_sum --report cuda_gpu_kern_sum --report cuda_gpu_trace "$out.nsys-rep"
