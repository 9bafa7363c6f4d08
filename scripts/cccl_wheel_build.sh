#!/usr/bin/env bash
# Build against the CCCL headers of the `nvidia-cuda-cccl` wheel (CCCL 3.5 when written)
# instead of the CUDA toolkit's, so that reduce_all and small_inputs time the newest CUB
# (its rows say which: "CCCL 3.5.0 run_to_run", "CCCL 3.5.0 not_guaranteed").
#
#   scripts/cccl_wheel_build.sh                     # build/cccl: small_inputs, reduce_all, gpu_tests
#   scripts/cccl_wheel_build.sh TARGET...           # other targets
#
# Works offline once the wheel is unpacked into .cccl35/ (git ignores it):
#   pip download nvidia-cuda-cccl --no-deps -d /tmp/cccl && unzip -q -o /tmp/cccl/*.whl -d .cccl35
# CCCL_DIR overrides where the unpacked wheel is; BUILD_DIR where the build goes.
set -euo pipefail
cd "$(dirname "$0")/.."
wheel=${CCCL_DIR:-.cccl35}
include=$(find "$wheel" -path '*/include/cccl/cub/version.cuh' -print -quit 2>/dev/null || true)
[[ -n $include ]] || {
    echo "cccl_wheel_build.sh: no include/cccl/cub/version.cuh under $wheel: unpack the nvidia-cuda-cccl wheel there (see the header of this script)" >&2
    exit 2
}
include=$(cd "$(dirname "$include")/.." && pwd)
build=${BUILD_DIR:-build/cccl}
arch_args=()
if [[ -z ${CUDAARCHS:-} ]] && caps=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null); then
    arch_args=(-DCMAKE_CUDA_ARCHITECTURES="$(echo "$caps" | head -1 | tr -d '.')")
fi
echo "== CCCL headers: $include ($(grep -m1 '#define CCCL_VERSION' "$include/cuda/std/__cccl/version.h"))"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${arch_args[@]}" -DREDUCTION_CCCL_INCLUDE_DIR="$include" >/dev/null
targets=("$@")
(( ${#targets[@]} )) || targets=(small_inputs reduce_all gpu_tests)
cmake --build "$build" --target "${targets[@]}"
echo "== built in $build: ${targets[*]}"
