// reduce2: sequential addressing: no bank conflicts
//
// reduce1 plus one idea. In reduce1 the lanes of a warp that add at a step touch words
// spread apart in shared memory, and words 32 apart share a bank: bank conflicts, up to
// 8-way in a 256-thread block. Now at every step a warp's 32 threads touch 32 consecutive
// words, one per bank, and the adding threads stay contiguous (whole warps; only once
// fewer than 32 threads add is one warp partly active).
// solution (assignment 2): how, in the header (the sentence that gives the answer)
// The tree now starts with the widest step: at step s = blockDim.x / 2, ..., 2, 1, thread
// tid < s adds slot tid + s into slot tid.
// stub: // Work out the order of the steps that allows it.
// end solution

#include "stage.h"

namespace {  // this stage's own helpers: other stages define functions of the same names

// ---------------------------------------------------------------- the tree
// Written once for two callers: the kernel (shared = the block's shared memory, sync =
// __syncthreads) and --explain, which replays it on the host (common/explain.h).
template <typename Shared, typename Sync>
__host__ __device__ void tree_sum(Shared& shared, unsigned tid, unsigned block, Sync sync) {
    // solution (assignment 2): a tree whose warps each touch 32 consecutive words at every step
    for (unsigned s = block / 2; s > 0; s >>= 1) {
        if (tid < s) shared[tid] += shared[tid + s];
        sync();  // every add of this step lands before any thread reads in the next
    }
    // stub: not_implemented("reduce2: tree_sum is not implemented yet (assignment 2)");
    // end solution
}

}  // namespace

// ---------------------------------------------------------------- kernel
template <typename T>
__global__ void sequential_addressing(const T* in, std::size_t n, T* block_sums) {
    T* shared = dynamic_shared<T>();
    const unsigned tid = threadIdx.x;
    const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + tid;
    shared[tid] = i < n ? in[i] : T(0);  // the last block may run past the end: add zeros
    __syncthreads();
    tree_sum(shared, tid, blockDim.x, SyncThreads{});
    if (tid == 0) block_sums[blockIdx.x] = shared[0];
}

// ---------------------------------------------------------------- launcher
namespace {  // every stage names these three the same: only the kernel and the record say which stage

constexpr unsigned kInputsPerThread = 1;

template <typename T>
void launch(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config, cudaStream_t stream) {
    const unsigned block = config.block;
    run_passes(in, n, out, workspace, kInputsPerThread * block, stream,
               [&](const T* src, std::size_t count, T* dst, unsigned blocks) {
                   sequential_addressing<<<blocks, block, block * sizeof(T), stream>>>(src, count, dst);
                   CUDA_CHECK_LAUNCH();
               });
}

std::size_t workspace_bytes(std::size_t n, std::size_t value_size, const RunConfig& config) {
    return passes_workspace_bytes(n, kInputsPerThread * config.block, value_size);
}

TreeTrace tree_trace(unsigned block) {
    return replay_tree(block, kInputsPerThread, [](auto& shared, unsigned tid, unsigned b, auto sync) {
        tree_sum(shared, tid, b, sync);
    });
}

}  // namespace

// The stage's record: `extern` because the runner and the tests find it by name (common/stage_list.cu.in).
extern const Stage reduce2_stage = {
    .name = "reduce2",
    .kernel = "sequential_addressing",
    .idea = "sequential addressing: a warp touches 32 consecutive words, no bank conflicts",
    .chapter = "docs/02-bank-conflicts.md",
    .min_block = 32,  // any power-of-two block: the tree halves it down to one
    .max_block = 1024,
    .workspace_bytes = workspace_bytes,
    .sum_int = launch<int>,
    .sum_float = launch<float>,
    .sum_double = launch<double>,
    .trace = tree_trace,
};
