// reduce0: a tree in shared memory, interleaved addressing, the adding threads scattered (the baseline)
//
// Each block copies blockDim.x values into shared memory and adds them pairwise in a
// tree: at step s = 1, 2, 4, ... every thread whose index is a multiple of 2s adds the
// value s slots to its right into its own slot. After log2(blockDim.x) steps slot 0 holds
// the block's sum; the launcher then reduces the per-block sums with the same kernel
// until one value is left.
//
// What it costs: `tid % (2 * s) == 0` picks threads spread over every warp, so at most
// steps every warp issues the step's instructions for a few busy lanes (partly active
// warps; the classic account calls this divergence, but on the H100 the compiler
// predicates this `if` and no warp splits: docs/01-divergence.md), and % by a run-time
// value is a slow, many-instruction operation. `--select bitmask` runs the
// same test as (tid & (2s - 1)) == 0, with no division (bitmask_select.cuh), so that the
// two costs can be measured apart (docs/01-divergence.md); reduce1 packs the adding
// threads into whole warps.

#include "bitmask_select.cuh"  // --select bitmask: the variant and its tree
#include "stage.h"

namespace {  // this stage's own helpers: other stages define functions of the same names

// ---------------------------------------------------------------- the tree
// Written once for two callers: the kernel (shared = the block's shared memory, sync =
// __syncthreads) and --explain, which replays it on the host (common/explain.h).
template <typename Shared, typename Sync>
__host__ __device__ void tree_sum(Shared& shared, unsigned tid, unsigned block, Sync sync) {
    for (unsigned s = 1; s < block; s *= 2) {
        if (tid % (2 * s) == 0) shared[tid] += shared[tid + s];
        sync();  // every add of this step lands before any thread reads in the next
    }
}

}  // namespace

// ---------------------------------------------------------------- kernel
template <typename T, Select SELECT = Select::Modulo>
__global__ void interleaved_divergent(const T* in, std::size_t n, T* block_sums) {
    T* shared = dynamic_shared<T>();
    const unsigned tid = threadIdx.x;
    const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + tid;
    shared[tid] = i < n ? in[i] : T(0);  // the last block may run past the end: add zeros
    __syncthreads();
    if constexpr (SELECT == Select::Modulo) tree_sum(shared, tid, blockDim.x, SyncThreads{});
    else bitmask_tree_sum(shared, tid, blockDim.x);  // --select bitmask (bitmask_select.cuh)
    if (tid == 0) block_sums[blockIdx.x] = shared[0];
}

// ---------------------------------------------------------------- launcher
namespace {  // every stage names these three the same: only the kernel and the record say which stage

constexpr unsigned kInputsPerThread = 1;

template <typename T>
void launch(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config, cudaStream_t stream) {
    const unsigned block = config.block;
    const auto kernel = chosen_kernel<T>(kSelect, config, interleaved_divergent<T, Select::Modulo>,
                                         interleaved_divergent<T, Select::Bitmask>);
    run_passes(in, n, out, workspace, kInputsPerThread * block, stream,
               [&](const T* src, std::size_t count, T* dst, unsigned blocks) {
                   kernel<<<blocks, block, block * sizeof(T), stream>>>(src, count, dst);
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
extern const Stage reduce0_stage = {
    .name = "reduce0",
    .kernel = "interleaved_divergent",
    .idea = "a tree in shared memory, interleaved addressing, the adding threads scattered over every warp",
    .chapter = "docs/00-overview.md",
    .min_block = 32,  // any power-of-two block: the tree halves it down to one
    .max_block = 1024,
    .baseline = true,  // every stage's "x reduce0" divides by this one's time
    .workspace_bytes = workspace_bytes,
    .sum_int = launch<int>,
    .sum_float = launch<float>,
    .sum_double = launch<double>,
    .trace = tree_trace,
    .variants = kVariants,
};
