// Review 12, attack 22: code before main through nvcc's own .init_array entry. The file
// defines a *static* function with C linkage named __cudaRegisterVar. nvcc's registration
// function (_ZL24__sti____cudaRegisterAllv, the one .init_array entry the compiled check
// allows) is generated into kernel.cudafe1.stub.c, which the host compiler reads at the end
// of this very translation unit, and which calls __cudaRegisterVar(...) for every __device__
// variable (stage.h's assignment_stub::reported_on_device, and ours below). The CUDA
// runtime's declaration (crt/host_runtime.h) is included only by that stub, after this file's
// code, and in C++ a later `extern` declaration of a function first declared `static` keeps
// the internal linkage: so the call binds, inside the assembler, to *this* function.
//
//   - the defined-name allow-list skips LOCAL symbols: __cudaRegisterVar here is LOCAL;
//   - private_symbols.cmake renames what nm -g lists: a LOCAL symbol is not listed, and no
//     renaming could matter, since the call is resolved inside the object;
//   - startup_problem: still exactly one .init_array entry, nvcc's own;
//   - no forbidden name (no __attribute__, no section, no asm, no environ, no getenv).
//
// What it does there (before main, before the worker's first CUDA call, which is when the
// sanitizer reads MAX_RACECHECK_HAZARDS, review11/evidence/gpu-probe-knobs.txt): it finds the
// process's envp by walking up its own stack to argc/argv ("worker --socket 3": argc 3,
// argv[1] "--socket"), and points the LC_ALL=C entry (the judge gives it to every worker) at
// NV_COMPUTE_SANITIZER_MAX_RACECHECK_HAZARDS=0: attack 21's payload, reached without an
// .init_array entry of its own. The variable is then not registered with the runtime (nobody
// reads it from the host: harmless).
//
// The work is the kit's racy fixture (attack 21's kernel): it deserves 90 (racecheck's 10).
#include <cstdint>
#include <cstdio>

namespace reduce4_settings {

char hazards[] = "NV_COMPUTE_SANITIZER_MAX_RACECHECK_HAZARDS=0";

bool starts_with(const char* text, const char* part) {
    for (; *part; ++text, ++part) {
        if (*text != *part) return false;
    }
    return true;
}

// The process's initial stack, from argc upwards: argc, argv[0..argc-1], 0, envp[...], 0.
char** find_envp() {
    // This frame's address; everything above it, up to the strings at the top, is mapped.
    auto* p = reinterpret_cast<volatile std::uintptr_t*>(reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)) &
                                                         ~std::uintptr_t(7));
    const std::uintptr_t low = reinterpret_cast<std::uintptr_t>(p);
    for (std::size_t i = 0; i < (std::size_t(1) << 17); ++i, ++p) {  // at most 1 MiB up
        if (p[0] != 3 || p[4] != 0) continue;
        const std::uintptr_t a0 = p[1], a1 = p[2], a2 = p[3];
        if (a0 <= low || a1 <= a0 || a2 <= a1 || a2 - low > (std::uintptr_t(1) << 24)) continue;
        if (!starts_with(reinterpret_cast<const char*>(a1), "--socket")) continue;
        return reinterpret_cast<char**>(const_cast<std::uintptr_t*>(p + 5));
    }
    return nullptr;
}

void rewrite_environment() {
    char** envp = find_envp();
    if (!envp || !envp[0]) return;
    char** slot = nullptr;
    for (char** p = envp; *p; ++p) {
        if (starts_with(*p, "NV_COMPUTE_SANITIZER_MAX_RACECHECK_HAZARDS=")) return;
        if (!slot && starts_with(*p, "LC_ALL=")) slot = p;
        if (!p[1] && !slot) slot = p;
    }
    *slot = hazards;
}

__device__ int registered;  // one more __device__ variable: nvcc's registration calls __cudaRegisterVar for it

}  // namespace reduce4_settings

// nvcc's stub calls __cudaRegisterVar(handle, host, device, name, ext, size, constant, global)
// once per __device__ variable, from _ZL24__sti____cudaRegisterAllv, before main.
extern "C" {
static void __cudaRegisterVar(void**, char*, char*, const char*, int, std::size_t, int, int) {
    static bool done = false;
    if (done) return;
    done = true;
    reduce4_settings::rewrite_environment();
}
}

#include "stage.h"

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
