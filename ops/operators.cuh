// Beyond the sum: the operators' contract and the simple operators (sum, max, min, absmax,
// sumsq). The two whose partial result is more than one number have a header each:
// argmax.cuh (a value and its index) and meanvar.cuh (count, mean and M2). reduce_op.cuh
// is the kernel that runs them all.
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

// ---------------------------------------------------------------- moving an Acc
// __shfl_down_sync moves one built-in value of 32 or 64 bits between the lanes of a warp;
// a struct moves field by field, one shuffle each (two for a 64-bit field).
template <typename T>
__device__ inline T shuffle_down(T value, unsigned offset) {
    return __shfl_down_sync(0xffffffffu, value, offset);
}

// The last block reads the other blocks' partial results with __ldcg: cached in L2 only,
// not in this SM's L1, which is not kept coherent with other SMs' writes. __ldcg, too,
// takes built-in types only.
template <typename T>
__device__ inline T load_partial(const T* p) {
    return __ldcg(p);
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

// The scalar inside an Acc (argmax.cuh and meanvar.cuh specialize it for their pairs).
template <typename T> struct Scalar { using type = T; };

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
