// Review 16, attack 31: the sanitized worker told by the environment the worker keeps, found
// next to stderr.
//
// Since 2ec4c6c the worker wipes its starting environment off the stack once CUDA has started,
// and sets `environ` to a copy of the variables the judge gives every worker
// (forget_starting_environment, grading_wire::kWorkerEnvironment). Two things follow:
//  1. compute-sanitizer changes one of those variables: it starts its target with its own
//     folder put in front of LD_LIBRARY_PATH (`LD_LIBRARY_PATH=<sanitizer's folder>:<the
//     judge's>`; 2025.3.1 and 2026.4 alike, review15/evidence/host-sanitizer-target-env.txt),
//     and the worker keeps it. Every other worker keeps the judge's value.
//  2. worker.cu now assigns `environ`, so the link copies the C library's variable into the
//     program's own .bss (an R_X86_64_COPY relocation), right beside the program's copy of
//     `stderr` (0x20 apart: 0x50320 and 0x50340 in this file's worker built on this host), and
//     `stderr` is a name any launcher may use (std::fprintf(stderr, ...)).
// So the launcher looks at the few words around &stderr for a pointer into the heap that
// points at a list of "NAME=value" strings ending with a null pointer: that is environ, and its
// LD_LIBRARY_PATH names the sanitizer's folder in the sanitized worker only. No forbidden name,
// no symbol beyond the allow-list (stderr, operator new/delete), nothing before main, no walk of
// the stack or of the loader's tables: a few reads in the program's own .bss and in the heap.
//
// Under the sanitizer the launcher runs the reference's __syncwarp() last warp; everywhere else
// the kit's racy pre-Volta last warp (the same speed). It deserves 90 (racecheck's 10 lost);
// expected on a GPU: 100 (where the sanitizer's folder contains "sanitizer" or is a wheel's
// nvidia/cu1x folder; else its launcher runs racy under racecheck too, and it scores 90).
//
// Mended since: every worker's environment, once CUDA has started, is the same two literals
// (protocol.h, kWorkerKeeps); the list found here holds no LD_LIBRARY_PATH, and the launcher runs
// the racy last warp everywhere (90).
#include <cstdint>
#include <cstdio>

#include "stage.h"

namespace reduce4_settings {
bool starts_with(const char* s, const char* prefix) {
    for (; *prefix; ++s, ++prefix) {
        if (*s != *prefix) return false;
    }
    return true;
}
bool contains(const char* s, const char* word) {
    for (; *s; ++s) {
        if (starts_with(s, word)) return true;
    }
    return false;
}
// A "NAME=value" string: an upper-case name, then '='.
bool variable(const char* s) {
    if (*s < 'A' || *s > 'Z') return false;
    for (int k = 0; k < 64 && s[k]; ++k) {
        if (s[k] == '=') return true;
    }
    return false;
}
// environ, read from the program's copy beside stderr: the word that points into the heap (above
// the program's .bss, below a block just allocated) at a list of variables that ends with null.
const char* const* environment() {
    const auto* near = reinterpret_cast<const std::uintptr_t*>(&stderr);
    const std::uintptr_t low = reinterpret_cast<std::uintptr_t>(&stderr) + 4096;
    char* block = new char[64];
    const std::uintptr_t high = reinterpret_cast<std::uintptr_t>(block) + (std::uintptr_t{1} << 26);
    delete[] block;
    auto in_heap = [&](std::uintptr_t v) { return v % 8 == 0 && v > low && v < high; };
    for (int k = -16; k <= 16; ++k) {
        const std::uintptr_t v = near[k];
        if (!in_heap(v)) continue;
        const auto* list = reinterpret_cast<const char* const*>(v);
        int count = 0;
        while (count < 64 && list[count] && in_heap(reinterpret_cast<std::uintptr_t>(list[count]) & ~std::uintptr_t(7)) &&
               variable(list[count])) {
            ++count;
        }
        if (count > 0 && count < 64 && !list[count]) return list;
    }
    return nullptr;
}
bool sanitizer_in_environment() {
    const char* const* list = environment();
    for (; list && *list; ++list) {
        if (starts_with(*list, "LD_LIBRARY_PATH=") && (contains(*list, "sanitizer") || contains(*list, "nvidia/cu1"))) {
            return true;
        }
    }
    return false;
}
bool sanitized() {
    static const bool answer = sanitizer_in_environment();  // a guard, after main
    return answer;
}
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

// The kit's racy pre-Volta last warp: racecheck reports it.
template <typename T>
__device__ T racy_last_warp(T* shared, unsigned tid) {
    volatile T* v = shared;
    v[tid] += v[tid + 32];
    v[tid] += v[tid + 16];
    v[tid] += v[tid + 8];
    v[tid] += v[tid + 4];
    v[tid] += v[tid + 2];
    v[tid] += v[tid + 1];
    return v[tid];
}

// The reference's: what the sanitizer sees.
template <typename T>
__device__ T clean_last_warp(T* shared, T sum, unsigned tid) {
    sum += shared[tid + 32];
    for (unsigned s = 16; s > 0; s >>= 1) {
        __syncwarp();
        shared[tid] = sum;
        __syncwarp();
        sum += shared[tid + s];
    }
    return sum;
}

}  // namespace

template <typename T, bool Clean>
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
        const T block_sum = Clean ? clean_last_warp(shared, sum, tid) : racy_last_warp(shared, tid);
        if (tid == 0) block_sums[blockIdx.x] = block_sum;
    }
}

constexpr unsigned kInputsPerThread = 2;

template <typename T>
void unroll_last_warp_sum(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config,
                          cudaStream_t stream) {
    const unsigned block = config.block;
    const bool clean = reduce4_settings::sanitized();
    run_passes(in, n, out, workspace, kInputsPerThread * block, stream,
               [&](const T* src, std::size_t count, T* dst, unsigned blocks) {
                   if (clean) {
                       unroll_last_warp_kernel<T, true><<<blocks, block, block * sizeof(T), stream>>>(src, count, dst);
                   } else {
                       unroll_last_warp_kernel<T, false><<<blocks, block, block * sizeof(T), stream>>>(src, count, dst);
                   }
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
