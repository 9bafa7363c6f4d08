// meanvar: the mean and the variance in one pass, for reduce7's kernel (reduce_op.cuh).
// Its partial result is a triple, (count, mean, M2), merged as Chan, Golub and LeVeque
// showed; it moves between lanes and out of the workspace field by field. The operator
// contract is at the top of operators.cuh.
#pragma once

#include <cstddef>
#include <type_traits>

#include "operators.cuh"

namespace ops {

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

// Moving a triple: one shuffle, or one L2 load, per field (operators.cuh says why).
template <typename F>
__device__ inline Moments<F> shuffle_down(const Moments<F>& m, unsigned offset) {
    return {shuffle_down(m.count, offset), shuffle_down(m.mean, offset), shuffle_down(m.m2, offset)};
}
template <typename F>
__device__ inline Moments<F> load_partial(const Moments<F>* p) {
    return {__ldcg(&p->count), __ldcg(&p->mean), __ldcg(&p->m2)};
}

template <typename F> struct Scalar<Moments<F>> { using type = F; };

}  // namespace ops
