// reduce7: warp shuffles, 16-byte vector loads, and a single pass
//
// reduce6 plus the three ideas that take it to the memory roofline:
//
//  - Warp shuffles. __shfl_down_sync moves a value from one thread's register to
//    another's within a warp, so a warp sums its 32 values in five steps with no shared
//    memory and no barrier. Only the warps' sums (at most 32) meet in shared memory.
//  - 16-byte loads. One instruction loads an int4, float4 or double2, so a thread keeps
//    the same bytes in flight with a quarter of the load instructions. A vector load
//    needs an address aligned to its size: the few elements before the first aligned one
//    (the head) and after the last whole vector (the tail) are loaded one at a time, so
//    any pointer works.
//  - A single pass. Each block adds its sum into the result with one atomic (int), or the
//    last block to finish adds up the blocks' partial sums in a fixed order (float,
//    double: the same bits every run), so the whole reduction is one launch, not a second
//    one that waits for the first to drain.
//
// The loads go in tiles of kLoadsInFlight (4) x BLOCK vectors (32 KiB at the default 512
// threads), every thread issuing all its loads before adding any. The grid is reduce6's:
// the blocks that fit at once (never more than tiles), each striding over the tiles; but a
// large int input gets tiles of 8 loads and one block per tile (--grid auto, variants.cuh).
// solution (assignment 7): how, in the header (the sentence that gives the answer)
// A warp's five shuffle steps add the value 16, 8, 4, 2 and 1 lanes further down, so lane
// 0 ends with the warp's sum.
// stub: // Work out how far down each of a warp's five shuffle steps reaches.
// end solution

#include <cuda/atomic>

#include <cstdint>

#include "variants.cuh"             // --vec, --finish, --loads, --grid (docs/07's experiments; pdl: docs/11), vector types
#include "programmatic_launch.cuh"  // --finish pdl's launch, apart from the lesson
#include "stage.h"

namespace {  // this stage's own helpers: other stages define functions of the same names

// ---------------------------------------------------------------- sums in registers
template <typename T>
__device__ T warp_sum(T value) {
    // solution (assignment 7): sum the warp's 32 values in registers, with warp shuffles and no shared memory
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
    return value;  // lane 0 holds the warp's sum
    // stub: return not_implemented(value, "reduce7: warp_sum is not implemented yet (assignment 7)");
    // end solution
}

// Every thread of the block calls this; thread 0 gets the block's sum.
template <unsigned BLOCK, typename T>
__device__ T block_sum(T value) {
    __shared__ T warp_sums[BLOCK / 32];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    value = warp_sum(value);
    if (lane == 0) warp_sums[warp] = value;
    __syncthreads();
    value = T(0);
    if (warp == 0) value = warp_sum(lane < BLOCK / 32 ? warp_sums[lane] : T(0));
    return value;
}

// The last-block finish, in two levels. Each block counts itself done in its group; the last
// to count adds the group's partials in a fixed order (same grid, same bits): thread 0 wrote
// the partial and counts, so its release covers it and the last one's acquire sees them all.
// A resident grid is one group (group_size); a one-shot grid makes groups of BLOCK, and the
// last group to count adds their sums.
template <unsigned BLOCK, typename T>
__device__ void last_block_finish(T sum, T* block_sums, T* out, unsigned* blocks_done) {
    // solution (assignment 7): the last-block finish, in two levels
    constexpr unsigned kOneGroup = group_size(BLOCK);  // 1,024 at block 512 (variants.cuh)
    const bool one_group = gridDim.x <= kOneGroup;
    const unsigned group = one_group ? 0 : blockIdx.x / BLOCK, first = group * BLOCK;
    const unsigned end = one_group ? gridDim.x : min(first + BLOCK, gridDim.x), groups = one_group ? 1 : (gridDim.x + BLOCK - 1) / BLOCK;
    T* group_sums = block_sums + gridDim.x;
    __shared__ bool is_last;
    using Counter = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;
    if (threadIdx.x == 0) is_last = Counter(blocks_done[1 + group]).fetch_add(1u, cuda::memory_order_acq_rel) == end - first - 1;
    __syncthreads();  // also orders thread 0's acquire before the other threads' reads
    if (!is_last) return;
    sum = T(0);
    if (one_group) {  // a fixed count of predicated loads: a loop to `end` branches on the count
#pragma unroll 8      // left, and a warp whose lanes differ takes each branch, each a wait for L2
        for (unsigned k = 0; k < (kOneGroup + BLOCK - 1) / BLOCK; ++k) {
            const unsigned b = first + threadIdx.x + k * BLOCK;
            if (b < end) sum += __ldcg(block_sums + b);
        }
    } else if (first + threadIdx.x < end) {  // groups of BLOCK: one partial a thread
        sum = __ldcg(block_sums + first + threadIdx.x);
    }
    sum = block_sum<BLOCK>(sum);
    if (threadIdx.x == 0) {
        blocks_done[1 + group] = 0;  // ready for the next launch
        if (groups == 1) *out = sum;
        else {  // the group's sum is a partial of the second level, counted the same way
            group_sums[group] = sum;
            is_last = Counter(blocks_done[0]).fetch_add(1u, cuda::memory_order_acq_rel) == groups - 1;
        }
    }
    if (groups == 1) return;
    __syncthreads();  // thread 0's new is_last and its acquire before the others' reads (they read the old one before block_sum's barrier)
    if (!is_last) return;
    sum = T(0);
    for (unsigned g = threadIdx.x; g < groups; g += BLOCK) sum += __ldcg(group_sums + g);
    sum = block_sum<BLOCK>(sum);
    if (threadIdx.x == 0) *out = sum, blocks_done[0] = 0;
    // stub: not_implemented("reduce7: the last-block finish is not implemented yet (assignment 7)");
    // end solution
}

}  // namespace

// ---------------------------------------------------------------- kernel
template <unsigned BLOCK, int VEC, typename T, int... LOADS>
__global__ void __launch_bounds__(BLOCK, min_blocks<BLOCK, LOADS...>())  // min_blocks: registers for --loads and --grid auto (variants.cuh)
shuffle_vector_single_pass(const T* in, std::size_t n, T* block_sums, T* out, unsigned* blocks_done, Finish finish) {
    using V = typename Vector<T, VEC>::type;
    constexpr int kLoadsInFlight = loads_in_flight<LOADS...>();
    if (finish == Finish::Pdl) overlap_the_two_passes();  // --finish pdl (programmatic_launch.cuh)

    // Head and tail: the elements before the first address aligned for V, and after the
    // last whole vector. Fewer than VEC each, so block 0's first threads take them, and
    // the other blocks pass by with one branch on their index, straight to their loads.
    const std::size_t misaligned = reinterpret_cast<std::uintptr_t>(in) / sizeof(T) % VEC;
    const std::size_t to_aligned = misaligned ? VEC - misaligned : 0;
    const std::size_t head = to_aligned < n ? to_aligned : n;
    const std::size_t vectors = (n - head) / VEC;
    const std::size_t tail = head + vectors * VEC;
    T sum = T(0);
    if (blockIdx.x == 0) {
        if (threadIdx.x < head) sum += in[threadIdx.x];
        if (tail + threadIdx.x < n) sum += in[tail + threadIdx.x];
    }

    // The body, in tiles of kLoadsInFlight x BLOCK vectors. At each step a block reads one
    // contiguous tile, and each thread issues all of its kLoadsInFlight loads (BLOCK
    // vectors apart) before it adds any, so that many bytes are on their way at once.
    // solution (assignment 7): add every whole vector of the body, kLoadsInFlight vector loads in flight per thread
    const V* body = reinterpret_cast<const V*>(in + head);
    constexpr std::size_t kTile = std::size_t(kLoadsInFlight) * BLOCK;
    std::size_t i = blockIdx.x * kTile + threadIdx.x;
    for (; i + (kLoadsInFlight - 1) * BLOCK < vectors; i += gridDim.x * kTile) {
        V loaded[kLoadsInFlight];
#pragma unroll
        for (int k = 0; k < kLoadsInFlight; ++k) loaded[k] = body[i + k * BLOCK];
#pragma unroll
        for (int k = 0; k < kLoadsInFlight; ++k) sum = add_lanes<VEC>(sum, loaded[k]);
    }
    if (i < vectors) {  // only a block whose last tile is partial: the others skip its tests
#pragma unroll
        for (int k = 0; k < kLoadsInFlight; ++k) {  // the last tile, when the input ends inside it
            if (i + k * BLOCK < vectors) {
                const V loaded = body[i + k * BLOCK];  // one 16-byte load (add_lanes on body[...] loads each lane apart)
                sum = add_lanes<VEC>(sum, loaded);
            }
        }
    }
    // stub: if (vectors > 0) sum = not_implemented(sum, "reduce7: the vector loads are not implemented yet (assignment 7)");
    // end solution

    sum = block_sum<BLOCK>(sum);

    // ------------------------------------------------------------ the finish
    if (gridDim.x == 1) {  // one block: its sum is the result
        if (threadIdx.x == 0) *out = sum;
        return;
    }
    if (finish == Finish::Packed) return packed_finish(sum, out, blocks_done);  // int's default: atomic, no memset (variants.cuh)
    // solution (assignment 7): the atomic and the last-block finishes (--finish two-pass needs no more than the partials)
    if (finish == Finish::Atomic) {  // the launcher zeroed *out; the adds land in any order
        if (threadIdx.x == 0) atomicAdd(out, sum);
        return;
    }
    if (threadIdx.x == 0) block_sums[blockIdx.x] = sum;
    if (finish == Finish::TwoPass || finish == Finish::Pdl) return;  // the launcher sums block_sums with one more block
    return last_block_finish<BLOCK>(sum, block_sums, out, blocks_done);  // sum: thread 0's
    // stub: if (threadIdx.x == 0) block_sums[blockIdx.x] = sum;  // what --finish two-pass needs
    // stub: if (finish != Finish::TwoPass) not_implemented("reduce7: the single-pass finishes are not implemented yet (assignment 7)");
    // end solution
}

// ---------------------------------------------------------------- launcher
namespace {  // every stage names these three the same: only the kernel and the record say which stage

std::size_t counter_bytes(std::size_t n, const RunConfig& c) { return 256 * (1 + ceil_div(n, c.block * std::min<std::size_t>(group_size(c.block), c.block) * 32ul)); }

// One launch of the kernel of this shape (and the second pass, for the two-pass finishes).
template <typename T, unsigned BLOCK, int VEC, int... LOADS>
void launch_shape(const T* in, std::size_t n, T* out, T* block_sums, unsigned* blocks_done, Finish finish, Grid grid,
                  cudaStream_t stream) {
    const auto kernel = shuffle_vector_single_pass<BLOCK, VEC, T, LOADS...>;
    if (finish == Finish::Pdl) require_programmatic_launch(kernel, "reduce7 --finish pdl");
    const unsigned blocks = choose_grid(grid, ceil_div(n, tile_elements<BLOCK, VEC, LOADS...>()),
                                        [&] { return resident_blocks(kernel, BLOCK, 0); });
    if (finish == Finish::Atomic && blocks > 1) write_zero(out, stream);
    kernel<<<blocks, BLOCK, 0, stream>>>(in, n, block_sums, out, blocks_done, finish);
    CUDA_CHECK_LAUNCH();
    if (finish == Finish::TwoPass && blocks > 1) {
        kernel<<<1, BLOCK, 0, stream>>>(block_sums, blocks, block_sums, out, blocks_done, finish);
        CUDA_CHECK_LAUNCH();
    }
    if (finish == Finish::Pdl && blocks > 1) {  // the same second pass, launched early
        launch_programmatic_dependent(kernel, 1, BLOCK, stream, block_sums, blocks, block_sums, out, blocks_done, finish);
    }
}

template <typename T>
void launch(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config, cudaStream_t stream) {
    if (n == 0) return write_zero(out, stream);
    auto* blocks_done = static_cast<unsigned*>(workspace);
    T* block_sums = reinterpret_cast<T*>(static_cast<char*>(workspace) + counter_bytes(n, config));
    const Finish finish = supported_finish<T>(config);
    const Grid grid = chosen_as<Grid, T>(kGrid, config);
    dispatch_shape<T>(config, [&]<unsigned BLOCK, int VEC, int... LOADS>(Block<BLOCK>, Vec<VEC>, Loads<LOADS...>) {
        if constexpr (has_large_tile<T, BLOCK, VEC, LOADS...>()) {  // --grid auto on a large int or float input (variants.cuh)
            const auto large = shuffle_vector_single_pass<BLOCK, VEC, T, kLargeTileLoads>;
            if (grid == Grid::Auto && large_tile_pays(finish, ceil_div(n, tile_elements<BLOCK, VEC, kLargeTileLoads>()),
                                                      [&] { return resident_blocks(large, BLOCK, 0); })) {
                return launch_shape<T, BLOCK, VEC, kLargeTileLoads>(in, n, out, block_sums, blocks_done, finish,
                                                                   Grid::OneShot, stream);
            }
        }
        launch_shape<T, BLOCK, VEC, LOADS...>(in, n, out, block_sums, blocks_done, finish,
                                              grid == Grid::Auto ? Grid::Resident : grid, stream);
    });
}

std::size_t workspace_bytes(std::size_t n, std::size_t value_size, const RunConfig& config) {
    return counter_bytes(n, config) + 2 * ceil_div(n, config.block) * value_size;  // a partial per block, and the groups' sums
}

}  // namespace

// The stage's record: `extern` because the runner and the tests find it by name (common/stage_list.cu.in).
extern const Stage reduce7_stage = {
    .name = "reduce7",
    .kernel = "shuffle_vector_single_pass",
    .idea = "warp shuffles, 16-byte loads and a single pass",
    .chapter = "docs/07-shuffles-vectors.md",
    .min_block = 32,  // shuffles need whole warps, nothing more
    .max_block = 1024,
    .default_block = 512,  // 32 KiB tiles: ahead of 256 for int, level for float (docs/results/reduce7_front_871d9b8)
    .workspace_bytes = workspace_bytes,
    .sum_int = launch<int>,
    .sum_float = launch<float>,
    .sum_double = launch<double>,
    .variants = kVariants,
};
