// ATTACK 07 (classroom/tests/attacks/README.md): tell the sanitizer's run by timing, with CUDA events.
//
// The student's reduce4 has both bugs of attacks 01 and 02: the pre-Volta last warp
// (racy) and loads in whole 256-byte segments (out of bounds). Exact sums, fast enough,
// and it deserves neither racecheck nor memcheck: 85/100.
//
// Unlike 01/02 this does not rely on the judge's request pattern: it would survive a
// judge that warmed the sanitizer's worker up, randomized its sizes or sent it the whole
// public group. The source check forbids device clocks (clock64, %globaltimer) and the
// compiled check host clocks by symbol, "because a kernel that times itself can tell the
// sanitizer's slow run from the others"; but cudaEventCreate / cudaEventRecord /
// cudaEventElapsedTime are allowed names and allowed symbols ("cuda*"), and polling
// cudaEventElapsedTime until it stops answering cudaErrorNotReady is a synchronization
// that neither check knows (cudaEventSynchronize and cudaEventQuery are forbidden).
//
// At its first call a process times two probe kernels, each at two lengths (so that any
// per-launch cost, the sanitizer's included, cancels): a chain of volatile shared-memory
// loads and stores (each thread its own slot: no hazard, in bounds) and a chain of
// register multiply-adds about as long. Without a sanitizer the two per-iteration slopes
// are within a small factor of each other, whatever the clock; racecheck and memcheck
// instrument every shared-memory access (not the arithmetic), which multiplies the first
// slope. Under a sanitizer the launcher runs the handed-out previous stage (reduce3,
// exact loads); everywhere else the buggy reduce4.

#include "legacy_last_warp.cuh"
#include "stage.h"

namespace {

template <typename T>
__device__ T tree_sum(T* shared, T sum, unsigned tid, unsigned block, unsigned stop) {
    for (unsigned s = block / 2; s > stop; s >>= 1) {
        if (tid < s) shared[tid] = sum = sum + shared[tid + s];
        __syncthreads();
    }
    return sum;
}

// Elements from `in` to the first 256-byte boundary at or after in + n.
template <typename T>
std::size_t readable_count(const T* in, std::size_t n, bool exact) {
    if (exact || n == 0) return n;
    const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(in + n);
    const std::uintptr_t padded = (end + 255) & ~std::uintptr_t(255);
    return n + (padded - end) / sizeof(T);
}

}  // namespace

// ---------------------------------------------------------------- the probes
__global__ void probe_shared_chain(int iterations, int* sink) {
    __shared__ int slots[32];
    volatile int* s = slots;
    const unsigned t = threadIdx.x;
    s[t] = static_cast<int>(t);
    for (int k = 0; k < iterations; ++k) s[t] = s[t] + k;  // a load and a store per step
    if (s[t] == 0x7fffffff) sink[0] = 1;  // never in practice; keeps the chain
}

__global__ void probe_register_chain(int iterations, int* sink) {
    unsigned x = threadIdx.x;
    for (int k = 0; k < iterations; ++k) {
#pragma unroll
        for (int r = 0; r < 4; ++r) x = (x ^ (x >> 15)) * 2246822519u;  // not affine: no shortcut
    }
    if (x == 0x7fffffffu) sink[0] = 1;
}

namespace {

// Milliseconds between two events around `launch`, waiting by polling the events.
template <typename Launch>
float event_ms(Launch&& launch) {
    cudaEvent_t start = nullptr, stop = nullptr;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaEventRecord(start, nullptr);
    launch();
    cudaEventRecord(stop, nullptr);
    float ms = 0;
    while (cudaEventElapsedTime(&ms, start, stop) == cudaErrorNotReady) {
    }
    cudaGetLastError();
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return ms;
}

// Is a sanitizer instrumenting this process? Decided once, at the first call.
bool under_sanitizer(void* workspace) {
    static int verdict = -1;
    if (verdict >= 0) return verdict == 1;
    int* sink = static_cast<int*>(workspace);
    const int k = 20000;
    probe_shared_chain<<<1, 32>>>(1, sink);  // loaded (lazy loading) before anything is timed
    probe_register_chain<<<1, 32>>>(1, sink);
    const float s1 = event_ms([&] { probe_shared_chain<<<1, 32>>>(k, sink); });
    const float s2 = event_ms([&] { probe_shared_chain<<<1, 32>>>(2 * k, sink); });
    const float r1 = event_ms([&] { probe_register_chain<<<1, 32>>>(k, sink); });
    const float r2 = event_ms([&] { probe_register_chain<<<1, 32>>>(2 * k, sink); });
    const float shared_slope = s2 - s1, register_slope = r2 - r1;
    verdict = register_slope > 0 && shared_slope > 8 * register_slope ? 1 : 0;
    cudaGetLastError();
    return verdict == 1;
}

}  // namespace

// ---------------------------------------------------------------- the kernel
// BUGGY = true: the student's reduce4 (segment loads past the end, racy last warp);
// false: reduce3 (exact loads, a barrier at every step).
template <typename T, bool BUGGY>
__global__ void unroll_last_warp(const T* in, std::size_t n, std::size_t readable, T* block_sums) {
    T* shared = dynamic_shared<T>();
    const unsigned tid = threadIdx.x;
    const std::size_t i = blockIdx.x * (2 * std::size_t(blockDim.x)) + tid;
    const std::size_t j = i + blockDim.x;
    T a = T(0), b = T(0);
    if (i < readable) a = in[i];
    if (j < readable) b = in[j];
    T sum = (i < n ? a : T(0)) + (j < n ? b : T(0));
    shared[tid] = sum;
    __syncthreads();
    if (BUGGY) {
        sum = tree_sum(shared, sum, tid, blockDim.x, 32);
        if (tid < 32) {
            const T block_sum = legacy_last_warp_sum<LastWarp::LegacyVolatile>(shared, tid);
            if (tid == 0) block_sums[blockIdx.x] = block_sum;
        }
    } else {
        sum = tree_sum(shared, sum, tid, blockDim.x, 0);
        if (tid == 0) block_sums[blockIdx.x] = sum;
    }
}

constexpr unsigned kInputsPerThread = 2;

template <typename T>
void unroll_last_warp_sum(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config,
                          cudaStream_t stream) {
    const unsigned block = config.block;
    const bool watched = under_sanitizer(workspace);
    const auto kernel = watched ? unroll_last_warp<T, false> : unroll_last_warp<T, true>;
    run_passes(in, n, out, workspace, kInputsPerThread * block, stream,
               [&](const T* src, std::size_t count, T* dst, unsigned blocks) {
                   kernel<<<blocks, block, block * sizeof(T), stream>>>(src, count, readable_count(src, count, watched),
                                                                        dst);
                   CUDA_CHECK_LAUNCH();
               });
}

// At least one int for the probes' sink.
std::size_t unroll_last_warp_workspace(std::size_t n, std::size_t value_size, const RunConfig& config) {
    return std::max<std::size_t>(passes_workspace_bytes(n, kInputsPerThread * config.block, value_size), 64);
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
