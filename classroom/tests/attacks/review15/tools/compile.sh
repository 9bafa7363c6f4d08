#!/bin/bash
# compile.sh FILE DIR: the tree's own nvcc command for reduce4/kernel.cu (build/release/compile_commands.json),
# with --keep into DIR, so that the object and nvcc's intermediate files (cudafe1.cpp, stub.c) can be read.
f=$1; d=$2
rm -rf "$d"; mkdir -p "$d"; cp "$f" "$d/kernel.cu"
cd /work/main/build/release && /usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler \
  --options-file CMakeFiles/reduce4_kernel.dir/includes_CUDA.rsp -I/work/main/reduce4 -O3 -DNDEBUG \
  --generate-code=arch=compute_90,code=[compute_90,sm_90] -std=c++20 -Xcompiler=-Wall,-Wextra -Xcompiler=-Wno-restrict \
  -lineinfo -x cu -c "$d/kernel.cu" -o "$d/k.o" --keep --keep-dir "$d"
