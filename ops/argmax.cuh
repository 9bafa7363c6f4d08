// argmax: the index of the first largest value, as NumPy's argmax, for reduce7's kernel
// (reduce_op.cuh). Its partial result is a pair, (value, index), which moves between lanes
// and out of the workspace field by field; its warp step may use redux.sync (sm_80 on).
// The operator contract is at the top of operators.cuh.
#pragma once

#include <cuda/std/cmath>
#include <cuda/std/limits>

#include <cstddef>
#include <type_traits>

#include "operators.cuh"

namespace ops {

// argmax's partial result: a value and where it was.
template <typename V>
struct ValueIndex {
    V value;
    unsigned long long index;
};

// The identity's index, and the answer for no elements at all: larger than any real index,
// so it loses every tie, like std::string::npos.
constexpr unsigned long long kNoIndex = ~0ull;

// The index of the first largest value, as NumPy's argmax: a NaN counts as larger than
// everything, so a NaN anywhere gives the index of the first NaN; equal values give the
// smallest index. "First" is where the tree needs care. `b.value > a.value ? b : a` keeps a
// on a tie, the first argument, and a loop's first argument is always the earlier element;
// the tree's is not (a warp shuffle pairs lane 3 with lane 19, then lane 3 with lane 11).
// So the indices are compared, and then combine does not care which argument came first.
template <typename InT>
struct ArgMax {
    using In = InT;
    using V = widened_t<In>;
    using Acc = ValueIndex<V>;
    static constexpr OpKind kind = OpKind::ArgMax;
    static constexpr bool kFoldNeedsIndexOrder = true;  // see fold_lanes
    __host__ __device__ static Acc identity() { return {lowest_value<V>(), kNoIndex}; }
    __host__ __device__ static Acc transform(In x, std::size_t i) { return {widen(x), i}; }
    __host__ __device__ static Acc combine(Acc a, Acc b) {
        const bool a_nan = is_nan(a.value), b_nan = is_nan(b.value);
        const bool b_above = !a_nan & (b_nan | above(b.value, a.value));
        const bool tie = (a_nan & b_nan) | same(a.value, b.value);
        return b_above | (tie & (b.index < a.index)) ? b : a;
    }
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    // A warp's 32 partial results into one, for the block's reduction (reduce_op.cuh's
    // warp_reduce calls this instead of its shuffle tree, on GPUs that have redux.sync).
    // The tree moves three 32-bit words per step (four for double and int64) and runs the
    // whole combine, five steps in a row: at 2^22 floats, where a thread loads only 16
    // elements, replacing it removed 29.5% of the kernel's instructions (chapter 10,
    // scripts/argmax_warp_reduce.sh).
    // redux.sync (sm_80 and later) finds the largest or smallest 32-bit integer across the
    // warp in one instruction, so argmax is asked as three questions:
    //   1. the largest order_key (64-bit keys: the high halves, then the low halves);
    //   2. the smallest index among the lanes that hold it (high halves, then low halves);
    //   3. the value in that lane, bit for bit (a NaN keeps its payload): one shuffle.
    // The answer is the tree's, for every input in which no two lanes hold the same index
    // (as the kernel's lanes never do, but for the identity's kNoIndex); every lane gets it.
    static constexpr unsigned kWarp = 0xffffffffu;  // every lane takes part
    __device__ static Acc warp_reduce(Acc acc) {
        const auto key = order_key(acc.value);
        const bool holds = key == warp_max(key);
        const auto index_high = static_cast<unsigned>(acc.index >> 32);
        const unsigned high = __reduce_min_sync(kWarp, holds ? index_high : ~0u);
        const unsigned low =
            __reduce_min_sync(kWarp, holds & (index_high == high) ? static_cast<unsigned>(acc.index) : ~0u);
        const unsigned long long index = (static_cast<unsigned long long>(high) << 32) | low;
        const int lane = __ffs(__ballot_sync(kWarp, holds & (acc.index == index))) - 1;
        return {__shfl_sync(kWarp, acc.value, lane), index};
    }
    template <typename Key>
    __device__ static Key warp_max(Key key) {
        static_assert(std::is_signed_v<Key>, "order keys are signed: the high half's sign orders them");
        if constexpr (sizeof(Key) == 4) {
            return __reduce_max_sync(kWarp, key);
        } else {
            const auto high = static_cast<int>(key >> 32);  // signed: the key's sign is here
            const int top_high = __reduce_max_sync(kWarp, high);
            const unsigned top_low = __reduce_max_sync(kWarp, high == top_high ? static_cast<unsigned>(key) : 0u);
            return static_cast<Key>((static_cast<unsigned long long>(static_cast<unsigned>(top_high)) << 32) | top_low);
        }
    }
#endif

    // A whole vector load at once; the kernel calls this when an operator has it, and for
    // argmax it promises one thing: each thread meets its elements in index order, so `acc`
    // holds only elements before `first`. The first largest so far is then replaced only by a
    // value that ranks strictly above it, and most vectors need no lane-by-lane work at all:
    //  1. top, the vector's largest value, by max instructions alone: for half and bfloat16
    //     three two-lane maxima (HMNMX2) and one more for 8 elements;
    //  2. top does not rank above the best so far: nothing in the vector does; acc stays;
    //  3. it does: the first lane equal to top is the vector's first largest (for half and
    //     bfloat16, one two-lane comparison per pair of lanes).
    // A NaN is equal to nothing, and -0 equals +0 but ranks below it, so for those the value
    // does not find its lane: a vector whose top is NaN or zero takes fold_every_lane, the
    // rule applied lane by lane (as reduce_ops' "every lane" row does for every vector).
    template <int VEC>
    __host__ __device__ static Acc fold_lanes(Acc acc, const In* lanes, std::size_t first) {
        const In top = vector_top<VEC>(lanes);
        const V top_value = widen(top);
        if constexpr (std::is_floating_point_v<V>) {
            if (is_nan(top_value) | (top_value == V(0))) return fold_every_lane<VEC>(acc, lanes, first);
        }
        // Ranks above: false when acc holds a NaN (the first NaN stays). Or acc is still the
        // identity, which a vector of the lowest values (all -inf, all INT_MIN) does not
        // rank above but must replace: its index is kNoIndex, no element's.
        const bool take = (top_value > acc.value) | (acc.index == kNoIndex);
        const unsigned lane = first_lane_of<VEC>(lanes, top);
        return take ? Acc{top_value, first + lane} : acc;
    }

    // Every lane compared with the best so far, in order, then one full combine: exact for
    // every input, whatever acc holds, at a dozen instructions per element.
    template <int VEC>
    __host__ __device__ static Acc fold_every_lane(Acc acc, const In* lanes, std::size_t first) {
        V best = widen(lanes[0]);
        int best_lane = 0;
        for (int k = 1; k < VEC; ++k) {
            const V v = widen(lanes[k]);
            const bool take = !is_nan(best) & (is_nan(v) | above(v, best));
            best = take ? v : best;
            best_lane = take ? k : best_lane;
        }
        return combine(acc, {best, first + best_lane});
    }

    // The largest of the VEC lanes, NaN if any lane is NaN; the sign of a zero is not kept.
    template <int VEC>
    __host__ __device__ static In vector_top(const In* lanes) {
        if constexpr (kPairs<VEC>) {
            return extreme_of_pairs<Extreme::Max, VEC>(lanes);
        } else {
            V top = widen(lanes[0]);
            bool nan = is_nan(top);
            for (int k = 1; k < VEC; ++k) {
                const V v = widen(lanes[k]);
                nan = nan | is_nan(v);
                if constexpr (std::is_floating_point_v<V>) top = cuda::std::fmax(top, v);  // one FMNMX; skips NaN
                else top = v > top ? v : top;
            }
            if (nan) top = cuda::std::numeric_limits<V>::quiet_NaN();
            return static_cast<In>(top);
        }
    }

    // The first lane equal to top, a value of one of the lanes (not NaN, and not zero for
    // floating point).
    template <int VEC>
    __host__ __device__ static unsigned first_lane_of(const In* lanes, In top) {
        if constexpr (kPairs<VEC>) {
            const auto* pairs = reinterpret_cast<const pair_of<In>*>(lanes);
            const pair_of<In> both{top, top};
            unsigned equal[VEC / 2];  // 0xFFFF in each half that equals top
            for (int k = 0; k < VEC / 2; ++k) equal[k] = __heq2_mask(pairs[k], both);
#ifdef __CUDA_ARCH__
            if constexpr (VEC == 8) {
                // One byte per lane, lane j in byte j of 64 bits: the lowest set bit is in
                // the first equal lane.
                const unsigned low = __byte_perm(equal[0], equal[1], 0x7531);
                const unsigned high = __byte_perm(equal[2], equal[3], 0x7531);
                return (__ffsll(static_cast<long long>((static_cast<unsigned long long>(high) << 32) | low)) - 1) / 8;
            }
#endif
            unsigned lane = VEC - 1;
            for (int k = VEC / 2 - 1; k >= 0; --k) {
                lane = (equal[k] & 0xFFFF0000u) ? 2 * k + 1 : lane;
                lane = (equal[k] & 0x0000FFFFu) ? 2 * k : lane;
            }
            return lane;
        } else {
            unsigned lane = VEC - 1;
            for (int k = VEC - 2; k >= 0; --k) lane = widen(lanes[k]) == widen(top) ? k : lane;
            return lane;
        }
    }

  private:
    template <int VEC>
    static constexpr bool kPairs = is_two_byte_float<In> && VEC % 2 == 0;
};

// argmax with the fold this kernel first ran: fold_every_lane on every vector (the rest,
// warp_reduce included, is ArgMax's). reduce_ops times it beside ArgMax (the rows
// "every_lane"), so that what comparing the vector's top first saves is measured, not assumed.
template <typename InT>
struct ArgMaxEveryLane : ArgMax<InT> {
    using Acc = typename ArgMax<InT>::Acc;
    template <int VEC>
    __host__ __device__ static Acc fold_lanes(Acc acc, const InT* lanes, std::size_t first) {
        return ArgMax<InT>::template fold_every_lane<VEC>(acc, lanes, first);
    }
};

// Moving a pair: one shuffle, or one L2 load, per field (operators.cuh says why).
template <typename V>
__device__ inline ValueIndex<V> shuffle_down(const ValueIndex<V>& v, unsigned offset) {
    return {shuffle_down(v.value, offset), shuffle_down(v.index, offset)};
}
template <typename V>
__device__ inline ValueIndex<V> load_partial(const ValueIndex<V>* p) {
    return {__ldcg(&p->value), __ldcg(&p->index)};
}

template <typename V> struct Scalar<ValueIndex<V>> { using type = V; };

}  // namespace ops
