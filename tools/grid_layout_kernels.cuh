// grid_layout_probe's input and kernels (tools/grid_layout_probe.cu: what each layout is,
// how they are timed and checked): reduce7's loop body, with only the hand-out of tiles
// to blocks changed between layouts.
#pragma once

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace grid_probe {

// ---------------------------------------------------------------- the input
// The value of element i: a hash of i and the seed, the same on host and device, so the
// GPU fills 4 GiB without a copy and the host sums the same values.
__host__ __device__ inline std::uint32_t mix(std::uint64_t i, std::uint32_t seed) {
    std::uint64_t x = i * 0x9E3779B97F4A7C15ull + seed;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return static_cast<std::uint32_t>(x >> 32);
}
__host__ __device__ inline int int_value(std::uint64_t i, std::uint32_t seed) { return 1 + int(mix(i, seed) % 15u); }
__host__ __device__ inline float float_value(std::uint64_t i, std::uint32_t seed) { return float(1 + (mix(i, seed) & 1u)); }
template <typename T> __host__ __device__ T value_at(std::uint64_t i, std::uint32_t seed);
template <> __host__ __device__ int value_at<int>(std::uint64_t i, std::uint32_t seed) { return int_value(i, seed); }
template <> __host__ __device__ float value_at<float>(std::uint64_t i, std::uint32_t seed) { return float_value(i, seed); }

template <typename T>
__global__ void fill(T* data, std::size_t n, std::uint32_t seed) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
        data[i] = value_at<T>(i, seed);
    }
}

// The exact sum as a 64-bit integer (every value is a small whole number).
template <typename T>
std::uint64_t host_sum(std::size_t n, std::uint32_t seed) {
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < n; ++i) sum += static_cast<std::uint64_t>(value_at<T>(i, seed));
    return sum;
}

// ---------------------------------------------------------------- sums in registers
template <typename T> struct Vector;
template <> struct Vector<int> { using type = int4; };
template <> struct Vector<float> { using type = float4; };
constexpr int kVec = 4;  // elements per 16-byte load

template <typename T>
__device__ __forceinline__ T add_lanes(T sum, const typename Vector<T>::type& v) {
    return sum + v.x + v.y + v.z + v.w;
}

template <typename T>
__device__ __forceinline__ T warp_sum(T value) {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
    return value;
}

// Thread 0 gets the block's sum (the warps' sums meet in shared memory, as in reduce7).
template <unsigned BLOCK, typename T>
__device__ __forceinline__ T block_sum(T value) {
    __shared__ T warp_sums[BLOCK / 32];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    value = warp_sum(value);
    if (lane == 0) warp_sums[warp] = value;
    __syncthreads();
    value = T(0);
    if (warp == 0) value = warp_sum(lane < BLOCK / 32 ? warp_sums[lane] : T(0));
    return value;
}

// ---------------------------------------------------------------- what every kernel shares
// Atomic: one atomicAdd per block into the result, which must be zeroed before the launch.
// Counted: the same adds go into a total in the workspace, then each block counts itself
// done; the block that counts last copies the total to the result and zeroes the total
// and the count for the next launch, so nothing needs zeroing between launches (no memset
// node). Partials: each block writes its sum, a second launch adds them in order.
// Packed (int): reduce7's --finish packed, the sum and a count in one 64-bit word (one atomic
// a block, no fence, no memset). Fenced: Atomic after a __threadfence() (what a fence at the
// block's end costs or buys, alone). Grouped: deterministic like Partials, in one launch: every
// block writes its partial and counts itself done in its group of BLOCK blocks; the last of a
// group adds the group's partials (one a thread) and counts the group done; the last group's
// finisher adds the groups' sums, in order. A fence and a counter atomic a block, as reduce7's
// last-block, but no block ever reads more than BLOCK partials at once.
// PackedRelease, PackedAcquire, PackedAcqRel: Packed with the word's add ordered as named (a release
// compiles to MEMBAR.ALL.GPU before the add, an acquire to CCTL.IVALL, the L1's invalidation,
// after it; Fenced's __threadfence() to MEMBAR.SC.GPU and CCTL.IVALL), so that which half of a
// fence costs what is measured apart. GroupedRelease: Grouped with each block's count added with
// release only, and the acquire (a fence) in the last block of a group or of the groups alone.
// GroupedFlagged: Grouped with no fence at all (flagged_finish below).
enum class Finish { Atomic, Counted, Partials, PartialsAndAtomic, Packed, Fenced, Grouped,
                    PackedRelease, PackedAcquire, PackedAcqRel, GroupedRelease, GroupedFlagged };

// One block's record for --trace-blocks: on which SM it ran and when (the GPU's
// nanosecond clock, the same on every SM; clock64() would count one SM's cycles).
struct BlockTrace {
    unsigned long long start_ns, end_ns;
    unsigned sm;
};
__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long ns;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
    return ns;
}
__device__ __forceinline__ unsigned sm_id() {
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return id;
}

struct Args {
    const void* in;       // n elements, 16-byte aligned (cudaMalloc)
    std::size_t n;
    std::size_t vectors;  // whole 16-byte vectors: n / 4
    void* out;            // the result (atomic finishes)
    void* partials;       // one per block (partials finishes)
    BlockTrace* trace;    // null unless --trace-blocks
    unsigned long long* next_tile;  // resident-dynamic's counter (zeroed before each launch), else null
    void* total;            // Counted: the running total (zero between launches)
    unsigned* blocks_done;  // Counted: blocks finished so far; Grouped: [0] groups done, [1 + g] group g's blocks (zero between launches)
    unsigned long long* packed_word;  // Packed: (sum << 32) + count (zero between launches)
    void* group_sums;       // Grouped: one per group of BLOCK blocks
    unsigned long long* flagged;  // GroupedFlagged: a word per block, then one per group (zeroed once)
    unsigned launch_number;       // GroupedFlagged: this launch's, never 0 (the host counts launches)
};

// The elements after the last whole vector (fewer than 4): block 0's first threads.
template <typename T>
__device__ __forceinline__ T leftover(const Args& a) {
    const std::size_t at = a.vectors * kVec + threadIdx.x;
    return (blockIdx.x == 0 && at < a.n) ? static_cast<const T*>(a.in)[at] : T(0);
}

// Finish::Grouped, called by every thread of the block; thread 0 holds the block's sum.
template <unsigned BLOCK, typename T>
__device__ void grouped_finish(T sum, const Args& a, Finish finish) {
    __shared__ bool last;
    T* partials = static_cast<T*>(a.partials);
    T* group_sums = static_cast<T*>(a.group_sums);
    const unsigned group = blockIdx.x / BLOCK, first = group * BLOCK;
    const unsigned in_group = gridDim.x - first < BLOCK ? gridDim.x - first : BLOCK;
    const unsigned groups = (gridDim.x + BLOCK - 1) / BLOCK;
    if (threadIdx.x == 0) {  // the release of the count covers the partial (as reduce7's last-block)
        partials[blockIdx.x] = sum;
        cuda::atomic_ref<unsigned, cuda::thread_scope_device> done(a.blocks_done[1 + group]);
        if (finish == Finish::GroupedRelease) {
            last = done.fetch_add(1u, cuda::memory_order_release) == in_group - 1;
            if (last) cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
        } else {
            last = done.fetch_add(1u, cuda::memory_order_acq_rel) == in_group - 1;
        }
    }
    __syncthreads();
    if (!last) return;
    T group_sum = threadIdx.x < in_group ? __ldcg(partials + first + threadIdx.x) : T(0);
    group_sum = block_sum<BLOCK>(group_sum);
    if (threadIdx.x == 0) {
        a.blocks_done[1 + group] = 0;  // ready for the next launch
        group_sums[group] = group_sum;
        cuda::atomic_ref<unsigned, cuda::thread_scope_device> done(a.blocks_done[0]);
        if (finish == Finish::GroupedRelease) {
            last = done.fetch_add(1u, cuda::memory_order_release) == groups - 1;
            if (last) cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
        } else {
            last = done.fetch_add(1u, cuda::memory_order_acq_rel) == groups - 1;
        }
    }
    __syncthreads();
    if (!last) return;
    T total = T(0);
    for (unsigned g = threadIdx.x; g < groups; g += BLOCK) total += __ldcg(group_sums + g);
    total = block_sum<BLOCK>(total);
    if (threadIdx.x == 0) {
        *static_cast<T*>(a.out) = total;
        a.blocks_done[0] = 0;
    }
}

// Finish::GroupedFlagged, called by every thread of the block; thread 0 holds the block's sum.
// Grouped's order and levels with no fence: each block stores its partial and the launch's
// number in one aligned 8-byte word (seen whole or not at all), then counts itself done with a
// relaxed add. The last to count may see the count before another block's word, so it reads
// each word until the word shows this launch's number: the word carries its own "ready", and
// nothing has to order the partial before the count (CUB's single-pass scan packs a tile's
// status with its value for the same reason). 4-byte T only.
template <typename T>
__device__ __forceinline__ unsigned long long flagged_word(T value, unsigned launch_number) {
    static_assert(sizeof(T) == 4, "a 4-byte value and the launch's number share one word");
    unsigned bits;
    memcpy(&bits, &value, sizeof bits);
    return (static_cast<unsigned long long>(launch_number) << 32) | bits;
}
template <typename T>
__device__ __forceinline__ T wait_for_word(const unsigned long long* word, unsigned launch_number) {
    // A relaxed atomic load: an ordinary (or __ldcv) load in a loop with no other side effect
    // lets the compiler assume the loop ends and drop it (C++'s forward-progress rule).
    cuda::atomic_ref<const unsigned long long, cuda::thread_scope_device> shared_word(*word);
    unsigned long long w;
    do {
        w = shared_word.load(cuda::memory_order_relaxed);
    } while (static_cast<unsigned>(w >> 32) != launch_number);
    const unsigned bits = static_cast<unsigned>(w);
    T value;
    memcpy(&value, &bits, sizeof value);
    return value;
}
template <unsigned BLOCK, typename T>
__device__ void flagged_finish(T sum, const Args& a) {
    __shared__ bool last;
    const unsigned group = blockIdx.x / BLOCK, first = group * BLOCK;
    const unsigned in_group = gridDim.x - first < BLOCK ? gridDim.x - first : BLOCK;
    const unsigned groups = (gridDim.x + BLOCK - 1) / BLOCK;
    unsigned long long* block_words = a.flagged;
    unsigned long long* group_words = a.flagged + gridDim.x;
    if (threadIdx.x == 0) {
        cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(block_words[blockIdx.x])
            .store(flagged_word(sum, a.launch_number), cuda::memory_order_relaxed);
        last = atomicAdd(a.blocks_done + 1 + group, 1u) == in_group - 1;
    }
    __syncthreads();
    if (!last) return;
    T group_sum = threadIdx.x < in_group ? wait_for_word<T>(block_words + first + threadIdx.x, a.launch_number) : T(0);
    group_sum = block_sum<BLOCK>(group_sum);
    if (threadIdx.x == 0) {
        a.blocks_done[1 + group] = 0;  // ready for the next launch
        cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(group_words[group])
            .store(flagged_word(group_sum, a.launch_number), cuda::memory_order_relaxed);
        last = atomicAdd(a.blocks_done, 1u) == groups - 1;
    }
    __syncthreads();
    if (!last) return;
    T total = T(0);
    for (unsigned g = threadIdx.x; g < groups; g += BLOCK) total += wait_for_word<T>(group_words + g, a.launch_number);
    total = block_sum<BLOCK>(total);
    if (threadIdx.x == 0) {
        *static_cast<T*>(a.out) = total;
        a.blocks_done[0] = 0;
    }
}

template <unsigned BLOCK, typename T>
__device__ __forceinline__ void finish_block(T sum, const Args& a, Finish finish, unsigned long long start_ns) {
    sum = block_sum<BLOCK>(sum);
    if (finish == Finish::GroupedFlagged) {
        flagged_finish<BLOCK>(sum, a);
        if (a.trace && threadIdx.x == 0) a.trace[blockIdx.x] = BlockTrace{start_ns, global_ns(), sm_id()};
        return;
    }
    if (finish == Finish::Grouped || finish == Finish::GroupedRelease) {
        grouped_finish<BLOCK>(sum, a, finish);
        if (a.trace && threadIdx.x == 0) a.trace[blockIdx.x] = BlockTrace{start_ns, global_ns(), sm_id()};
        return;
    }
    if (threadIdx.x != 0) return;
    if (finish == Finish::Packed || finish == Finish::PackedRelease || finish == Finish::PackedAcquire ||
        finish == Finish::PackedAcqRel) {
        if constexpr (sizeof(T) == 4 && std::is_integral_v<T>) {
            const unsigned long long mine = (static_cast<unsigned long long>(static_cast<unsigned>(sum)) << 32) + 1ull;
            cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> word(*a.packed_word);
            const unsigned long long before =
                finish == Finish::PackedRelease   ? word.fetch_add(mine, cuda::memory_order_release)
                : finish == Finish::PackedAcquire ? word.fetch_add(mine, cuda::memory_order_acquire)
                : finish == Finish::PackedAcqRel  ? word.fetch_add(mine, cuda::memory_order_acq_rel)
                                                  : atomicAdd(a.packed_word, mine);
            if (static_cast<unsigned>(before) == gridDim.x - 1) {
                *static_cast<T*>(a.out) = static_cast<T>(static_cast<unsigned>(before >> 32) + static_cast<unsigned>(sum));
                *a.packed_word = 0;
            }
        }
    } else if (finish == Finish::Fenced) {
        __threadfence();
        atomicAdd(static_cast<T*>(a.out), sum);
    } else if (finish == Finish::Counted) {
        // The add happens before this block's release of the count; the last block's acquire
        // sees every block's count, so every add (one release sequence on the count).
        T* total = static_cast<T*>(a.total);
        atomicAdd(total, sum);
        cuda::atomic_ref<unsigned, cuda::thread_scope_device> done(*a.blocks_done);
        if (done.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1) {
            *static_cast<T*>(a.out) = __ldcg(total);
            *total = T(0);
            done.store(0u, cuda::memory_order_relaxed);  // the launch's end orders both before the next launch
        }
    } else {
        if (finish != Finish::Atomic) static_cast<T*>(a.partials)[blockIdx.x] = sum;
        if (finish != Finish::Partials) atomicAdd(static_cast<T*>(a.out), sum);
    }
    if (a.trace) a.trace[blockIdx.x] = BlockTrace{start_ns, global_ns(), sm_id()};
}

// One tile: LOADS x BLOCK vectors from `first`, each thread LOADS loads BLOCK apart, all
// issued before any add (in the source: what the machine code does is ptxas's choice,
// scripts/count_loads_before_use.sh reads it). A partial tile checks every load.
template <unsigned BLOCK, int LOADS, typename T>
__device__ __forceinline__ T tile(const typename Vector<T>::type* body, std::size_t first, std::size_t vectors, T sum) {
    using V = typename Vector<T>::type;
    const std::size_t i = first + threadIdx.x;
    if (first + std::size_t(LOADS) * BLOCK <= vectors) {
        V loaded[LOADS];
#pragma unroll
        for (int k = 0; k < LOADS; ++k) loaded[k] = body[i + k * BLOCK];
#pragma unroll
        for (int k = 0; k < LOADS; ++k) sum = add_lanes<T>(sum, loaded[k]);
    } else {
#pragma unroll
        for (int k = 0; k < LOADS; ++k) {
            if (i + k * BLOCK < vectors) sum = add_lanes<T>(sum, body[i + k * BLOCK]);
        }
    }
    return sum;
}

// ---------------------------------------------------------------- the kernels
// Tiles b, b + grid, b + 2 grid, ...: reduce7's grid stride (resident-stride), and with a
// grid of one block per tile the loop runs once (one-shot; one-shot-waves between).
template <unsigned BLOCK, int LOADS, typename T>
__device__ __forceinline__ void strided_body(const Args& a, Finish finish) {
    const unsigned long long start = a.trace ? global_ns() : 0;
    const auto* body = static_cast<const typename Vector<T>::type*>(a.in);
    constexpr std::size_t kTile = std::size_t(LOADS) * BLOCK;
    T sum = leftover<T>(a);
    for (std::size_t first = blockIdx.x * kTile; first < a.vectors; first += gridDim.x * kTile) {
        sum = tile<BLOCK, LOADS, T>(body, first, a.vectors, sum);
    }
    finish_block<BLOCK>(sum, a, finish, start);
}

template <unsigned BLOCK, int LOADS, typename T>
__global__ void strided_tiles(Args a, Finish finish) {
    strided_body<BLOCK, LOADS, T>(a, finish);
}

// The same code, but __launch_bounds__(BLOCK, 1) tells ptxas that one block per SM is
// enough: it may then spend registers to keep every load's destination alive, and issues
// all LOADS loads before the first add. Without it ptxas keeps the register count low
// (for occupancy) by moving adds up between the loads: reduce7's --loads 8 and 16 issue
// only 4 before the first add. The price is registers, so fewer resident blocks: the
// probe prints both.
template <unsigned BLOCK, int LOADS, typename T>
__global__ void __launch_bounds__(BLOCK, 1) strided_tiles_all_loads_first(Args a, Finish finish) {
    strided_body<BLOCK, LOADS, T>(a, finish);
}

// The same grid as resident-stride, but block b reads a contiguous run of tiles: the
// tiles are split into gridDim.x runs whose lengths differ by at most one.
template <unsigned BLOCK, int LOADS, typename T>
__global__ void contiguous_tiles(Args a, Finish finish) {
    const unsigned long long start = a.trace ? global_ns() : 0;
    const auto* body = static_cast<const typename Vector<T>::type*>(a.in);
    constexpr std::size_t kTile = std::size_t(LOADS) * BLOCK;
    const std::size_t tiles = (a.vectors + kTile - 1) / kTile;
    const std::size_t per = tiles / gridDim.x, extra = tiles % gridDim.x;
    const std::size_t from = blockIdx.x * per + (blockIdx.x < extra ? blockIdx.x : extra);
    const std::size_t to = from + per + (blockIdx.x < extra ? 1 : 0);
    T sum = leftover<T>(a);
    for (std::size_t t = from; t < to; ++t) sum = tile<BLOCK, LOADS, T>(body, t * kTile, a.vectors, sum);
    finish_block<BLOCK>(sum, a, finish, start);
}

// The same grid as resident-stride, but the tiles are handed out as the blocks ask: thread 0
// takes the next tile's number from a counter in global memory (one atomic per tile), so a
// block on an SM that reads faster takes more tiles. With resident-stride's static share,
// every block reads the same number of tiles, and the blocks of faster SMs finish early and
// leave their SMs idle (--trace-blocks shows it); this layout keeps the grid and changes
// only that, to test whether the share is what one-shot's gain comes from.
template <unsigned BLOCK, int LOADS, typename T>
__global__ void dynamic_tiles(Args a, Finish finish) {
    const unsigned long long start = a.trace ? global_ns() : 0;
    const auto* body = static_cast<const typename Vector<T>::type*>(a.in);
    constexpr std::size_t kTile = std::size_t(LOADS) * BLOCK;
    const std::size_t tiles = (a.vectors + kTile - 1) / kTile;
    __shared__ unsigned long long taken;
    T sum = leftover<T>(a);
    for (;;) {
        if (threadIdx.x == 0) taken = atomicAdd(a.next_tile, 1ull);
        __syncthreads();
        const unsigned long long t = taken;
        __syncthreads();  // every thread has read it before thread 0 takes the next
        if (t >= tiles) break;
        sum = tile<BLOCK, LOADS, T>(body, std::size_t(t) * kTile, a.vectors, sum);
    }
    finish_block<BLOCK>(sum, a, finish, start);
}

// Each thread CONSECUTIVE vectors in a row (thread t: vectors CONSECUTIVE t ...), a chunk
// of CONSECUTIVE x BLOCK vectors per block, chunks grid-strided: one-shot-512x3.
template <unsigned BLOCK, int CONSECUTIVE, typename T>
__global__ void consecutive_vectors(Args a, Finish finish) {
    using V = typename Vector<T>::type;
    const unsigned long long start = a.trace ? global_ns() : 0;
    const auto* body = static_cast<const V*>(a.in);
    constexpr std::size_t kChunk = std::size_t(CONSECUTIVE) * BLOCK;
    T sum = leftover<T>(a);
    for (std::size_t first = blockIdx.x * kChunk; first < a.vectors; first += gridDim.x * kChunk) {
        const std::size_t i = first + std::size_t(CONSECUTIVE) * threadIdx.x;
        if (first + kChunk <= a.vectors) {
            V loaded[CONSECUTIVE];
#pragma unroll
            for (int k = 0; k < CONSECUTIVE; ++k) loaded[k] = body[i + k];
#pragma unroll
            for (int k = 0; k < CONSECUTIVE; ++k) sum = add_lanes<T>(sum, loaded[k]);
        } else {
#pragma unroll
            for (int k = 0; k < CONSECUTIVE; ++k) {
                if (i + k < a.vectors) sum = add_lanes<T>(sum, body[i + k]);
            }
        }
    }
    finish_block<BLOCK>(sum, a, finish, start);
}

// Hopper's bulk copy (the Tensor Memory Accelerator's 1-D form, cp.async.bulk): instead of
// 256 threads each asking for 16 bytes four times, thread 0 asks the copy engine for the
// block's whole tile (16 KiB) into shared memory, and an mbarrier counts the bytes as they
// land; then every thread adds its four vectors from shared memory. STAGES tiles are in
// flight per block: while the block adds tile k, the engine fills tiles k+1 .. k+STAGES-1.
// The grid is one of the layouts above (bulk-resident: grid-stride over tiles, 2 stages,
// as many blocks as its shared memory lets fit; bulk-one-shot: one tile per block, 1
// stage), so each block asks for the tiles of resident-stride or one-shot. sm_90 and later
// only (the layouts are skipped on older GPUs).
__device__ __forceinline__ unsigned shared_address(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

template <unsigned BLOCK, int STAGES, typename T>
__global__ void bulk_copied_tiles(Args a, Finish finish) {
    using V = typename Vector<T>::type;
    constexpr std::size_t kTile = 4 * std::size_t(BLOCK);  // vectors: the same tiles as strided_tiles<BLOCK, 4>
    __shared__ alignas(128) V staged[STAGES][kTile];
    __shared__ alignas(8) unsigned long long landed[STAGES];  // one mbarrier per stage
    const unsigned long long start = a.trace ? global_ns() : 0;
    const auto* body = static_cast<const V*>(a.in);
    T sum = leftover<T>(a);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    auto first_of = [&](std::size_t k) { return (blockIdx.x + k * std::size_t(gridDim.x)) * kTile; };  // this block's k-th tile
    auto vectors_in = [&](std::size_t first) {  // a whole tile, or the input's last, partial one
        return a.vectors - first < kTile ? a.vectors - first : kTile;
    };
    auto request = [&](std::size_t k) {  // thread 0: the engine copies tile k into stage k % STAGES
        const std::size_t first = first_of(k);
        if (first >= a.vectors) return;
        const unsigned bytes = unsigned(vectors_in(first) * sizeof(V));
        const unsigned barrier = shared_address(&landed[k % STAGES]);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(barrier), "r"(bytes) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                         shared_address(staged[k % STAGES])),
                     "l"(body + first), "r"(bytes), "r"(barrier)
                     : "memory");
    };
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(&landed[s])) : "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the engine sees the initialized barriers
        for (int s = 0; s < STAGES; ++s) request(s);
    }
    __syncthreads();
    for (std::size_t k = 0; first_of(k) < a.vectors; ++k) {
        const unsigned barrier = shared_address(&landed[k % STAGES]), parity = unsigned(k / STAGES) & 1u;
        for (unsigned done = 0; !done;) {
            asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n}"
                         : "=r"(done)
                         : "r"(barrier), "r"(parity)
                         : "memory");
        }
        const std::size_t count = vectors_in(first_of(k));
        const V* tile = staged[k % STAGES];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const std::size_t at = threadIdx.x + std::size_t(j) * BLOCK;
            if (at < count) sum = add_lanes<T>(sum, tile[at]);
        }
        __syncthreads();  // every thread has read this stage before the engine refills it
        if (threadIdx.x == 0) request(k + STAGES);
    }
#endif
    finish_block<BLOCK>(sum, a, finish, start);
}

// The deterministic finish's second launch: one block adds the partials in a fixed order.
template <typename T>
__global__ void sum_partials(const T* partials, unsigned count, T* out) {
    constexpr unsigned kBlock = 1024;
    T sum = T(0);
    for (unsigned b = threadIdx.x; b < count; b += kBlock) sum += partials[b];
    sum = block_sum<kBlock>(sum);
    if (threadIdx.x == 0) *out = sum;
}

}  // namespace grid_probe
