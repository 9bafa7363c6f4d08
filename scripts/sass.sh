#!/usr/bin/env bash
# The machine code (SASS) of one stage's kernel, for one instantiation, from the release
# build: what the GPU really executes, for the chapters' claims about predication, the %
# and __syncwarp().
#
#   scripts/sass.sh reduce1                       # every int instantiation: interleaved_convergent<int>
#   scripts/sass.sh reduce0 'interleaved_divergent<int, (Select)1>'   # the instantiation whose name contains this
#   scripts/sass.sh reduce4 'unroll_last_warp<int, (LastWarp)0>' --arch sm_90
#
# --arch picks one architecture's code where the build holds several (a build on a
# machine without a GPU is for 75;80;86;89;90). Needs cuobjdump (CUDA Toolkit);
# c++filt (binutils), or else cu++filt, demangles the names.
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: scripts/sass.sh reduceN [NAME-SUBSTRING] [--arch sm_NN] [--build DIR]" >&2; exit 2; }
stage=$1
shift
want=  # "": the int instantiations (a template argument "int", not "interleaved")
build=build/release
arch=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --build) build=${2:?--build needs a value}; shift 2 ;;
        --arch) arch=(--gpu-architecture "${2:?--arch needs a value}"); shift 2 ;;
        *) want=$1; shift ;;
    esac
done
lib=$build/lib${stage}_kernel.a
[[ -f $lib ]] || { echo "sass.sh: $lib not found: build first (README.md)" >&2; exit 3; }
command -v cuobjdump >/dev/null || { echo "sass.sh: cuobjdump not found: it ships with the CUDA Toolkit" >&2; exit 3; }
# c++filt (binutils) first: the stored files and the names scripts pass spell a template's
# numbers its way ("grid_stride<256u, int>"), where cu++filt writes "(unsigned int)256".
demangle=cat
command -v cu++filt >/dev/null && demangle=cu++filt
command -v c++filt >/dev/null && demangle=c++filt
# Print each "Function :" section whose (demangled) name contains the wanted text, or,
# with none given, whose template arguments include int.
cuobjdump -sass "${arch[@]}" "$lib" | $demangle | awk -v want="$want" '
    /Function : / { keep = want == "" ? $0 ~ /[<, ]int[,>]/ : index($0, want) > 0 }
    /^[[:space:]]*\.{10,}/ { if (keep) print; keep = keep && 1; next }
    keep { print }'
