// reduce5: the block size as a template parameter: the tree completely unrolled
//
// reduce4 plus one idea. The kernel takes its block size as a compile-time constant
// BLOCK, so that the compiler can unroll the tree completely and drop what it then knows
// at compile time. The launcher runs the instantiation for the block size asked for.
// solution (assignment 5): how, in the header (the sentences that give the answer)
// The tree's loop then has a known trip count: the compiler drops the loop counter, the
// loop's test and its branch, and each step's tid < s becomes a compare with a constant.
// dispatch_block_size (common/stage.h) turns the run-time block into a constant.
// stub: // Look in common/stage.h for a way to turn a run-time block size into a constant.
// end solution

#include "stage.h"

namespace {  // this stage's own helpers: other stages define functions of the same names

// ---------------------------------------------------------------- the tree
template <unsigned BLOCK, typename T>
__device__ T tree_sum(T* shared, T sum, unsigned tid) {
    // solution (assignment 5): reduce4's block-wide steps, with the block size a compile-time constant
#pragma unroll
    for (unsigned s = BLOCK / 2; s > 32; s >>= 1) {
        if (tid < s) shared[tid] = sum = sum + shared[tid + s];
        __syncthreads();  // every add of this step lands before any thread reads in the next
    }
    return sum;  // what shared[tid] holds, for the last warp
    // stub: return not_implemented(sum, "reduce5: tree_sum is not implemented yet (assignment 5)");
    // end solution
}

// The last six steps, by warp 0 alone.
template <typename T>
__device__ T last_warp_sum(T* shared, T sum, unsigned tid) {
    // Every step writes, then reads: the first __syncwarp() keeps a lane from overwriting a
    // slot its neighbor has not yet read in the step before, the second makes the writes
    // visible to the warp before the read.
    sum += shared[tid + 32];
#pragma unroll
    for (unsigned s = 16; s > 0; s >>= 1) {
        __syncwarp();
        shared[tid] = sum;
        __syncwarp();
        sum += shared[tid + s];
    }
    return sum;  // lane 0 holds the block's sum
}

}  // namespace

// ---------------------------------------------------------------- kernel
template <unsigned BLOCK, typename T>
__global__ void complete_unroll(const T* in, std::size_t n, T* block_sums) {
    T* shared = dynamic_shared<T>();
    const unsigned tid = threadIdx.x;
    const std::size_t i = blockIdx.x * (2 * std::size_t(BLOCK)) + tid;
    T sum = i < n ? in[i] : T(0);  // the last block may run past the end: add zeros
    if (i + BLOCK < n) sum += in[i + BLOCK];
    shared[tid] = sum;
    __syncthreads();
    sum = tree_sum<BLOCK>(shared, sum, tid);
    if (tid < 32) {
        const T block_sum = last_warp_sum(shared, sum, tid);
        if (tid == 0) block_sums[blockIdx.x] = block_sum;
    }
}

// ---------------------------------------------------------------- launcher
namespace {  // every stage names these three the same: only the kernel and the record say which stage

constexpr unsigned kInputsPerThread = 2;

template <typename T>
void launch(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config, cudaStream_t stream) {
    // solution (assignment 5): launch complete_unroll<BLOCK> for the run-time block size (dispatch_block_size, common/stage.h)
    dispatch_block_size<64, 1024>(config.block, [&](auto block) {
        constexpr unsigned BLOCK = decltype(block)::value;
        run_passes(in, n, out, workspace, kInputsPerThread * BLOCK, stream,
                   [&](const T* src, std::size_t count, T* dst, unsigned blocks) {
                       complete_unroll<BLOCK><<<blocks, BLOCK, BLOCK * sizeof(T), stream>>>(src, count, dst);
                       CUDA_CHECK_LAUNCH();
                   });
    });
    // stub: not_implemented("reduce5: the launcher is not implemented yet (assignment 5)");
    // end solution
}

std::size_t workspace_bytes(std::size_t n, std::size_t value_size, const RunConfig& config) {
    return passes_workspace_bytes(n, kInputsPerThread * config.block, value_size);
}

}  // namespace

// The stage's record: `extern` because the runner and the tests find it by name (common/stage_list.cu.in).
extern const Stage reduce5_stage = {
    .name = "reduce5",
    .kernel = "complete_unroll",
    .idea = "block size as a template parameter: the tree completely unrolled",
    .chapter = "docs/05-complete-unroll.md",
    .min_block = 64,  // the last warp adds slot tid + 32, so a block needs two warps
    .max_block = 1024,
    .workspace_bytes = workspace_bytes,
    .sum_int = launch<int>,
    .sum_float = launch<float>,
    .sum_double = launch<double>,
};
