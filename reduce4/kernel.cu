// reduce4: the last warp unrolled, without block-wide barriers
//
// reduce3 plus one idea. Once s <= 32 only warp 0 still adds, and one warp does not need
// a __syncthreads() for the whole block to coordinate its own 32 threads.
// solution (assignment 4): how, in the header (the sentences that give the answer)
// So the loop stops at s = 64 and warp 0 finishes the last six steps (s = 32 ... 1) alone,
// ordering them with __syncwarp(), which synchronizes just the warp's threads.
// stub: // Finish the last steps with the synchronization a warp needs, and no more.
// end solution
//
// Why __syncwarp() and not nothing: the classic code (--last-warp legacy-volatile) relied on
// lockstep lanes and `volatile`, and nothing guarantees lockstep since Volta: a data race,
// exact on the H100 in every run but found by racecheck; legacy-plain, without volatile, sums wrong.

#include "legacy_last_warp.cuh"  // --last-warp legacy-volatile, legacy-plain: the variant and its code
#include "stage.h"

namespace {  // this stage's own helpers: other stages define functions of the same names

// ---------------------------------------------------------------- the tree
template <typename T>
__device__ T tree_sum(T* shared, T sum, unsigned tid, unsigned block) {
    for (unsigned s = block / 2; s > 32; s >>= 1) {
        if (tid < s) shared[tid] = sum = sum + shared[tid + s];
        __syncthreads();  // every add of this step lands before any thread reads in the next
    }
    return sum;  // what shared[tid] holds, for the last warp
}

// The last six steps, by warp 0 alone.
template <typename T>
__device__ T last_warp_sum(T* shared, T sum, unsigned tid) {
    // solution (assignment 4): warp 0 adds its 32 sums and slots 32..63 down to one value, six steps ordered by __syncwarp()
    // Every step writes, then reads: the first __syncwarp() keeps a lane from overwriting a
    // slot its neighbor has not yet read in the step before, the second makes the writes
    // visible to the warp before the read.
    sum += shared[tid + 32];
    for (unsigned s = 16; s > 0; s >>= 1) {
        __syncwarp();
        shared[tid] = sum;
        __syncwarp();
        sum += shared[tid + s];
    }
    return sum;  // lane 0 holds the block's sum
    // stub: return not_implemented(sum, "reduce4: the last warp is not implemented yet (assignment 4)");
    // end solution
}

}  // namespace

// ---------------------------------------------------------------- kernel
template <typename T, LastWarp MODE = LastWarp::SyncWarp>
__global__ void unroll_last_warp(const T* in, std::size_t n, T* block_sums) {
    T* shared = dynamic_shared<T>();
    const unsigned tid = threadIdx.x;
    const std::size_t i = blockIdx.x * (2 * std::size_t(blockDim.x)) + tid;
    T sum = i < n ? in[i] : T(0);  // the last block may run past the end: add zeros
    if (i + blockDim.x < n) sum += in[i + blockDim.x];
    shared[tid] = sum;
    __syncthreads();
    sum = tree_sum(shared, sum, tid, blockDim.x);
    if (tid < 32) {
        const T block_sum = MODE == LastWarp::SyncWarp ? last_warp_sum(shared, sum, tid)
                                                       : legacy_last_warp_sum<MODE>(shared, tid);
        if (tid == 0) block_sums[blockIdx.x] = block_sum;
    }
}

// ---------------------------------------------------------------- launcher
namespace {  // every stage names these three the same: only the kernel and the record say which stage

constexpr unsigned kInputsPerThread = 2;

template <typename T>
void launch(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config, cudaStream_t stream) {
    const unsigned block = config.block;
    const auto kernel = chosen_kernel<T>(kLastWarp, config, unroll_last_warp<T, LastWarp::SyncWarp>,
                                         unroll_last_warp<T, LastWarp::LegacyVolatile>,
                                         unroll_last_warp<T, LastWarp::LegacyPlain>);
    run_passes(in, n, out, workspace, kInputsPerThread * block, stream,
               [&](const T* src, std::size_t count, T* dst, unsigned blocks) {
                   kernel<<<blocks, block, block * sizeof(T), stream>>>(src, count, dst);
                   CUDA_CHECK_LAUNCH();
               });
}

std::size_t workspace_bytes(std::size_t n, std::size_t value_size, const RunConfig& config) {
    return passes_workspace_bytes(n, kInputsPerThread * config.block, value_size);
}

}  // namespace

// The stage's record: `extern` because the runner and the tests find it by name (common/stage_list.cu.in).
extern const Stage reduce4_stage = {
    .name = "reduce4",
    .kernel = "unroll_last_warp",
    .idea = "the last warp unrolled: no block-wide barriers once s <= 32",
    .chapter = "docs/04-sync-removal.md",
    .min_block = 64,  // the last warp adds slot tid + 32, so a block needs two warps
    .max_block = 1024,
    .workspace_bytes = workspace_bytes,
    .sum_int = launch<int>,
    .sum_float = launch<float>,
    .sum_double = launch<double>,
    .variants = kVariants,
};
