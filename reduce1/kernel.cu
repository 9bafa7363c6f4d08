// reduce1: the same interleaved tree, with a strided index: the adding threads contiguous
//
// reduce0 plus one idea. The tree adds the same pairs as reduce0, step by step, but the
// threads that add at step s are 0, 1, 2, ... (contiguous): they fill whole warps from
// warp 0 up (only once fewer than 32 threads add is warp 0 partly busy), and the slow %
// test is gone.
// solution (assignment 1): how, in the header (the sentence that gives the answer)
// Thread tid works on slot index = 2 * s * tid instead of on its own slot.
// stub: // Work out which slot each thread adds into.
// end solution

#include "stage.h"

namespace {  // this stage's own helpers: other stages define functions of the same names

// ---------------------------------------------------------------- the tree
// Written once for two callers: the kernel (shared = the block's shared memory, sync =
// __syncthreads) and --explain, which replays it on the host (common/explain.h).
template <typename Shared, typename Sync>
__host__ __device__ void tree_sum(Shared& shared, unsigned tid, unsigned block, Sync sync) {
    // solution (assignment 1): reduce0's tree (the same pairs, step by step) with the adding threads contiguous
    for (unsigned s = 1; s < block; s *= 2) {
        const unsigned index = 2 * s * tid;
        if (index < block) shared[index] += shared[index + s];
        sync();  // every add of this step lands before any thread reads in the next
    }
    // stub: not_implemented("reduce1: tree_sum is not implemented yet (assignment 1)");
    // end solution
}

}  // namespace

// ---------------------------------------------------------------- kernel
template <typename T>
__global__ void interleaved_convergent(const T* in, std::size_t n, T* block_sums) {
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
                   interleaved_convergent<<<blocks, block, block * sizeof(T), stream>>>(src, count, dst);
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
extern const Stage reduce1_stage = {
    .name = "reduce1",
    .kernel = "interleaved_convergent",
    .idea = "the same tree with a strided index: active threads are contiguous, in the fewest warps",
    .chapter = "docs/01-divergence.md",
    .min_block = 32,  // any power-of-two block: the tree halves it down to one
    .max_block = 1024,
    .workspace_bytes = workspace_bytes,
    .sum_int = launch<int>,
    .sum_float = launch<float>,
    .sum_double = launch<double>,
    .trace = tree_trace,
};
