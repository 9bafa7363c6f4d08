// reduce6: many elements per thread: a grid-stride loop over a fixed grid
//
// reduce5 plus one idea. The launcher starts only as many blocks as the GPU holds at once
// (SMs x resident blocks per SM, from the occupancy calculator), and each thread walks the
// whole input with a stride of the whole grid, adding in a register as it goes: the tree,
// the barriers and the block start-up are paid once per thread for all its values (about
// 250 at 2^26 ints on the H100), not once per two, and loads stay in flight as long as the
// input lasts.
// solution (assignment 6): how, in the header (the sentences that give the answer)
// A step adds two values BLOCK apart, as reduce5's first add does, and the same kernel,
// launched with one block, sums the grid's partials (1,056 on the H100 at block 256).
// stub: // The grid's partial sums are finished by one more launch of a single block.
// end solution

#include "stage.h"

namespace {  // this stage's own helpers: other stages define functions of the same names

// ---------------------------------------------------------------- the tree
template <unsigned BLOCK, typename T>
__device__ T tree_sum(T* shared, T sum, unsigned tid) {
#pragma unroll
    for (unsigned s = BLOCK / 2; s > 32; s >>= 1) {
        if (tid < s) shared[tid] = sum = sum + shared[tid + s];
        __syncthreads();  // every add of this step lands before any thread reads in the next
    }
    return sum;  // what shared[tid] holds, for the last warp
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
__global__ void grid_stride(const T* in, std::size_t n, T* block_sums) {
    T* shared = dynamic_shared<T>();
    const unsigned tid = threadIdx.x;
    // solution (assignment 6): each thread adds, in a register, two values per step of a loop over the whole input
    const std::size_t stride = 2 * std::size_t(BLOCK) * gridDim.x;  // the whole grid's share of one step
    T sum = T(0);
    for (std::size_t i = blockIdx.x * (2 * std::size_t(BLOCK)) + tid; i < n; i += stride) {
        sum += in[i];
        if (i + BLOCK < n) sum += in[i + BLOCK];
    }
    // stub: T sum = not_implemented(T(0), "reduce6: the grid-stride loop is not implemented yet (assignment 6)");
    // end solution
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

constexpr unsigned kInputsPerThread = 2;  // per step of the grid-stride loop

template <typename T>
void launch(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config, cudaStream_t stream) {
    if (n == 0) return write_zero(out, stream);
    dispatch_block_size<64, 1024>(config.block, [&](auto block) {
        constexpr unsigned BLOCK = decltype(block)::value;
        // solution (assignment 6): launch only the blocks that fit on the GPU at once, then sum their partials with one block
        const auto kernel = grid_stride<BLOCK, T>;
        const std::size_t shared_bytes = BLOCK * sizeof(T);
        // A fixed grid: the blocks that fit on the GPU at once, however large n is.
        const auto blocks = static_cast<unsigned>(std::min<std::size_t>(
            ceil_div(n, kInputsPerThread * BLOCK), resident_blocks(kernel, BLOCK, shared_bytes)));
        if (blocks == 1) {
            kernel<<<1, BLOCK, shared_bytes, stream>>>(in, n, out);
            CUDA_CHECK_LAUNCH();
            return;
        }
        T* block_sums = static_cast<T*>(workspace);
        kernel<<<blocks, BLOCK, shared_bytes, stream>>>(in, n, block_sums);
        CUDA_CHECK_LAUNCH();
        // The grid-stride loop lets one block sum any number of values: here, the partials.
        kernel<<<1, BLOCK, shared_bytes, stream>>>(block_sums, blocks, out);
        CUDA_CHECK_LAUNCH();
        // stub: not_implemented("reduce6: the launch is not implemented yet (assignment 6)");
        // end solution
    });
}

std::size_t workspace_bytes(std::size_t n, std::size_t value_size, const RunConfig& config) {
    return ceil_div(n, kInputsPerThread * config.block) * value_size;  // at most one partial per block
}

}  // namespace

// The stage's record: `extern` because the runner and the tests find it by name (common/stage_list.cu.in).
extern const Stage reduce6_stage = {
    .name = "reduce6",
    .kernel = "grid_stride",
    .idea = "many elements per thread: a grid-stride loop over a grid that just fills the GPU",
    .chapter = "docs/06-grid-stride.md",
    .min_block = 64,  // the last warp adds slot tid + 32, so a block needs two warps
    .max_block = 1024,
    .workspace_bytes = workspace_bytes,
    .sum_int = launch<int>,
    .sum_float = launch<float>,
    .sum_double = launch<double>,
};
