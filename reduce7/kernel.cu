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
// threads), every thread issuing all its loads before adding any. The grid is never larger
// than the number of tiles the input fills (the last one possibly in part), so a small
// input gets few blocks and a cheap finish. Past that, the finish picks the grid: with an
// atomic finish (atomic, packed) every tile of 16 KiB or more gets its own block (measured
// faster at the largest sizes); the finishes that add partials keep reduce6's fixed grid.
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

}  // namespace

// ---------------------------------------------------------------- kernel
template <unsigned BLOCK, int VEC, typename T, int... LOADS>
__global__ void __launch_bounds__(BLOCK, min_blocks<LOADS...>())  // min_blocks: --loads's registers (variants.cuh)
shuffle_vector_single_pass(const T* in, std::size_t n, T* block_sums, T* out, unsigned* blocks_done, Finish finish) {
    using V = typename Vector<T, VEC>::type;
    constexpr int kLoadsInFlight = loads_in_flight<LOADS...>();
    if (finish == Finish::Pdl) overlap_the_two_passes();  // --finish pdl (programmatic_launch.cuh)

    // Head and tail: the elements before the first address aligned for V, and after the
    // last whole vector. Fewer than VEC each; the first threads of the grid take them.
    const std::size_t misaligned = reinterpret_cast<std::uintptr_t>(in) / sizeof(T) % VEC;
    const std::size_t to_aligned = misaligned ? VEC - misaligned : 0;
    const std::size_t head = to_aligned < n ? to_aligned : n;
    const std::size_t vectors = (n - head) / VEC;
    const std::size_t tail = head + vectors * VEC;
    const std::size_t thread = blockIdx.x * std::size_t(BLOCK) + threadIdx.x;
    T sum = T(0);
    if (thread < head) sum += in[thread];
    if (tail + thread < n) sum += in[tail + thread];

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
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k) {  // the last tile, when the input ends inside it
        if (i + k * BLOCK < vectors) sum = add_lanes<VEC>(sum, body[i + k * BLOCK]);
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
    if (finish == Finish::TwoPass) return;  // the launcher sums block_sums with one more block
    if (finish == Finish::Pdl) return;      // the same; only the second launch differs

    // Last block: every block counts itself done; the one that counts last sums the
    // partials. Thread 0 wrote this block's partial and thread 0 increments the count, so
    // the release of its fetch_add covers the partial: any block whose acquire sees the
    // count also sees the partial. The last block's acquire sees every block's count, so
    // every partial. It adds them in a fixed order (each thread a strided share, then the
    // shuffle tree of block_sum), so the same grid gives the same bits every run. The
    // counter lives in the workspace and is reset by the last block: two launches sharing
    // one workspace at the same time would count each other's blocks. Give each
    // concurrent reduction its own workspace (the harness allocates one per call site).
    __shared__ bool is_last;
    if (threadIdx.x == 0) {
        cuda::atomic_ref<unsigned, cuda::thread_scope_device> count(*blocks_done);
        is_last = count.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
    }
    __syncthreads();  // also orders thread 0's acquire before the other threads' reads
    if (!is_last) return;
    T total = T(0);
    for (unsigned b = threadIdx.x; b < gridDim.x; b += BLOCK) total += __ldcg(block_sums + b);
    total = block_sum<BLOCK>(total);
    if (threadIdx.x == 0) {
        *out = total;
        *blocks_done = 0;  // ready for the next launch
    }
    // stub: if (threadIdx.x == 0) block_sums[blockIdx.x] = sum;  // what --finish two-pass needs
    // stub: if (finish != Finish::TwoPass) not_implemented("reduce7: the single-pass finishes are not implemented yet (assignment 7)");
    // end solution
}

// ---------------------------------------------------------------- launcher
namespace {  // every stage names these three the same: only the kernel and the record say which stage

constexpr std::size_t kCounterBytes = 256;  // blocks_done, then the partials, aligned

template <typename T>
void launch(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config, cudaStream_t stream) {
    if (n == 0) return write_zero(out, stream);
    auto* blocks_done = static_cast<unsigned*>(workspace);
    T* block_sums = reinterpret_cast<T*>(static_cast<char*>(workspace) + kCounterBytes);
    const Finish finish = chosen_as<Finish, T>(kFinish, config);
    dispatch_shape<T>(config, [&]<unsigned BLOCK, int VEC, int... LOADS>(Block<BLOCK>, Vec<VEC>, Loads<LOADS...>) {
        const auto kernel = shuffle_vector_single_pass<BLOCK, VEC, T, LOADS...>;
        if (finish == Finish::Pdl) require_programmatic_launch(kernel, "reduce7 --finish pdl");
        // The grid: never more blocks than tiles of work; the finish, the tile's size and --grid decide (choose_grid).
        constexpr std::size_t kTileElements = std::size_t(VEC) * loads_in_flight<LOADS...>() * BLOCK;
        const unsigned blocks = choose_grid<T>(config, ceil_div(n, kTileElements), kTileElements * sizeof(T),
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
    });
}

std::size_t workspace_bytes(std::size_t n, std::size_t value_size, const RunConfig& config) {
    return kCounterBytes + ceil_div(n, config.block) * value_size;  // at most one partial per block
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
