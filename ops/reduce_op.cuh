// reduce7's kernel for any operator (operators.cuh), with three ways to reduce a block.
//
// The kernel is reduce7/kernel.cu's, with "+" replaced by Op::combine and 0 by
// Op::identity():
//  - 16 bytes per load, whatever the element: 4 ints or floats, 2 doubles or int64s,
//    8 halves or bfloat16s; the head and tail of a misaligned input one element at a time;
//  - kLoadsInFlight vector loads issued by each thread before it combines any;
//  - a fixed grid: no more blocks than fit on the GPU at once, nor than whole tiles;
//  - a single pass: the last block to finish combines the blocks' partial results in a
//    fixed order, so every run gives the same bits. (reduce7's atomic finish has no
//    place here: there is no atomic argmax or meanvar.)
//
// The block's reduction is a template parameter, to show what a library saves:
//  - ShuffleBlockReduce: the warp shuffles written out, as reduce7 does (20 lines: a
//    6-line shuffle_warp_reduce and a 14-line block step);
//  - CooperativeGroupsBlockReduce: cooperative_groups::reduce on 32-thread tiles, and the
//    step across warps still written out (16 lines);
//  - CubBlockReduce: cub::BlockReduce does both levels (9 lines).
// On reduce7's sum all three are equally fast (ops/library_stage_cg.cu, library_stage_cub.cu; reduce_all times
// them as reduce7, reduce7_cg and reduce7_cub: on an H200, 2^26 floats, 4121, 4162 and
// 4129 GB/s): a block reduces once, after dozens of vector loads per thread. reduce_ops
// runs every operator with the first, except that argmax reduces each warp with
// ArgMax::warp_reduce (redux.sync, sm_80 and later): for its (value, index) pairs, with
// few loads per thread, the shuffle steps' instructions counted (chapter 10).
#pragma once

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cub/block/block_reduce.cuh>
#include <cuda/atomic>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "operators.cuh"
#include "stage.h"

namespace ops {

// Two copies, kept in step: this kernel repeats reduce7/kernel.cu's tile loop, load count
// and last-block finish, with Op::combine for "+" (the finish's case of one group: this
// grid is always the resident one, whose partials fit one of reduce7's groups). reduce7's stays the
// readable lesson (and its classroom assignment); tests/host/test_copies_in_step.cpp fails
// when a line of the shared protocol changes in one and not in the other.
constexpr int kLoadsInFlight = 4;  // independent vector loads each thread issues before combining

// Op::combine as a function object, for the libraries' reductions.
template <typename Op>
struct Combine {
    using Acc = typename Op::Acc;
    __host__ __device__ Acc operator()(const Acc& a, const Acc& b) const { return Op::combine(a, b); }
};

// ---------------------------------------------------------------- block reductions
// Every thread of the block calls reduce<BLOCK, Op>(acc); thread 0 gets the block's
// result. The kernel calls it twice (for the block's own result and, in the last block,
// for the partials), with a __syncthreads() in between, so shared memory can be reused.

// Lane 0 gets the warp's result: five steps, each halving the lanes that hold data.
template <typename Op>
__device__ typename Op::Acc shuffle_warp_reduce(typename Op::Acc acc) {
#pragma unroll
    for (unsigned offset = 16; offset > 0; offset /= 2) acc = Op::combine(acc, shuffle_down(acc, offset));
    return acc;
}

// An operator may reduce a warp its own way (ArgMax::warp_reduce, with redux.sync); it is
// used on sm_80 and later, and every lane gets the result. Otherwise the shuffles.
template <typename Op, typename = void>
struct ReducesWarp : std::false_type {};
template <typename Op>
struct ReducesWarp<Op, std::void_t<decltype(&Op::warp_reduce)>> : std::true_type {};

template <typename Op>
__device__ typename Op::Acc warp_reduce(typename Op::Acc acc) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    constexpr bool kOwnWarpReduce = ReducesWarp<Op>::value;
#else
    constexpr bool kOwnWarpReduce = false;
#endif
    if constexpr (kOwnWarpReduce) return Op::warp_reduce(acc);
    else return shuffle_warp_reduce<Op>(acc);
}

// 1. Written out, as in reduce7: shuffles within each warp, the warps' results through
//    shared memory (BLOCK/32 Accs) and one barrier, then shuffles in warp 0.
struct ShuffleBlockReduce {
    template <unsigned BLOCK, typename Op>
    __device__ static typename Op::Acc reduce(typename Op::Acc acc) {
        using Acc = typename Op::Acc;
        __shared__ Acc warp_results[BLOCK / 32];
        const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
        acc = warp_reduce<Op>(acc);
        if (lane == 0) warp_results[warp] = acc;
        __syncthreads();
        acc = Op::identity();
        if (warp == 0) acc = warp_reduce<Op>(lane < BLOCK / 32 ? warp_results[lane] : Op::identity());
        return acc;
    }
};

// cg::plus for the sum: with 32-bit integers on sm_80 and later, cg::reduce turns it into
// one redux.sync instruction instead of five shuffle steps. Other operators: combine.
template <typename Op>
__device__ auto cooperative_groups_operator() {
    if constexpr (Op::kind == OpKind::Sum) return cooperative_groups::plus<typename Op::Acc>();
    else return Combine<Op>();
}

// 2. Cooperative groups: the warp is a thread_block_tile<32>, and cg::reduce does its
//    shuffles and hands the result to every lane, not only lane 0. The step across warps is
//    still ours: the same shared array and a block.sync() (a __syncthreads()).
struct CooperativeGroupsBlockReduce {
    template <unsigned BLOCK, typename Op>
    __device__ static typename Op::Acc reduce(typename Op::Acc acc) {
        namespace cg = cooperative_groups;
        using Acc = typename Op::Acc;
        __shared__ Acc warp_results[BLOCK / 32];
        const cg::thread_block block = cg::this_thread_block();
        const cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
        const auto op = cooperative_groups_operator<Op>();
        acc = cg::reduce(warp, acc, op);
        if (warp.thread_rank() == 0) warp_results[warp.meta_group_rank()] = acc;
        block.sync();
        if (warp.meta_group_rank() != 0) return Op::identity();
        return cg::reduce(warp, warp.thread_rank() < BLOCK / 32 ? warp_results[warp.thread_rank()] : Op::identity(), op);
    }
};

// 3. CUB: cub::BlockReduce does both levels. It needs its TempStorage in shared memory,
//    declared by the caller but sized by CUB, and a barrier before that storage is used
//    again (the kernel has one between its two calls). The result is valid in thread 0 only.
struct CubBlockReduce {
    template <unsigned BLOCK, typename Op>
    __device__ static typename Op::Acc reduce(typename Op::Acc acc) {
        using BlockReduce = cub::BlockReduce<typename Op::Acc, BLOCK>;
        __shared__ typename BlockReduce::TempStorage storage;
        if constexpr (Op::kind == OpKind::Sum) return BlockReduce(storage).Sum(acc);
        else return BlockReduce(storage).Reduce(acc, Combine<Op>());
    }
};

// ---------------------------------------------------------------- one vector load
// An operator may fold a whole vector its own way (fold_lanes: Max, Min, AbsMax, ArgMax,
// MeanVar); this detects it.
template <typename Op, typename = void>
struct FoldsLanes : std::false_type {};
template <typename Op>
struct FoldsLanes<Op, std::void_t<decltype(&Op::template fold_lanes<1>)>> : std::true_type {};

// An operator whose fold_lanes needs each thread's elements in index order (ArgMax) says so.
template <typename Op, typename = void>
struct FoldNeedsIndexOrder : std::false_type {};
template <typename Op>
struct FoldNeedsIndexOrder<Op, std::void_t<decltype(Op::kFoldNeedsIndexOrder)>>
    : std::bool_constant<Op::kFoldNeedsIndexOrder> {};

// The VEC elements of one 16-byte load, the first of them at index `first`, into acc.
template <typename Op, int VEC>
__device__ typename Op::Acc fold_vector(typename Op::Acc acc, const uint4& loaded, std::size_t first) {
    const auto* lanes = reinterpret_cast<const typename Op::In*>(&loaded);
    if constexpr (FoldsLanes<Op>::value) {
        return Op::template fold_lanes<VEC>(acc, lanes, first);
    } else {
#pragma unroll
        for (int k = 0; k < VEC; ++k) acc = Op::combine(acc, Op::transform(lanes[k], first + k));
        return acc;
    }
}

// ---------------------------------------------------------------- kernel
template <typename Op, typename BlockReduce, unsigned BLOCK>
__global__ void __launch_bounds__(BLOCK)
    reduce_single_pass(const typename Op::In* in, std::size_t n, typename Op::Acc* partials,
                       typename Op::Acc* out, unsigned* blocks_done) {
    using In = typename Op::In;
    using Acc = typename Op::Acc;
    constexpr int VEC = 16 / sizeof(In);  // elements per 16-byte load

    // Head and tail: the elements before the first 16-byte aligned address, and after the
    // last whole vector. Fewer than VEC each; the first threads of the grid take them. For
    // argmax the tail comes after the body, so that every thread meets its elements in
    // index order (its fold_lanes counts on that); for the others before, as in reduce7:
    // after the loop it would keep `tail` and `thread` in registers through it, 34 instead
    // of 32 for the float sum, and 6 blocks of 256 would fit on an SM instead of 8.
    constexpr bool kTailLast = FoldNeedsIndexOrder<Op>::value;
    const std::size_t misaligned = reinterpret_cast<std::uintptr_t>(in) / sizeof(In) % VEC;
    const std::size_t to_aligned = misaligned ? VEC - misaligned : 0;
    const std::size_t head = to_aligned < n ? to_aligned : n;
    const std::size_t vectors = (n - head) / VEC;
    const std::size_t tail = head + vectors * VEC;
    const std::size_t thread = blockIdx.x * std::size_t(BLOCK) + threadIdx.x;
    Acc acc = Op::identity();
    if (thread < head) acc = Op::combine(acc, Op::transform(in[thread], thread));
    if (!kTailLast && tail + thread < n) acc = Op::combine(acc, Op::transform(in[tail + thread], tail + thread));

    // The body, in tiles of kLoadsInFlight x BLOCK vectors, as in reduce7: each thread issues
    // all its loads before it combines any, so that many bytes are on their way at once.
    const uint4* body = reinterpret_cast<const uint4*>(in + head);
    constexpr std::size_t kTile = std::size_t(kLoadsInFlight) * BLOCK;
    std::size_t i = blockIdx.x * kTile + threadIdx.x;
    for (; i + (kLoadsInFlight - 1) * BLOCK < vectors; i += gridDim.x * kTile) {
        uint4 loaded[kLoadsInFlight];
#pragma unroll
        for (int k = 0; k < kLoadsInFlight; ++k) loaded[k] = body[i + k * BLOCK];
#pragma unroll
        for (int k = 0; k < kLoadsInFlight; ++k) acc = fold_vector<Op, VEC>(acc, loaded[k], head + (i + k * BLOCK) * VEC);
    }
    if (i < vectors) {  // only a block whose last tile is partial: the others skip its tests
#pragma unroll
        for (int k = 0; k < kLoadsInFlight; ++k) {  // the last tile, when the input ends inside it
            if (i + k * BLOCK < vectors) acc = fold_vector<Op, VEC>(acc, body[i + k * BLOCK], head + (i + k * BLOCK) * VEC);
        }
    }
    if (kTailLast && tail + thread < n) acc = Op::combine(acc, Op::transform(in[tail + thread], tail + thread));

    acc = BlockReduce::template reduce<BLOCK, Op>(acc);

    // The finish: reduce7's last block for one group, kept in step with it. One block: its result is the answer. Otherwise every
    // block writes its partial and counts itself done (release); the block that counts last
    // (acquire: it sees every partial) combines them in block order, the same every run.
    // The counter is reset by that block, so a workspace serves one reduction at a time.
    if (gridDim.x == 1) {
        if (threadIdx.x == 0) *out = acc;
        return;
    }
    if (threadIdx.x == 0) partials[blockIdx.x] = acc;
    __shared__ bool is_last;
    if (threadIdx.x == 0) {
        cuda::atomic_ref<unsigned, cuda::thread_scope_device> count(*blocks_done);
        is_last = count.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
    }
    __syncthreads();  // also orders thread 0's acquire before the other threads' reads
    if (!is_last) return;
    acc = Op::identity();
    for (unsigned b = threadIdx.x; b < gridDim.x; b += BLOCK) acc = Op::combine(acc, load_partial(partials + b));
    acc = BlockReduce::template reduce<BLOCK, Op>(acc);
    if (threadIdx.x == 0) {
        *out = acc;
        *blocks_done = 0;  // ready for the next launch
    }
}

// ---------------------------------------------------------------- launcher
constexpr std::size_t kCounterBytes = 256;  // blocks_done, then the partials, aligned

// Workspace for n elements: the counter, then at most one partial per whole tile.
template <typename Op>
std::size_t reduce_op_workspace_bytes(std::size_t n, int block) {
    constexpr std::size_t VEC = 16 / sizeof(typename Op::In);
    return kCounterBytes + ceil_div(n, VEC * kLoadsInFlight * static_cast<std::size_t>(block)) * sizeof(typename Op::Acc);
}

// Reduces the n elements at `in` to one Acc at `out`: one kernel launch on `stream`. The
// workspace (reduce_op_workspace_bytes) must be zeroed once before the first call; each
// call leaves it zeroed again. No elements: one block writes Op::identity() (the sum of
// nothing is 0, the max of nothing -infinity, the argmax of nothing kNoIndex).
// Block sizes: the powers of two from MIN_BLOCK to 1024.
template <typename Op, typename BlockReduce = ShuffleBlockReduce, unsigned MIN_BLOCK = 128>
void reduce_op(const typename Op::In* in, std::size_t n, typename Op::Acc* out, void* workspace, int block,
               cudaStream_t stream) {
    static_assert(matches_op_types<Op>(), "operators.cuh and accumulator_of() in op_types.h disagree");
    using Acc = typename Op::Acc;
    auto* blocks_done = static_cast<unsigned*>(workspace);
    Acc* partials = reinterpret_cast<Acc*>(static_cast<char*>(workspace) + kCounterBytes);
    dispatch_block_size<MIN_BLOCK, 1024>(static_cast<unsigned>(block), [&](auto block_size) {
        constexpr unsigned BLOCK = decltype(block_size)::value;
        constexpr std::size_t VEC = 16 / sizeof(typename Op::In);
        const auto kernel = reduce_single_pass<Op, BlockReduce, BLOCK>;
        // A fixed grid, as in reduce7: what fits on the GPU at once, but no more blocks
        // than whole tiles of work, and at least one.
        const std::size_t tiles = ceil_div(n, VEC * kLoadsInFlight * BLOCK);
        const auto blocks = static_cast<unsigned>(
            std::max<std::size_t>(1, std::min<std::size_t>(tiles, resident_blocks(kernel, BLOCK, 0))));
        kernel<<<blocks, BLOCK, 0, stream>>>(in, n, partials, out, blocks_done);
        CUDA_CHECK_LAUNCH();
    });
}

}  // namespace ops
