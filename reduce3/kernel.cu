// reduce3: the first add during the load, and the running sum in a register
//
// reduce2 plus one idea: a thread's sum lives in a register. Each thread adds two input
// values as it loads them, before anything reaches shared memory. A block now covers
// 2 x blockDim.x values: half as many blocks, and no thread is idle at the first add.
// Through the tree the thread keeps adding into the same register and only stores it for
// the others to read, so a step loads one value from shared memory (its partner's), not two.
// solution (assignment 3): how, in the header (the sentence that gives the answer)
// With i = blockIdx.x x 2 x blockDim.x + tid, sum starts as in[i] (0 where i >= n) and
// adds in[i + blockDim.x] where i + blockDim.x < n.
// stub: // Work out the two indices, and what a thread adds where one of them lies past n.
// end solution

#include "shared_running_sum.cuh"  // --running-sum shared: reduce2's tree, to measure the idea's two halves apart
#include "stage.h"

namespace {  // this stage's own helpers: other stages define functions of the same names

// ---------------------------------------------------------------- the tree
// Written once for two callers: the kernel (shared = the block's shared memory, sync =
// __syncthreads) and --explain, which replays it on the host (common/explain.h). sum is
// the thread's register: the tree adds into it, and stores it only for a partner to read.
template <typename Shared, typename Sum, typename Sync>
__host__ __device__ void tree_sum(Shared& shared, Sum sum, unsigned tid, unsigned block, Sync sync) {
    for (unsigned s = block / 2; s > 0; s >>= 1) {
        if (tid < s) shared[tid] = sum = sum + shared[tid + s];
        sync();  // every add of this step lands before any thread reads in the next
    }
}

}  // namespace

// ---------------------------------------------------------------- kernel
template <typename T, RunningSum WHERE = RunningSum::Register>
__global__ void first_add_during_load(const T* in, std::size_t n, T* block_sums) {
    T* shared = dynamic_shared<T>();
    const unsigned tid = threadIdx.x;
    // solution (assignment 3): each thread loads two inputs, blockDim.x apart, and adds them into its register
    const std::size_t i = blockIdx.x * (2 * std::size_t(blockDim.x)) + tid;
    T sum = i < n ? in[i] : T(0);  // the last block may run past the end: add zeros
    if (i + blockDim.x < n) sum += in[i + blockDim.x];
    // stub: T sum = not_implemented(T(0), "reduce3: the first add during the load is not implemented yet (assignment 3)");
    // end solution
    shared[tid] = sum;
    __syncthreads();
    if constexpr (WHERE == RunningSum::Register) tree_sum(shared, sum, tid, blockDim.x, SyncThreads{});
    else shared_tree_sum(shared, tid, blockDim.x);  // --running-sum shared (shared_running_sum.cuh)
    if (tid == 0) block_sums[blockIdx.x] = shared[0];
}

// ---------------------------------------------------------------- launcher
namespace {  // every stage names these three the same: only the kernel and the record say which stage

constexpr unsigned kInputsPerThread = 2;

template <typename T>
void launch(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config, cudaStream_t stream) {
    const unsigned block = config.block;
    const auto kernel = chosen_kernel<T>(kRunningSum, config, first_add_during_load<T, RunningSum::Register>,
                                         first_add_during_load<T, RunningSum::Shared>);
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
        tree_sum(shared, shared.running_sum(tid), tid, b, sync);
    });
}

}  // namespace

// The stage's record: `extern` because the runner and the tests find it by name (common/stage_list.cu.in).
extern const Stage reduce3_stage = {
    .name = "reduce3",
    .kernel = "first_add_during_load",
    .idea = "first add during the load; each thread's running sum in a register",
    .chapter = "docs/03-first-add.md",
    .min_block = 32,  // any power-of-two block: the tree halves it down to one
    .max_block = 1024,
    .workspace_bytes = workspace_bytes,
    .sum_int = launch<int>,
    .sum_float = launch<float>,
    .sum_double = launch<double>,
    .trace = tree_trace,
    .variants = kVariants,
};
