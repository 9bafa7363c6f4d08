// Beyond the sum: the operators. (reduce_op.cuh is the kernel that runs them.)
//
// reduce7's kernel never needs "+" as such. It needs a value to start from that changes
// nothing, for the threads that get no element and the lanes past the last warp, and a
// way to merge two partial results that may group the elements in any way, because the
// tree groups them differently from a loop. Any operator with those two things runs in
// the same kernel, and where its combine costs a few instructions per element, at the
// same memory speed. Here each is a small policy struct:
//
//   In               the element type in memory: int, long long, float, double, __half,
//                    __nv_bfloat16
//   Acc              what partial results are kept in: a wider type (half -> float), a
//                    pair (argmax: value and index) or a triple (meanvar: count, mean, M2)
//   identity()       the Acc that changes nothing: combine(identity(), x) == x for every x,
//                    infinities and NaN included (the host tests check each one)
//   transform(x, i)  element x at index i as an Acc, applied once per element on load:
//                    half -> float, x*x, |x|, (x, i)
//   combine(a, b)    two partial results into one. It must be associative and commutative
//                    for the tree to reach the loop's answer; for floating point that is a
//                    choice, made below for NaN and for +0 and -0.
//
// The kernel also moves an Acc between lanes (shuffle_down) and reads one back from the
// workspace (load_partial): a pair takes two shuffles, a triple three or four.
//
// Why half and bfloat16 widen to float: half has an 11-bit significand, so a half sum
// stops counting at 2048 (2048 + 1 rounds back to 2048), and bfloat16's 8 bits stop at
// 256. Converted on load, they are summed with float's 24 bits; the bytes read, the part
// that costs time, are still 2 per element.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cuda/std/bit>
#include <cuda/std/cmath>
#include <cuda/std/limits>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "op_types.h"

namespace ops {

// ---------------------------------------------------------------- element types
// The type arithmetic happens in: the element type itself, but float for half and bfloat16.
template <typename In> struct Widened { using type = In; };
template <> struct Widened<__half> { using type = float; };
template <> struct Widened<__nv_bfloat16> { using type = float; };
template <typename In> using widened_t = typename Widened<In>::type;

template <typename In>
__host__ __device__ inline widened_t<In> widen(In x) {
    if constexpr (std::is_same_v<In, __half>) return __half2float(x);  // exact: every half is a float
    else if constexpr (std::is_same_v<In, __nv_bfloat16>) return __bfloat162float(x);
    else return x;
}

// half and bfloat16 two at a time: a 16-byte load holds 4 pairs, and one instruction (HMNMX2
// for a maximum, HSET2 for a comparison) handles both lanes of a pair.
template <typename In>
constexpr bool is_two_byte_float = std::is_same_v<In, __half> || std::is_same_v<In, __nv_bfloat16>;
template <typename In>
using pair_of = std::conditional_t<std::is_same_v<In, __half>, __half2, __nv_bfloat162>;

// The largest (or smallest, or largest |x|) of VEC half or bfloat16 lanes, two lanes per
// instruction: VEC/2 - 1 pairwise steps, then one across the last pair. The _nan forms
// return NaN when either input is NaN, as Max and Min do; the sign of a zero result is
// not specified (an operator that ranks -0 below +0 must look at zeros lane by lane).
enum class Extreme { Max, Min, AbsMax };
template <Extreme E, int VEC, typename In>
__host__ __device__ inline In extreme_of_pairs(const In* lanes) {
    const auto* pairs = reinterpret_cast<const pair_of<In>*>(lanes);
    const auto load = [&](int k) {
        if constexpr (E == Extreme::AbsMax) return __habs2(pairs[k]);  // clears both sign bits
        else return pairs[k];
    };
    pair_of<In> top = load(0);
    for (int k = 1; k < VEC / 2; ++k) {
        if constexpr (E == Extreme::Min) top = __hmin2_nan(top, load(k));
        else top = __hmax2_nan(top, load(k));
    }
    if constexpr (E == Extreme::Min) return __hmin_nan(top.x, top.y);
    else return __hmax_nan(top.x, top.y);
}

// ---------------------------------------------------------------- NaN, zeros and order
// NaN is the one value not equal to itself. (The build has no fast-math flag, which would
// assume that NaN never occurs and delete this test.)
template <typename T>
__host__ __device__ inline bool is_nan(T x) {
    if constexpr (std::is_floating_point_v<T>) return x != x;
    else return false;
}

// a ranks above b: a > b, or a is +0 and b is -0. The comparison a > b calls the two zeros
// equal, and then `a > b ? a : b` returns whichever came second: max would give +0 or -0
// depending on the order in which the tree met them, and so would a sum of max results.
// False when either is NaN, as every comparison with NaN is.
//
// Here and in the combines below, | and & join the conditions, not || and &&: each side
// is a comparison or two, cheaper to evaluate than to branch around, and without the
// short-circuit the compiler emits a few predicated instructions and one select instead of
// a branch per condition, per element. With 8 halves per load that can decide the speed:
// during development on an H200, half max went from about 0.7x to 1.0x of CUB's when its
// combine lost its branches (a single measurement, not kept in docs/results; rewrite one
// combine with || and && and run reduce_ops --op max --type half to see it again).
template <typename T>
__host__ __device__ inline bool above(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
        return (a > b) | ((a == b) & cuda::std::signbit(b) & !cuda::std::signbit(a));
    } else {
        return a > b;
    }
}

// a and b are the same value: equal, zeros of one sign. False when either is NaN.
template <typename T>
__host__ __device__ inline bool same(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) return (a == b) & (cuda::std::signbit(a) == cuda::std::signbit(b));
    else return a == b;
}

// The same order as whole numbers: order_key(a) > order_key(b) exactly when a ranks above
// b, and the keys are equal exactly when the values are the same() or both NaN. Integers
// are their own key. A float's bits are sign and magnitude; read as an int, the positive
// values already count up in order, and flipping the 31 magnitude bits of the negative
// ones makes them count down: -0 becomes -1, just below +0's 0, and -inf the lowest of
// all. Every NaN gets the largest key (a NaN with its sign bit set would land below -inf).
// argmax's warp_reduce uses it: a warp's largest 32-bit integer is one redux.sync
// instruction (a 64-bit key takes two).
template <typename T>
__host__ __device__ inline auto order_key(T x) {
    if constexpr (std::is_same_v<T, float>) {
        constexpr int kLargest = cuda::std::numeric_limits<int>::max();
        const auto bits = cuda::std::bit_cast<int>(x);
        return is_nan(x) ? kLargest : bits ^ ((bits >> 31) & kLargest);
    } else if constexpr (std::is_same_v<T, double>) {
        constexpr long long kLargest = cuda::std::numeric_limits<long long>::max();
        const auto bits = cuda::std::bit_cast<long long>(x);
        return is_nan(x) ? kLargest : bits ^ ((bits >> 63) & kLargest);
    } else {
        return x;
    }
}

// Below every value: -infinity for floating point (so that [-inf, -inf] has the maximum
// -inf; numeric_limits::lowest(), -FLT_MAX, would win against it), the most negative
// value for integers. Never 0: the maximum of an all-negative input would come out as 0.
template <typename T>
__host__ __device__ constexpr T lowest_value() {
    if constexpr (std::is_floating_point_v<T>) return -cuda::std::numeric_limits<T>::infinity();
    else return cuda::std::numeric_limits<T>::lowest();
}
// Above every value, for min: +infinity, or the largest integer.
template <typename T>
__host__ __device__ constexpr T highest_value() {
    if constexpr (std::is_floating_point_v<T>) return cuda::std::numeric_limits<T>::infinity();
    else return cuda::std::numeric_limits<T>::max();
}
// The identity of addition: 0, but -0.0 in floating point. -0 + x == x for every x,
// whereas +0 + (-0) == +0, so starting from +0 would turn the sum of [-0] into +0. (The
// compiler knows this too, and drops "-0 + x" altogether.)
template <typename T>
__host__ __device__ constexpr T additive_identity() {
    if constexpr (std::is_floating_point_v<T>) return T(-0.0);
    else return T(0);
}

// ---------------------------------------------------------------- the operators

// Max's and Min's fold of one vector load. half and bfloat16: the vector's maximum
// (minimum) two lanes per instruction and one conversion to float, unless it is zero:
// then lane by lane, since which zero it is matters. Other types: lane by lane.
template <template <typename> class OpT, Extreme E, int VEC, typename In, typename Acc>
__host__ __device__ Acc fold_by_extreme(Acc acc, const In* lanes, std::size_t first) {
    using Op = OpT<In>;
    if constexpr (is_two_byte_float<In> && VEC % 2 == 0) {
        const Acc extreme = widen(extreme_of_pairs<E, VEC>(lanes));
        if (extreme != Acc(0)) return Op::combine(acc, extreme);
    }
    for (int k = 0; k < VEC; ++k) acc = Op::combine(acc, Op::transform(lanes[k], first + k));
    return acc;
}

// The sum. int sums in int, as reduce7 does (the data keep it exact); half in float.
template <typename InT>
struct Sum {
    using In = InT;
    using Acc = widened_t<In>;
    static constexpr OpKind kind = OpKind::Sum;
    __host__ __device__ static Acc identity() { return additive_identity<Acc>(); }
    __host__ __device__ static Acc transform(In x, std::size_t) { return widen(x); }
    __host__ __device__ static Acc combine(Acc a, Acc b) { return a + b; }
};

// The largest value. A NaN anywhere gives NaN, as NumPy's max does, and it wins from
// either argument. fmaxf does the opposite: it returns the other operand (IEEE 754-2008
// maxNum), so a NaN is ignored. And `a < b ? b : a` (std::max, CUB's cuda::maximum) keeps a
// NaN only when it is the first argument, so its result depends on the order in which the
// tree meets the values: a reduction whose answer changes with the launch configuration.
// With NaN winning both ways and +0 above -0 (IEEE 754-2019's maximum), combine is
// commutative and associative on every input.
template <typename InT>
struct Max {
    using In = InT;
    using Acc = widened_t<In>;
    static constexpr OpKind kind = OpKind::Max;
    __host__ __device__ static Acc identity() { return lowest_value<Acc>(); }
    __host__ __device__ static Acc transform(In x, std::size_t) { return widen(x); }
    __host__ __device__ static Acc combine(Acc a, Acc b) {
        // Keep a when it is NaN, larger, or equal and not -0; else b, which is then NaN,
        // larger, or +0 against a's -0. (A comparison with a NaN b is false: b wins.)
        if constexpr (std::is_floating_point_v<Acc>) {
            return is_nan(a) | (a > b) | ((a == b) & !cuda::std::signbit(a)) ? a : b;
        } else {
            return a > b ? a : b;
        }
    }
    // A whole vector load at once (the kernel calls this when an operator has it).
    template <int VEC>
    __host__ __device__ static Acc fold_lanes(Acc acc, const In* lanes, std::size_t first) {
        return fold_by_extreme<Max, Extreme::Max, VEC>(acc, lanes, first);
    }
};

// The smallest value: the mirror of Max, -0 below +0; a NaN still wins (it is not "small").
template <typename InT>
struct Min {
    using In = InT;
    using Acc = widened_t<In>;
    static constexpr OpKind kind = OpKind::Min;
    __host__ __device__ static Acc identity() { return highest_value<Acc>(); }
    __host__ __device__ static Acc transform(In x, std::size_t) { return widen(x); }
    __host__ __device__ static Acc combine(Acc a, Acc b) {
        // Keep a when it is NaN, smaller, or equal and -0; else b: Max's rule on the negated
        // values, negated back. Negation is exact (it flips the sign bit, of a NaN too).
        // Written out as Max's mirror
        // (`is_nan(a) | (a < b) | ((a == b) & signbit(a)) ? a : b`) the float kernel needed
        // 36 registers instead of 32, and 6 blocks of 256 fit on an SM instead of 8.
        if constexpr (std::is_floating_point_v<Acc>) {
            return -Max<Acc>::combine(-a, -b);
        } else {
            return a < b ? a : b;
        }
    }
    template <int VEC>
    __host__ __device__ static Acc fold_lanes(Acc acc, const In* lanes, std::size_t first) {
        return fold_by_extreme<Min, Extreme::Min, VEC>(acc, lanes, first);
    }
};

// The largest |x|: the infinity norm. Integers keep |x| in the unsigned type, where
// |INT_MIN| = 2^31 fits. NaN propagates as in Max.
template <typename In> struct Magnitude { using type = widened_t<In>; };
template <> struct Magnitude<int> { using type = unsigned; };
template <> struct Magnitude<long long> { using type = unsigned long long; };

template <typename InT>
struct AbsMax {
    using In = InT;
    using Acc = typename Magnitude<In>::type;
    static constexpr OpKind kind = OpKind::AbsMax;
    // 0: every |x| >= 0, so 0 is a true identity, not only a bound below this input's values.
    __host__ __device__ static Acc identity() { return Acc(0); }
    __host__ __device__ static Acc transform(In x, std::size_t) {
        if constexpr (std::is_integral_v<In>) {
            const Acc bits = static_cast<Acc>(x);
            return x < 0 ? Acc(0) - bits : bits;  // unsigned arithmetic: -INT_MIN is defined here
        } else {
            return cuda::std::fabs(widen(x));  // also clears the sign of -0 and of a NaN
        }
    }
    __host__ __device__ static Acc combine(Acc a, Acc b) { return Max<Acc>::combine(a, b); }
    // A whole vector load at once (the kernel calls this when an operator has it). For half
    // and bfloat16, |x| and the maximum two lanes per instruction, in the element type: an
    // absolute value clears the sign bit of both lanes, and __hmax2_nan keeps a NaN; one
    // conversion to float per vector instead of per element. (|x| has no -0 to rank.)
    template <int VEC>
    __host__ __device__ static Acc fold_lanes(Acc acc, const In* lanes, std::size_t first) {
        if constexpr (is_two_byte_float<In> && VEC % 2 == 0) {
            return combine(acc, widen(extreme_of_pairs<Extreme::AbsMax, VEC>(lanes)));
        } else {
            for (int k = 0; k < VEC; ++k) acc = combine(acc, transform(lanes[k], first + k));
            return acc;
        }
    }
};

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

// The sum of squares (the squared L2 norm), fused: x*x is formed in registers on load, so
// the input is read once. Without fusing, one kernel writes x*x to memory and a second sums
// it: the bytes moved triple (reduce_ops times both). Integers square into 64 bits: squares
// never cancel, so an int accumulator would overflow as soon as n x max|x|^2 passes 2^31.
template <typename InT>
struct SumSq {
    using In = InT;
    using Acc = std::conditional_t<std::is_integral_v<In>, long long, widened_t<In>>;
    static constexpr OpKind kind = OpKind::SumSq;
    __host__ __device__ static Acc identity() { return additive_identity<Acc>(); }
    __host__ __device__ static Acc transform(In x, std::size_t) {
        const Acc v = static_cast<Acc>(widen(x));
        return v * v;
    }
    __host__ __device__ static Acc combine(Acc a, Acc b) { return a + b; }
};

// meanvar's partial result: how many elements, their mean, and M2 = sum of (x - mean)^2.
template <typename F>
struct Moments {
    unsigned long long count;
    F mean;
    F m2;
};

// The mean and the variance (population: M2 / n, NumPy's var) in one pass.
//
// The obvious one-pass way keeps two sums, S1 = sum x and S2 = sum x^2, merged by
// adding, and ends with variance = S2/n - (S1/n)^2. That difference cancels: for data
// 1e4 + noise of size 1, S2/n is about 1e8 and the variance about 1, so float, with its
// 7 digits, keeps no correct digit of the variance and can even make it negative (a host
// test shows it). Instead each partial result is (count, mean, M2), and two merge as
// Chan, Golub and LeVeque showed (1979):
//     n = nA + nB,   delta = meanB - meanA,
//     mean = meanA + delta * nB / n,   M2 = M2A + M2B + delta^2 * nA * nB / n.
// Every term added into M2 is >= 0, so nothing cancels there, and the one subtraction,
// delta, is of two means of the same data: the large common part (the 1e4) cancels
// exactly, leaving a small number. Merging a single element (1, x, 0) is Welford's update.
// The price: a division per merge, and three numbers (four 32-bit shuffles) per tree step.
template <typename InT>
struct MeanVar {
    using In = InT;
    // float for float, half and bfloat16; double for double and the integers (a mean is
    // not an integer, and int64 values up to 2^40 need more than float's 24 bits).
    using F = std::conditional_t<std::is_same_v<widened_t<In>, float>, float, double>;
    using Acc = Moments<F>;
    static constexpr OpKind kind = OpKind::MeanVar;
    __host__ __device__ static Acc identity() { return {0, F(0), F(0)}; }
    __host__ __device__ static Acc transform(In x, std::size_t) { return {1, static_cast<F>(widen(x)), F(0)}; }
    __host__ __device__ static Acc combine(Acc a, Acc b) {
        // The identity, exactly: without these two tests, an empty side would still give
        // the right mean, but 0 * infinity = NaN for an infinite mean.
        if (b.count == 0) return a;
        if (a.count == 0) return b;
        const unsigned long long count = a.count + b.count;
        const F share_b = static_cast<F>(b.count) / static_cast<F>(count);  // nB / n
        const F delta = b.mean - a.mean;
        return {count, a.mean + delta * share_b, a.m2 + b.m2 + delta * delta * static_cast<F>(a.count) * share_b};
    }
    // A whole vector load at once (the kernel calls this when an operator has it): the VEC
    // values' own mean and M2 by the two-pass formula in registers, then one merge. VEC is a
    // power of two, so dividing by it is exact; one division per vector, not per element.
    template <int VEC>
    __host__ __device__ static Acc fold_lanes(Acc acc, const In* lanes, std::size_t) {
        F sum = static_cast<F>(widen(lanes[0]));
        for (int k = 1; k < VEC; ++k) sum += static_cast<F>(widen(lanes[k]));
        const F mean = sum * (F(1) / F(VEC));
        F m2 = F(0);
        for (int k = 0; k < VEC; ++k) {
            const F d = static_cast<F>(widen(lanes[k])) - mean;
            m2 += d * d;
        }
        return combine(acc, Acc{VEC, mean, m2});
    }
};

// ---------------------------------------------------------------- moving an Acc
// __shfl_down_sync moves one built-in value of 32 or 64 bits between the lanes of a warp;
// a struct moves field by field, one shuffle each (two for a 64-bit field).
template <typename T>
__device__ inline T shuffle_down(T value, unsigned offset) {
    return __shfl_down_sync(0xffffffffu, value, offset);
}
template <typename V>
__device__ inline ValueIndex<V> shuffle_down(const ValueIndex<V>& v, unsigned offset) {
    return {shuffle_down(v.value, offset), shuffle_down(v.index, offset)};
}
template <typename F>
__device__ inline Moments<F> shuffle_down(const Moments<F>& m, unsigned offset) {
    return {shuffle_down(m.count, offset), shuffle_down(m.mean, offset), shuffle_down(m.m2, offset)};
}

// The last block reads the other blocks' partial results with __ldcg: cached in L2 only,
// not in this SM's L1, which is not kept coherent with other SMs' writes. __ldcg, too,
// takes built-in types only.
template <typename T>
__device__ inline T load_partial(const T* p) {
    return __ldcg(p);
}
template <typename V>
__device__ inline ValueIndex<V> load_partial(const ValueIndex<V>* p) {
    return {__ldcg(&p->value), __ldcg(&p->index)};
}
template <typename F>
__device__ inline Moments<F> load_partial(const Moments<F>* p) {
    return {__ldcg(&p->count), __ldcg(&p->mean), __ldcg(&p->m2)};
}

// ---------------------------------------------------------------- checked against op_types.h
// The host computes its exactness bounds from accumulator_of() (op_types.h); these make
// sure the two agree, so that the bounds describe the code that runs.
template <typename In> constexpr OpType op_type_of();
template <> constexpr OpType op_type_of<int>() { return OpType::Int32; }
template <> constexpr OpType op_type_of<long long>() { return OpType::Int64; }
template <> constexpr OpType op_type_of<float>() { return OpType::Float32; }
template <> constexpr OpType op_type_of<double>() { return OpType::Float64; }
template <> constexpr OpType op_type_of<__half>() { return OpType::Half; }
template <> constexpr OpType op_type_of<__nv_bfloat16>() { return OpType::BFloat16; }

template <typename T> struct Scalar { using type = T; };
template <typename V> struct Scalar<ValueIndex<V>> { using type = V; };
template <typename F> struct Scalar<Moments<F>> { using type = F; };

template <typename T>
constexpr AccType acc_type_of() {
    if constexpr (std::is_same_v<T, int>) return AccType::Int32;
    else if constexpr (std::is_same_v<T, long long>) return AccType::Int64;
    else if constexpr (std::is_same_v<T, unsigned>) return AccType::UInt32;
    else if constexpr (std::is_same_v<T, unsigned long long>) return AccType::UInt64;
    else if constexpr (std::is_same_v<T, float>) return AccType::Float32;
    else return AccType::Float64;
}

template <typename Op>
constexpr bool matches_op_types() {
    return acc_type_of<typename Scalar<typename Op::Acc>::type>() == accumulator_of(Op::kind, op_type_of<typename Op::In>());
}

}  // namespace ops
