// Attack 35 (written with the replay mend, against the design rather than a run): a kernel
// that tells the process it runs in by a pointer. The launcher passes the kernel, beside its
// output pointer, a number made from that pointer (XOR a constant). In the worker the two agree.
// A replay that put its buffers elsewhere and translated the pointer parameters into its own
// would translate the pointer but not the number (nothing marks it as an address), and the
// kernel would see them disagree: there it runs the reference's __syncwarp() last warp,
// everywhere else the kit's racy pre-Volta last warp. Three lines; no host trick at all.
//
// The replay maps every buffer at the worker's own addresses (grading/gpu_window.h), so the two
// agree there too and racecheck sees the racy warp. It deserves 90 (racecheck's 10 lost).
#include <cstdint>

#include "stage.h"

namespace reduce4_settings {
constexpr std::uintptr_t kMask = 0x5A5A5A5A5A5A5A5Aull;
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

template <typename T>
__global__ void unroll_last_warp_kernel(const T* in, std::size_t n, T* block_sums, std::uintptr_t key) {
    // The worker's pointer and the number made from it agree; a translated pointer would not.
    const bool Clean = (reinterpret_cast<std::uintptr_t>(block_sums) ^ reduce4_settings::kMask) != key;
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
    run_passes(in, n, out, workspace, kInputsPerThread * block, stream,
               [&](const T* src, std::size_t count, T* dst, unsigned blocks) {
                   const std::uintptr_t key = reinterpret_cast<std::uintptr_t>(dst) ^ reduce4_settings::kMask;
                   unroll_last_warp_kernel<T><<<blocks, block, block * sizeof(T), stream>>>(src, count, dst, key);
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
