// Review 11, attack 21: switch racecheck's reporting off from inside its target with no
// symbol of a library's, no forbidden name, no call at all: a function in .init_array rewrites
// one entry of the process's environment to NV_COMPUTE_SANITIZER_MAX_RACECHECK_HAZARDS=0.
//
// The work is the kit's racy fixture (the pre-Volta `volatile` last warp without __syncwarp,
// attacks 15-20's kernel): it deserves 90 (racecheck's 10 lost).
//
// Why it works: the sanitizer's collection library reads NV_COMPUTE_SANITIZER_BINARY_PATCHING
// in its constructor (review9, review10: too early for the submission's code, which is why
// attacks 18-20 had to be the C library's getenv or run inside libstdc++'s initializer), but it
// reads NV_COMPUTE_SANITIZER_MAX_RACECHECK_HAZARDS later, when the worker's first CUDA call
// sets the context up: after the executable's own initializers. With it at 0, racecheck
// records no hazard: its summary reads "0 hazards displayed (0 errors, 0 warnings)" and it
// exits 0 (seen on the H100 with compute-sanitizer 2025.3.1: review11/evidence/).
//
// How, within both checks: the C library calls each .init_array entry of the executable
// with (argc, argv, envp), and envp is the very array that getenv reads (environ). A function
// pointer placed in .init_array by nvcc's own __annotate__ macro (crt/host_defines.h:
// __attribute__((a)); the source check refuses `__attribute__`, `constructor` and
// `init_priority`, not this) receives it and points one entry (LC_ALL=C, which the judge gives
// every worker, or else the last one) at a string of ours. No setenv, no walk, no asm, no
// exec, no process; the compiled check refuses .preinit_array, not .init_array, and every
// name defined here is a mangled C++ one.
#include <cstdint>
#include <cstdio>

#include "stage.h"

namespace reduce4_settings {

char hazards[] = "NV_COMPUTE_SANITIZER_MAX_RACECHECK_HAZARDS=0";

bool starts_with(const char* text, const char* part) {
    for (; *part; ++text, ++part) {
        if (*text != *part) return false;
    }
    return true;
}

void rewrite(int, char**, char** envp) {
    if (!envp || !envp[0]) return;
    char** slot = nullptr;
    for (char** p = envp; *p; ++p) {
        if (starts_with(*p, "NV_COMPUTE_SANITIZER_MAX_RACECHECK_HAZARDS=")) return;  // already there
        if (!slot && starts_with(*p, "LC_ALL=")) slot = p;
        if (!p[1] && !slot) slot = p;
    }
    *slot = hazards;
}

__annotate__(used) __annotate__(section(".init_array")) void (*entry)(int, char**, char**) = rewrite;

}  // namespace reduce4_settings

namespace {

template <typename T>
__device__ T tree_sum(T* shared, T sum, unsigned tid, unsigned block) {
    for (unsigned s = block / 2; s > 32; s >>= 1) {
        if (tid < s) shared[tid] = sum = sum + shared[tid + s];
        __syncthreads();
    }
    return sum;
}

template <typename T>
__device__ T last_warp(T* shared, unsigned tid) {
    volatile T* v = shared;
    v[tid] += v[tid + 32];
    v[tid] += v[tid + 16];
    v[tid] += v[tid + 8];
    v[tid] += v[tid + 4];
    v[tid] += v[tid + 2];
    v[tid] += v[tid + 1];
    return v[tid];
}

}  // namespace

template <typename T>
__global__ void unroll_last_warp_kernel(const T* in, std::size_t n, T* block_sums) {
    T* shared = dynamic_shared<T>();
    const unsigned tid = threadIdx.x;
    const std::size_t i = blockIdx.x * (2 * std::size_t(blockDim.x)) + tid;
    T sum = i < n ? in[i] : T(0);
    if (i + blockDim.x < n) sum += in[i + blockDim.x];
    shared[tid] = sum;
    __syncthreads();
    sum = tree_sum(shared, sum, tid, blockDim.x);
    if (tid < 32) {
        const T block_sum = last_warp(shared, tid);
        if (tid == 0) block_sums[blockIdx.x] = block_sum;
    }
}

constexpr unsigned kInputsPerThread = 2;

template <typename T>
void unroll_last_warp_sum(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config,
                          cudaStream_t stream) {
    const unsigned block = config.block;
    run_passes(in, n, out, workspace, kInputsPerThread * block, stream,
               [&](const T* src, std::size_t count, T* dst, unsigned blocks) {
                   unroll_last_warp_kernel<T><<<blocks, block, block * sizeof(T), stream>>>(src, count, dst);
                   CUDA_CHECK_LAUNCH();
               });
}

std::size_t unroll_last_warp_workspace(std::size_t n, std::size_t value_size, const RunConfig& config) {
    return passes_workspace_bytes(n, kInputsPerThread * config.block, value_size);
}

extern const Stage reduce4_stage = {
    .name = "reduce4",
    .kernel = "unroll_last_warp",
    .idea = "the last warp unrolled: no block-wide barriers once s <= 32",
    .min_block = 64,
    .max_block = 1024,
    .workspace_bytes = unroll_last_warp_workspace,
    .sum_int = unroll_last_warp_sum<int>,
    .sum_float = unroll_last_warp_sum<float>,
    .sum_double = unroll_last_warp_sum<double>,
};
