// reduce6: many elements per thread: a grid-stride loop over a fixed grid
//
// reduce5 plus one idea. Instead of one block per 2 x BLOCK values, the launcher starts
// only as many blocks as the GPU holds at once (SMs x resident blocks per SM, from the
// occupancy calculator), and each thread walks the whole input with a stride of the
// whole grid, adding in a register as it goes. Per value, the tree, the barriers and the
// block start-up now happen once per hundreds of values instead of once per 2 x BLOCK,
// and every thread keeps loads in flight for as long as the input lasts. The grid's few
// hundred partial sums are finished by one more launch of a single block.
//
// What it exposes: the shared-memory tree is now a small part of the time; what is left
// is how many bytes each thread keeps in flight and the second launch
// (docs/06-grid-stride.md). reduce7 attacks both.
//
// --loads 1|2|4|8|16 sets the independent loads each thread issues per step of the loop
// (default 2), to measure what the bytes in flight are worth (scripts/loads_sweep.sh).
//
//   run:      build/release/bin/reduce6 --n 2^26 --type float
//   variant:  build/release/bin/reduce6 --n 2^28 --loads 8
//   profile:  scripts/profile.sh reduce6

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

// The last six steps, by warp 0 alone. Every step reads, then writes: the first
// __syncwarp() keeps a lane from overwriting a slot its neighbor has not read yet, the
// second makes the writes visible to the warp before the next read.
template <typename T>
__device__ T last_warp_sum(T* shared, T sum, unsigned tid) {
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
constexpr unsigned kInputsPerThread = 2;  // per step of the grid-stride loop, by default

// --loads (declared with the launcher) reaches the kernel as INPUTS...: empty for the
// default, so that the kernel that runs by default keeps its name, grid_stride<256u, int>,
// which scripts/sass.sh and the profiles look for.
template <unsigned... INPUTS>
__host__ __device__ constexpr unsigned inputs_per_step() {
    return sizeof...(INPUTS) == 0 ? kInputsPerThread : (0u + ... + INPUTS);
}

template <unsigned BLOCK, typename T, unsigned... INPUTS>
__global__ void grid_stride(const T* in, std::size_t n, T* block_sums) {
    constexpr unsigned kInputs = inputs_per_step<INPUTS...>();
    T* shared = dynamic_shared<T>();
    const unsigned tid = threadIdx.x;
    // solution (assignment 6): each thread adds, in a register, kInputs values per step of a loop over the whole input
    const std::size_t stride = kInputs * std::size_t(BLOCK) * gridDim.x;  // the whole grid's share of one step
    T sum = T(0);
    for (std::size_t i = blockIdx.x * (kInputs * std::size_t(BLOCK)) + tid; i < n; i += stride) {
        // The loads of one step do not depend on each other, so the thread has all kInputs
        // on their way to DRAM before the first add waits for one.
        sum += in[i];
#pragma unroll
        for (unsigned k = 1; k < kInputs; ++k) {
            if (i + k * BLOCK < n) sum += in[i + k * BLOCK];
        }
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
// --loads: how many inputs each thread loads per step of the loop before it adds them.
// More keep more bytes in flight per thread (Little's law, docs/05-complete-unroll.md).
// Labelled "loads=8" when not the default; --variants leaves it at the choice given.
constexpr std::string_view kLoadsChoices[] = {"1", "2", "4", "8", "16"};
constexpr Variant kLoads = {
    .name = "loads",
    .value_name = "L",
    .choices = kLoadsChoices,
    .help = "inputs each thread loads per step, 1 | 2 | 4 | 8 | 16 (default 2)",
    .default_choice = "2",  // kInputsPerThread
    .timed_by_variants = false,
};
constexpr Variant kVariants[] = {kLoads};

// grid_stride for one --loads: no INPUTS for the default (see the kernel), one for the others.
template <unsigned BLOCK, typename T, typename F>
void dispatch_inputs_per_step(unsigned inputs, F&& f) {
    if (inputs == kInputsPerThread) return f(grid_stride<BLOCK, T>);
    if (inputs == 1) return f(grid_stride<BLOCK, T, 1>);
    if (inputs == 4) return f(grid_stride<BLOCK, T, 4>);
    if (inputs == 8) return f(grid_stride<BLOCK, T, 8>);
    if (inputs == 16) return f(grid_stride<BLOCK, T, 16>);
    throw std::invalid_argument("unsupported inputs per step " + std::to_string(inputs));
}

template <typename T>
void grid_stride_sum(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config,
                     cudaStream_t stream) {
    if (n == 0) return write_zero(out, stream);
    const auto inputs = static_cast<unsigned>(chosen_number<T>(kLoads, config));
    dispatch_block_size<64, 1024>(config.block, [&](auto block) {
        constexpr unsigned BLOCK = decltype(block)::value;
        dispatch_inputs_per_step<BLOCK, T>(inputs, [&](auto kernel) {
            // solution (assignment 6): launch only the blocks that fit on the GPU at once, then sum their partials with one block
            const std::size_t shared_bytes = BLOCK * sizeof(T);
            // A fixed grid: the blocks that fit on the GPU at once, however large n is.
            const auto blocks = static_cast<unsigned>(std::min<std::size_t>(
                ceil_div(n, inputs * BLOCK), resident_blocks(kernel, BLOCK, shared_bytes)));
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
    });
}

std::size_t grid_stride_workspace(std::size_t n, std::size_t value_size, const RunConfig& config) {
    return ceil_div(n, config.block) * value_size;  // at most one partial per block (--loads 1: BLOCK inputs each)
}

// The stage's record: `extern` because the runner and the tests find it by name (common/stages.h).
extern const Stage reduce6_stage = {
    .name = "reduce6",
    .kernel = "grid_stride",
    .idea = "many elements per thread: a grid-stride loop over a grid that just fills the GPU",
    .min_block = 64,  // the last warp adds slot tid + 32, so a block needs two warps
    .max_block = 1024,
    .workspace_bytes = grid_stride_workspace,
    .sum_int = grid_stride_sum<int>,
    .sum_float = grid_stride_sum<float>,
    .sum_double = grid_stride_sum<double>,
    .variants = kVariants,
};
