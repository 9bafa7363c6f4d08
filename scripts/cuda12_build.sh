#!/usr/bin/env bash
# The project built and tested with CUDA 12 (README.md says 12.x or 13.x): configures with a
# CUDA 12 nvcc, builds into build/cuda12 and runs the README's tests there (the GPU tests
# report themselves skipped without a GPU). Nothing is installed on the system: unless
# --toolkit names one, a CUDA 12.4 Update 1 toolkit is assembled in .deps/cuda12/toolkit.
#
#   scripts/cuda12_build.sh [--out FILE]        # assemble (downloading what .whl12/ lacks), build, test
#   scripts/cuda12_build.sh --download          # only fetch the packages into .whl12/ (needs the network)
#   scripts/cuda12_build.sh --pack              # assemble and write .deps/cuda12.tar.xz (about 35 MB)
#   scripts/cuda12_build.sh --toolkit DIR       # an installed CUDA 12 instead (DIR/bin/nvcc), e.g. /usr/local/cuda-12.9
#   scripts/cuda12_build.sh ... -- -DNCCL_ROOT=DIR   # what follows -- goes to cmake's configure
#
# A machine without the network builds from .deps/cuda12.tar.xz when there is one (copy it
# there with the tree), or from the packages in .whl12/. --out FILE also writes the transcript
# (versions, commands, the test summary) to FILE. CUDAARCHS chooses the GPUs to build for,
# as for the release build (README.md); REDUCTION_COMMIT names the commit where the tree is
# not a git checkout.
#
# Where the assembled toolkit comes from, all of it CUDA 12.4 Update 1:
#   nvcc, cicc, cudafe++, ptxas, fatbinary, nvlink, libdevice  Debian's nvidia-cuda-toolkit 12.4.131 (trixie, non-free)
#   CUB, Thrust, libcu++ 2.3.2 (the CCCL of CUDA 12.4)       Debian's libcub-dev, libthrust-dev, libcu++-dev (trixie)
#   runtime headers, libcudart.so.12, crt headers, NVTX      NVIDIA's wheels nvidia-cuda-runtime-cu12 12.4.127,
#                                                            nvidia-cuda-nvcc-cu12 12.4.131, nvidia-nvtx-cu12 12.4.127
#                                                            (pip install --target)
# PyPI alone does not make a compiler: nvidia-cuda-nvcc-cu12 (12.0 ... 12.9) holds ptxas,
# libnvvm and the crt headers, not the nvcc driver, cicc or cudafe++; and the 12.4 CCCL wheel
# lacks most of libcu++. The .debs are fetched with apt-get download from a private apt
# configuration in .whl12/apt (the system's sources are not changed) and unpacked, not installed.
set -euo pipefail
export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1
cd "$(dirname "$0")/.."
name=$(basename "$0")

packages=.whl12
deps=.deps/cuda12
archive=.deps/cuda12.tar.xz
build=build/cuda12
wheels=("nvidia-cuda-nvcc-cu12==12.4.131" "nvidia-cuda-runtime-cu12==12.4.127" "nvidia-nvtx-cu12==12.4.127")
debs=(nvidia-cuda-toolkit libcub-dev libthrust-dev libcu++-dev)

command_line="scripts/cuda12_build.sh $*"
mode=build toolkit="" out="" cmake_args=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --download) mode=download ;;
        --pack) mode=pack ;;
        --toolkit) toolkit=${2:?--toolkit needs a folder}; shift ;;
        --out) out=${2:?--out needs a file}; shift ;;
        --) shift; cmake_args=("$@"); break ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "$name: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift
done
if [[ -n $out ]]; then
    mkdir -p "$(dirname "$out")"
    exec > >(tee "$out") 2>&1
fi

# The packages into .whl12/: three wheels from PyPI, four .debs from Debian trixie.
download() {
    mkdir -p "$packages/apt/lists/partial" "$packages/apt/cache/archives/partial"
    python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
        --python-version 3.11 --dest "$packages" "${wheels[@]}"
    cat >"$packages/apt/sources.list" <<EOF
deb http://deb.debian.org/debian trixie main non-free
EOF
    local apt=(-o "Dir::Etc::SourceList=$PWD/$packages/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
               -o "Dir::State::Lists=$PWD/$packages/apt/lists" -o "Dir::Cache=$PWD/$packages/apt/cache")
    apt-get "${apt[@]}" update -qq
    (cd "$packages" && apt-get "${apt[@]}" download "${debs[@]/%//trixie}" 2>&1 | grep -v "^W: Download is performed unsandboxed" || true)
    for deb in "${debs[@]}"; do
        compgen -G "$packages/${deb}_*.deb" >/dev/null || { echo "$name: apt-get download $deb failed" >&2; exit 3; }
    done
}

# The wheel file of "name==version", e.g. .whl12/nvidia_nvtx_cu12-12.4.127-py3-none-....whl.
wheel_file() {
    local spec=$1
    compgen -G "$packages/$(echo "${spec%%==*}" | tr - _)-${spec#*==}-*.whl" | head -1
}

have_packages() {
    local deb spec
    for deb in "${debs[@]}"; do compgen -G "$packages/${deb}_*.deb" >/dev/null || return 1; done
    for spec in "${wheels[@]}"; do [[ -n $(wheel_file "$spec") ]] || return 1; done
}

unpack_deb() {  # unpack_deb FILE DIR: the files of a .deb, without installing it
    if command -v dpkg-deb >/dev/null; then
        dpkg-deb -x "$1" "$2"
    else
        local data
        data=$(ar t "$1" | grep '^data\.tar')
        ar p "$1" "$data" | tar -x -C "$2" -f - --use-compress-program="$( [[ $data == *.xz ]] && echo xz || echo zstd) -d"
    fi
}

# A CUDA toolkit's layout in $deps/toolkit, from the packages.
assemble() {
    local work=$deps/unpacked tk=$deps/toolkit deb d
    rm -rf "$deps" && mkdir -p "$work/debs" "$tk/bin/crt" "$tk/nvvm/bin" "$tk/nvvm/libdevice" "$tk/include" "$tk/lib64"
    local spec files=()
    for spec in "${wheels[@]}"; do files+=("$(wheel_file "$spec")"); done
    python3 -m pip install --quiet --no-index --no-deps --target "$work/wheels" "${files[@]}"
    for deb in "${debs[@]}"; do unpack_deb "$(compgen -G "$packages/${deb}_*.deb" | head -1)" "$work/debs"; done
    d=$work/debs/usr
    cp "$d/lib/nvidia-cuda-toolkit/bin/nvcc" "$d"/bin/{cudafe++,fatbinary,nvlink,ptxas,bin2c,nvprune,cu++filt} "$tk/bin/"
    cp "$d"/lib/nvidia-cuda-toolkit/bin/crt/*.stub "$tk/bin/crt/"
    cp "$d/lib/nvidia-cuda-toolkit/bin/cicc" "$tk/nvvm/bin/"
    cp "$d/lib/nvidia-cuda-toolkit/libdevice/libdevice.10.bc" "$tk/nvvm/libdevice/"
    # nvcc's own nvcc.profile, as in NVIDIA's toolkit: everything relative to bin/.
    cat >"$tk/bin/nvcc.profile" <<'EOF'

TOP              = $(_HERE_)/..

NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice

LD_LIBRARY_PATH += $(TOP)/lib64:
PATH            += $(TOP)/nvvm/bin:$(_HERE_):

INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)

LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib64"

CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
EOF
    local w=$work/wheels/nvidia
    cp -r "$w/cuda_runtime/include/." "$w/cuda_nvcc/include/." "$w/nvtx/include/." "$tk/include/"
    cp -r "$d"/include/{cub,thrust,cuda,nv} "$tk/include/"
    find "$tk/include" \( -name __init__.py -o -name __pycache__ \) -prune -exec rm -rf {} +
    cp "$w/cuda_runtime/lib/libcudart.so.12" "$tk/lib64/"
    ln -s libcudart.so.12 "$tk/lib64/libcudart.so"
    # CMake links its compiler check with -lcudadevrt -lcudart_static, which the wheel lacks
    # (and which another CUDA's may then stand in for): that name is the shared runtime here,
    # and libcudadevrt (only for relocatable device code, which the project does not use) empty.
    echo "INPUT(libcudart.so.12)" >"$tk/lib64/libcudart_static.a"
    ar rc "$tk/lib64/libcudadevrt.a"
    rm -rf "$work"
}

if [[ $mode == download ]]; then
    download
    du -sh "$packages"/*.whl "$packages"/*.deb
    exit 0
fi

if [[ -z $toolkit ]]; then
    toolkit=$deps/toolkit
    if [[ ! -x $toolkit/bin/nvcc ]]; then
        if [[ $mode != pack && -f $archive ]]; then
            echo "== the toolkit from $archive"
            tar -xJf "$archive" -C .deps
        else
            have_packages || download
            echo "== the toolkit assembled in $toolkit"
            assemble
        fi
    fi
    if [[ $mode == pack ]]; then
        tar -cJf "$archive" -C .deps cuda12/toolkit
        du -h "$archive"
        exit 0
    fi
fi
toolkit=$(cd "$toolkit" && pwd)
[[ -x $toolkit/bin/nvcc ]] || { echo "$name: no $toolkit/bin/nvcc" >&2; exit 3; }

# CUDA 12.4 takes GCC up to 13 as the host compiler: a newer default gets an older one if present.
host=()
gcc_major=$(g++ -dumpversion | cut -d. -f1)
if [[ $gcc_major -gt 13 ]]; then
    for older in g++-13 g++-12; do
        if command -v $older >/dev/null; then host=(-DCMAKE_CUDA_HOST_COMPILER="$(command -v $older)"); break; fi
    done
fi

echo "\$ ${CUDAARCHS:+CUDAARCHS=\"$CUDAARCHS\" }$command_line"
echo "== versions"
commit=${REDUCTION_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
[[ -n ${REDUCTION_COMMIT:-} || $commit == unknown ]] || git diff --quiet HEAD || commit+=" (with uncommitted changes)"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit $commit"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 | grep . || echo none)"
"$toolkit/bin/nvcc" --version | tail -2
echo "CCCL: CUB_VERSION $(sed -n 's/^#define CUB_VERSION \([0-9]*\).*/\1/p' "$toolkit/include/cub/version.cuh")" \
     "runtime: CUDART_VERSION $(sed -n 's/^#define CUDART_VERSION *\([0-9]*\).*/\1/p' "$toolkit/include/cuda_runtime_api.h")"
echo "host compiler: ${host[0]:-$(g++ --version | head -1)}"
cmake --version | head -1
echo "CUDAARCHS: ${CUDAARCHS:-(unset: the GPU nvidia-smi sees, or the CMakeLists.txt list)}"

# Each step's command, then its output: whole into LOG, and the lines that matter here.
step() {
    local log=$1 keep=$2
    shift 2
    echo "\$ $*"
    if ! "$@" >"$log" 2>&1; then
        tail -40 "$log"
        echo "$name: failed: $* (whole output: $log)" >&2
        exit 1
    fi
    grep -E "$keep" "$log" || true
}
export LD_LIBRARY_PATH="$toolkit/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"  # libcudart.so.12
rm -rf "$build" && mkdir -p "$build"
echo "== configure (the runtime as a shared library: the wheel has libcudart.so.12, no static one)"
step "$build/configure.log" "CUDA|Stages|NCCL|GTest|Warning|failed" \
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$toolkit/bin/nvcc" \
    -DCUDAToolkit_ROOT="$toolkit" -DCMAKE_CUDA_RUNTIME_LIBRARY=Shared -DCMAKE_CUDA_FLAGS=-cudart=shared "${host[@]}" "${cmake_args[@]}"
echo "== build (its compiler warnings, if any, follow)"
step "$build/build.log" "warning|Built target (reduce_all|reduce_ops|gpu_tests|ops_gpu_tests|host_tests)$" \
    cmake --build "$build" --parallel "$(nproc)"
echo "== the README's tests (ctest --preset release's selection) on $build"
echo "\$ ctest --test-dir $build --output-on-failure --timeout 1200 --label-exclude '^(grading|classroom)\$'"
ctest --test-dir "$build" --output-on-failure --timeout 1200 --label-exclude '^(grading|classroom)$'
