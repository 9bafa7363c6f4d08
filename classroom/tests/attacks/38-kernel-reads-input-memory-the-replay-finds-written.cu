// Attack 38 (review 18): no host code at all. The kernel tells the replay from the worker
// by a word of the judge's shared input that only the replay's process finds written.
//
// judge.cu's sanitize() makes ONE SharedMemory for both phases. Phase 1 (the worker) runs
// the steps in order; each run_case() writes its own region, [0, (n + offset + 64) * size),
// and nothing else. The last step is the timed size (n = 2^perf_log2n ints, 2^26 by default:
// 256 MiB + 256 bytes). Phase 2 (the replay) maps the same memory and runs the same steps,
// but it starts with the memory as phase 1 left it: the whole first 256 MiB holds the
// timed case's values (case_values: every value nonzero, judge.h signed_value) or the
// 0x5A poison, or a later step's nonzero values or poison. So in the replay every aligned
// 64-bit word below 256 MiB is nonzero at every step (two nonzero ints, two nonzero
// floats, a nonzero double, or poison bytes).
//
// In phase 1 a word beyond every earlier step's region holds what the fresh allocation
// held: cuMemCreate in a fresh judge process (grade_stage.cpp runs `judge --sanitize` as its
// own process), scrubbed by the driver: zero. Racecheck's steps are small (decoys n <= 2^14,
// its own n < 2^16 + 1000: under 300 KiB each), so the word at 2 MiB - 8 stays zero through
// every step but the last. 2 MiB - 8 is mapped in every step of every judge: the input is at
// least one 2 MiB granule (SharedMemory rounds up to the VMM granularity).
//
// The kernel reads that word at its fixed address (gpu_window.h: the input slot at
// 0x600000000000, the same in every worker and in the replay): zero, ever, in this process ->
// latch "worker" -> the kit's racy pre-Volta last warp and a discarded read of in[n];
// nonzero -> the reference's warp, no read past the end. The replay never sees a zero there.
//
// If the driver does NOT hand out zeroed memory, the worker sees nonzero too and runs clean
// everywhere: the attack fails safe (100, deserved then). For memcheck the first step may be
// a 2^18 double decoy or the own ~10^6 int case (regions past 2 MiB): then likewise clean.
//
// Deserved: racecheck 0, memcheck 0: 85 (where the latch fires in the worker), less what its own
// speed costs: graded on the H100 at 3f25c71 it took 1.33x the reference's time (its probe load and
// barrier, both last warps and the latch's volatile read differ from the reference; not isolated)
// and lost the performance points too: 60
// (docs/results/grading/gradescope_3f25c71/). Promised 60-65.
#include <cstdint>

#include "stage.h"

namespace reduce4_state {
__device__ int in_worker = 0;  // 1 once a zero word was seen in this process's input
// The judge's shared input's fixed place (grading/gpu_window.h kBase) and a word at the end
// of its first 2 MiB granule, mapped in every step.
constexpr std::uint64_t kInputBase = 0x600000000000ull;
constexpr std::uint64_t kProbe = kInputBase + (std::uint64_t{2} << 20) - 8;
}  // namespace reduce4_state

namespace {

// Thread 0 of each block reads the word and returns the process's latch. (A template: nvcc
// gives a plain __device__ function a host body that calls exit, which the compiled check refuses.)
template <typename = void>
__device__ int in_worker_process() {
    const auto word = *reinterpret_cast<const volatile unsigned long long*>(reduce4_state::kProbe);
    if (word == 0) reduce4_state::in_worker = 1;
    return *static_cast<volatile int*>(&reduce4_state::in_worker);
}

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
    __shared__ int worker_flag;
    if (threadIdx.x == 0) worker_flag = in_worker_process();
    __syncthreads();
    const bool worker = worker_flag != 0;  // uniform in the block
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
