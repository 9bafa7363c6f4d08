// Review 12, attack 23: attack 21 again (an entry of its own in .init_array that points one
// entry of envp at NV_COMPUTE_SANITIZER_MAX_RACECHECK_HAZARDS=0 before main), past both of
// the eleventh review's mends:
//
//  1. the source check refuses `__attribute__`, `__annotate__`, `section`, `constructor`,
//     `gnu::alias`..., by the exact token. GCC and nvcc's front end also accept the attribute
//     names with underscores around them and `__attribute` without the trailing ones:
//     `[[gnu::__section__(...)]]`, `[[gnu::__used__]]`, `__attribute((__section__(...)))`,
//     `[[gnu::__constructor__]]`, `[[gnu::__alias__(...)]]`, `[[__gnu__::section(...)]]`,
//     `[[using gnu: section(...)]]` all pass it (none is a forbidden token). Here:
//     [[gnu::__used__, gnu::__section__("...")]].
//  2. the compiled check's startup_problem reads `readelf -S -s -r -W` with a pattern that
//     needs a section's name to be one word. A section named ".init_array.1 x" (a space in
//     it) is not parsed at all: not counted among the init arrays, not refused. ld's default
//     script still takes it into the program's .init_array (`.init_array.*` is a glob).
//
// Every name defined here is a mangled one; no library name, no call, no asm keyword.
// The work is the kit's racy fixture (attack 21's kernel): it deserves 90 (racecheck's 10).
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

// A section ld puts into the program's .init_array (its script's SORT_BY_INIT_PRIORITY(.init_array.*)
// matches any name that starts ".init_array."), whose name has a space in it, which the compiled
// check's readelf reader cannot parse: the line "[ 5] .init_array.1 x   PROGBITS ..." does not
// match its section pattern, so the section is neither counted nor refused. GCC copies the
// attribute's string into `.section <string>,"aw"` unescaped: the quotes make it one name for
// the assembler, the '#' comments GCC's own flags out.
[[gnu::__used__, gnu::__section__("\".init_array.1 x\",\"aw\"#")]] void (*entry)(int, char**, char**) = rewrite;

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
