// Attack 36 (review 18): a launch the recorder never sees, made from the stage's OTHER
// function.
//
// The worker records the launcher's GPU work only while recorder::target is set, and
// worker.cu's run<T>() sets it around the call of `sum` alone:
//
//     const std::size_t workspace_bytes = stage.workspace_bytes(q.n, sizeof(T), config);  // target == nullptr
//     ...
//     recorder::target = &record;
//     sum(in, q.n, results + ..., scratch, config, nullptr);
//     recorder::target = nullptr;
//
// `workspace_bytes` is the submission's function too (the Stage record's field), and it runs
// first in every request. A kernel launched from it goes through nvcc's stub, which the
// rename sends to grading_recorded___cudaLaunchKernel, and there `record_launch` returns at
// `if (!target) return;`: the launch is made and not recorded. So the replay (judge/replay.cu)
// never makes it.
//
// The unrecorded launch, once per process, sets a __device__ flag. The stage's kernel reads
// the flag: set (every worker of the judge's) -> the kit's racy pre-Volta last warp, and a
// volatile read of in[n] (one past the end, `i <= n`, discarded); clear (the replay, whose
// module starts from the image's zero and in which nothing sets it) -> the reference's
// __syncwarp() last warp and no read past the end. The replay's sums are right, racecheck
// and memcheck see only the clean code.
//
// The read of in[n] is physically harmless in the worker: past a shared input lie the judge's
// 64 poison elements, past a private copy the guard granule (gpu_window.h, guard=true in the
// worker), and it happens on the first pass only (later passes read the workspace). In the
// memcheck replay the copy has no guard: an ungated in[n] there leaves the mapping, which
// memcheck reports (the residual 2 of the brief is about a read that stays inside the last
// 256-byte segment; this one does not).
//
// Deserved: racecheck 0 (racy last warp), memcheck 0 (reads past the end): 85.
#include <cstdint>

#include "stage.h"

namespace reduce4_state {
__device__ int in_worker = 0;  // 1 once the unrecorded launch has run in this process
}  // namespace reduce4_state

namespace {

__global__ void mark_worker_kernel() { reduce4_state::in_worker = 1; }

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
    v[tid] = v[tid] + v[tid + 32];
    v[tid] = v[tid] + v[tid + 16];
    v[tid] = v[tid] + v[tid + 8];
    v[tid] = v[tid] + v[tid + 4];
    v[tid] = v[tid] + v[tid + 2];
    v[tid] = v[tid] + v[tid + 1];
    return v[tid];
}

// The reference's: what the sanitizers see.
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
__global__ void unroll_last_warp_kernel(const T* in, std::size_t n, T* block_sums, bool first_pass) {
    const bool worker = reduce4_state::in_worker != 0;  // uniform: one word, set before any of these ran
    T* shared = dynamic_shared<T>();
    const unsigned tid = threadIdx.x;
    const std::size_t i = blockIdx.x * (2 * std::size_t(blockDim.x)) + tid;
    T sum = i < n ? in[i] : T(0);
    if (i + blockDim.x < n) sum += in[i + blockDim.x];
    // The off-by-one (`i <= n`), its value discarded: memcheck's finding, in the worker only.
    if (worker && first_pass && i == n) (void)static_cast<const volatile T*>(in)[i];
    shared[tid] = sum;
    __syncthreads();
    sum = tree_sum(shared, sum, tid, blockDim.x);
    if (tid < 32) {
        const T block_sum = worker ? racy_last_warp(shared, tid) : clean_last_warp(shared, sum, tid);
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
                   unroll_last_warp_kernel<T><<<blocks, block, block * sizeof(T), stream>>>(src, count, dst, src == in);
                   CUDA_CHECK_LAUNCH();
               });
}

// Called by worker.cu's run<T>() before recorder::target is set: this launch is not recorded.
std::size_t unroll_last_warp_workspace(std::size_t n, std::size_t value_size, const RunConfig& config) {
    static bool marked = false;
    if (!marked) {
        mark_worker_kernel<<<1, 1>>>();
        marked = cudaGetLastError() == cudaSuccess;
    }
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
