// The operators on the host, no GPU needed: each identity is one (infinities, NaN and the
// extremes included), NaN propagates from either side, +0 ranks above -0, argmax keeps the
// first index in any tree, Chan's merge against a two-pass reference (and two sums in float
// failing where it does not), the host references against brute force, the magnitudes,
// the checks, the command line and the report.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "argmax.cuh"
#include "meanvar.cuh"
#include "op_data.h"
#include "operators.cuh"
#include "ops_options.h"
#include "ops_report.h"

namespace {

using namespace ops;

// ---------------------------------------------------------------- comparing accumulators
// The same value: NaN equals NaN, and +0 differs from -0.
template <typename T>
bool identical(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
        if (a != a || b != b) return a != a && b != b;
        return a == b && std::signbit(a) == std::signbit(b);
    } else {
        return a == b;
    }
}
template <typename V>
bool identical(const ValueIndex<V>& a, const ValueIndex<V>& b) {
    return identical(a.value, b.value) && a.index == b.index;
}
template <typename F>
bool identical(const Moments<F>& a, const Moments<F>& b) {
    return a.count == b.count && identical(a.mean, b.mean) && identical(a.m2, b.m2);
}

template <typename T>
std::string show(T v) {
    std::ostringstream out;
    out << static_cast<long double>(v);
    return out.str();
}
template <typename V>
std::string show(const ValueIndex<V>& v) {
    return "(" + show(v.value) + ", " + std::to_string(v.index) + ")";
}
template <typename F>
std::string show(const Moments<F>& m) {
    return "(" + std::to_string(m.count) + ", " + show(m.mean) + ", " + show(m.m2) + ")";
}

// ---------------------------------------------------------------- sample elements of each type
template <typename In>
std::vector<In> samples() {
    if constexpr (std::is_integral_v<In>) {
        using L = std::numeric_limits<In>;
        return {L::lowest(), L::max(), In(0), In(1), In(-1), In(12345), In(-98765)};
    } else {
        const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
        std::vector<float> floats = {-inf, inf, nan, -0.0f, 0.0f, 1.0f, -1.0f, 2047.0f, -3.5f};
        if constexpr (std::is_same_v<In, float> || std::is_same_v<In, double>) {
            using L = std::numeric_limits<In>;
            std::vector<In> values(floats.begin(), floats.end());
            for (In extreme : {L::lowest(), L::max(), L::denorm_min(), -L::denorm_min()}) values.push_back(extreme);
            return values;
        } else {
            std::vector<In> values;
            for (float f : floats) values.push_back(In(f));
            for (float extreme : {65504.0f, -65504.0f}) values.push_back(In(extreme));  // half's largest; rounded for bf16
            return values;
        }
    }
}

// The accumulators an operator meets: every sample element transformed (for sumsq of
// integers only those whose square fits), and combinations of two of them.
template <typename Op>
std::vector<typename Op::Acc> acc_samples() {
    using In = typename Op::In;
    std::vector<typename Op::Acc> accs;
    std::size_t index = 3;
    for (In x : samples<In>()) {
        if constexpr (Op::kind == OpKind::SumSq && std::is_same_v<In, long long>) {
            if (x < -(1LL << 31) || x > (1LL << 31)) continue;  // x*x would overflow int64
        }
        accs.push_back(Op::transform(x, index++));
    }
    const std::size_t singles = accs.size();
    for (std::size_t i = 0; i + 1 < singles; ++i) {
        if constexpr (Op::kind == OpKind::Sum || Op::kind == OpKind::SumSq) {
            if constexpr (std::is_integral_v<typename Op::Acc>) continue;  // integer overflow is no identity question
        }
        accs.push_back(Op::combine(accs[i], accs[i + 1]));
    }
    return accs;
}

// Calls f(Op{}) for every operator on every element type.
template <template <typename> class OpT, typename F>
void for_each_type(F&& f) {
    f(OpT<int>{});
    f(OpT<long long>{});
    f(OpT<float>{});
    f(OpT<double>{});
    f(OpT<__half>{});
    f(OpT<__nv_bfloat16>{});
}
template <typename F>
void for_each_op(F&& f) {
    for_each_type<Sum>(f);
    for_each_type<Max>(f);
    for_each_type<Min>(f);
    for_each_type<AbsMax>(f);
    for_each_type<ArgMax>(f);
    for_each_type<SumSq>(f);
    for_each_type<MeanVar>(f);
}

template <typename Op>
std::string op_label() {
    return std::string(op_name(Op::kind)) + "<" + std::string(op_type_name(op_type_of<typename Op::In>())) + ">";
}

// ---------------------------------------------------------------- identities
TEST(OpsIdentity, CombineWithTheIdentityChangesNothing) {
    for_each_op([](auto op) {
        using Op = decltype(op);
        for (const auto& x : acc_samples<Op>()) {
            EXPECT_TRUE(identical(Op::combine(Op::identity(), x), x)) << op_label<Op>() << ": combine(identity, " << show(x)
                                                                     << ") = " << show(Op::combine(Op::identity(), x));
            EXPECT_TRUE(identical(Op::combine(x, Op::identity()), x)) << op_label<Op>() << ": combine(" << show(x)
                                                                     << ", identity) = " << show(Op::combine(x, Op::identity()));
        }
    });
}

TEST(OpsIdentity, TheDocumentedValues) {
    EXPECT_TRUE(identical(Sum<float>::identity(), -0.0f));  // -0 + x == x for every x, +0 + -0 would be +0
    EXPECT_TRUE(identical(Sum<float>::combine(Sum<float>::identity(), -0.0f), -0.0f));
    EXPECT_FALSE(identical(0.0f + -0.0f, -0.0f));  // why +0 is not the identity of float addition
    EXPECT_EQ(Sum<int>::identity(), 0);
    EXPECT_EQ(Max<float>::identity(), -std::numeric_limits<float>::infinity());
    EXPECT_EQ(Max<int>::identity(), std::numeric_limits<int>::lowest());
    EXPECT_EQ(Max<__half>::identity(), -std::numeric_limits<float>::infinity());  // half accumulates in float
    EXPECT_EQ(Min<double>::identity(), std::numeric_limits<double>::infinity());
    EXPECT_EQ(Min<long long>::identity(), std::numeric_limits<long long>::max());
    EXPECT_EQ(AbsMax<float>::identity(), 0.0f);
    EXPECT_EQ(AbsMax<int>::identity(), 0u);
    EXPECT_EQ(ArgMax<float>::identity().index, kNoIndex);
    EXPECT_EQ(MeanVar<float>::identity().count, 0u);
    // Why max's identity is not 0: the maximum of an all-negative input.
    float all_negative = Max<float>::identity();
    for (float x : {-3.0f, -1.0f, -2.0f}) all_negative = Max<float>::combine(all_negative, x);
    EXPECT_EQ(all_negative, -1.0f);
    EXPECT_EQ(Max<float>::combine(0.0f, -1.0f), 0.0f);  // what a 0 start would have answered
    // And why not lowest(): the maximum of [-inf, -inf] is -inf.
    EXPECT_EQ(Max<float>::combine(Max<float>::identity(), -std::numeric_limits<float>::infinity()),
              -std::numeric_limits<float>::infinity());
    EXPECT_EQ(Max<float>::combine(std::numeric_limits<float>::lowest(), -std::numeric_limits<float>::infinity()),
              std::numeric_limits<float>::lowest());
}

TEST(OpsIdentity, AbsMaxOfTheMostNegativeInteger) {
    EXPECT_EQ(AbsMax<int>::transform(std::numeric_limits<int>::lowest(), 0), 2147483648u);
    EXPECT_EQ(AbsMax<long long>::transform(std::numeric_limits<long long>::lowest(), 0), 9223372036854775808ull);
}

// ---------------------------------------------------------------- NaN and zeros
template <typename Op>
void expect_nan_wins() {
    using Acc = typename Op::Acc;
    const Acc nan = std::numeric_limits<Acc>::quiet_NaN();
    for (const Acc& x : acc_samples<Op>()) {
        EXPECT_TRUE(std::isnan(Op::combine(nan, x))) << op_label<Op>() << ": combine(NaN, " << show(x) << ")";
        EXPECT_TRUE(std::isnan(Op::combine(x, nan))) << op_label<Op>() << ": combine(" << show(x) << ", NaN)";
    }
}

TEST(OpsNaN, PropagatesFromEitherSide) {
    expect_nan_wins<Max<float>>();
    expect_nan_wins<Max<double>>();
    expect_nan_wins<Max<__half>>();
    expect_nan_wins<Max<__nv_bfloat16>>();
    expect_nan_wins<Min<float>>();
    expect_nan_wins<Min<double>>();
    expect_nan_wins<Min<__half>>();
    expect_nan_wins<AbsMax<float>>();
    expect_nan_wins<AbsMax<double>>();
    expect_nan_wins<AbsMax<__nv_bfloat16>>();
    EXPECT_TRUE(std::isnan(AbsMax<float>::transform(-std::numeric_limits<float>::quiet_NaN(), 0)));
    EXPECT_TRUE(std::isnan(Max<__half>::transform(__float2half(std::numeric_limits<float>::quiet_NaN()), 0)));
}

TEST(OpsNaN, WhatTheOtherRulesDo) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    // fmaxf ignores NaN (IEEE 754-2008 maxNum): the other operand, from either side.
    EXPECT_EQ(std::fmax(nan, 1.0f), 1.0f);
    EXPECT_EQ(std::fmax(1.0f, nan), 1.0f);
    // a < b ? b : a (std::max, cuda::maximum) keeps a NaN only as its first argument.
    EXPECT_TRUE(std::isnan(std::max(nan, 1.0f)));
    EXPECT_EQ(std::max(1.0f, nan), 1.0f);
}

TEST(OpsZeros, PlusZeroRanksAboveMinusZero) {
    for (auto [a, b] : {std::pair{0.0f, -0.0f}, std::pair{-0.0f, 0.0f}}) {
        EXPECT_TRUE(identical(Max<float>::combine(a, b), 0.0f));
        EXPECT_TRUE(identical(Min<float>::combine(a, b), -0.0f));
    }
    EXPECT_TRUE(identical(AbsMax<float>::transform(-0.0f, 0), 0.0f));
}

// argmax's warp_reduce ranks values by order_key: a larger key exactly where argmax's rule
// ranks the value higher (a NaN above everything, +0 above -0), equal keys exactly for the
// same value or two NaNs. On the awkward values and their nearest neighbours, NaNs of
// either sign and with a payload, and random bit patterns (every sign, exponent and
// significand).
template <typename T, typename Bits>
void expect_order_key_ranks_as_argmax(std::vector<T> values) {
    const std::size_t samples = values.size();
    for (std::size_t k = 0; k < samples; ++k) {  // each value's neighbours: keys one apart
        if (is_nan(values[k])) continue;
        values.push_back(std::nextafter(values[k], std::numeric_limits<T>::infinity()));
        values.push_back(std::nextafter(values[k], -std::numeric_limits<T>::infinity()));
    }
    values.push_back(-std::numeric_limits<T>::quiet_NaN());
    values.push_back(cuda::std::bit_cast<T>(static_cast<Bits>(cuda::std::bit_cast<Bits>(std::numeric_limits<T>::quiet_NaN()) | 1)));
    std::mt19937_64 rng(2026);
    for (int k = 0; k < 400; ++k) values.push_back(cuda::std::bit_cast<T>(static_cast<Bits>(rng())));
    const auto ranks_above = [](T a, T b) { return (is_nan(a) && !is_nan(b)) || above(a, b); };
    for (T a : values) {
        for (T b : values) {
            ASSERT_EQ(order_key(a) > order_key(b), ranks_above(a, b)) << show(a) << " and " << show(b);
            ASSERT_EQ(order_key(a) == order_key(b), same(a, b) || (is_nan(a) && is_nan(b))) << show(a) << " and " << show(b);
        }
    }
}

TEST(OpsArgMax, OrderKeyRanksAsArgMaxDoes) {
    expect_order_key_ranks_as_argmax<float, std::uint32_t>(samples<float>());
    expect_order_key_ranks_as_argmax<double, std::uint64_t>(samples<double>());
}

// combine is commutative and associative on every triple of awkward values: the tree, which
// groups and orders them differently from a loop, reaches the loop's answer.
template <typename Op>
void expect_commutative_and_associative() {
    const auto accs = acc_samples<Op>();
    for (const auto& a : accs) {
        for (const auto& b : accs) {
            ASSERT_TRUE(identical(Op::combine(a, b), Op::combine(b, a)))
                << op_label<Op>() << ": " << show(a) << " and " << show(b);
            for (const auto& c : accs) {
                ASSERT_TRUE(identical(Op::combine(Op::combine(a, b), c), Op::combine(a, Op::combine(b, c))))
                    << op_label<Op>() << ": " << show(a) << ", " << show(b) << ", " << show(c);
            }
        }
    }
}

TEST(OpsOrder, ExtremaDoNotDependOnTheOrder) {
    for_each_type<Max>([](auto op) { expect_commutative_and_associative<decltype(op)>(); });
    for_each_type<Min>([](auto op) { expect_commutative_and_associative<decltype(op)>(); });
    for_each_type<AbsMax>([](auto op) { expect_commutative_and_associative<decltype(op)>(); });
    for_each_type<ArgMax>([](auto op) { expect_commutative_and_associative<decltype(op)>(); });
}

// ---------------------------------------------------------------- argmax in any tree
// A fold over a random binary tree of the elements, with the two sides of each node in a
// random order: the shapes a grid, its warps and its shuffles produce, and more.
template <typename Op, typename Rng>
typename Op::Acc random_tree(const std::vector<typename Op::Acc>& leaves, std::size_t begin, std::size_t end, Rng& rng) {
    if (end - begin == 1) return leaves[begin];
    const std::size_t split = begin + 1 + rng() % (end - begin - 1);
    const auto left = random_tree<Op>(leaves, begin, split, rng), right = random_tree<Op>(leaves, split, end, rng);
    return rng() % 2 ? Op::combine(left, right) : Op::combine(right, left);
}

TEST(OpsArgMax, FirstLargestOrFirstNaNInAnyTree) {
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    struct Case {
        std::vector<float> values;
        unsigned long long index;
    };
    const std::vector<Case> cases = {
        {{3, 7, 7, 1, 7}, 1},       {{1, nan, 3, nan}, 1},  {{nan, nan}, 0},        {{-inf, -inf}, 0},
        {{-0.0f, 0.0f, 0.0f}, 1},   {{0.0f, -0.0f}, 0},     {{5}, 0},               {{1, 2, inf, 3, inf}, 2},
        {{2, 2, 2, 2, 2, 2, 2}, 0}, {{-5, -3, -3, -9}, 1},  {{1, 3, nan}, 2}};
    std::mt19937_64 rng(7);
    for (const Case& c : cases) {
        std::vector<ValueIndex<float>> leaves;
        for (std::size_t i = 0; i < c.values.size(); ++i) leaves.push_back(ArgMax<float>::transform(c.values[i], i));
        auto loop = ArgMax<float>::identity();
        for (const auto& leaf : leaves) loop = ArgMax<float>::combine(loop, leaf);
        EXPECT_EQ(loop.index, c.index);
        for (int tree = 0; tree < 200; ++tree) {
            ASSERT_EQ(random_tree<ArgMax<float>>(leaves, 0, leaves.size(), rng).index, c.index);
        }
    }
}

// The kernel's way: vectors of VEC elements through fold_lanes, in index order, then the
// rest one by one. Op is ArgMax (the vector's top first) or ArgMaxEveryLane.
template <typename Op, int VEC>
unsigned long long argmax_by_vectors(const std::vector<float>& values) {
    using In = typename Op::In;
    std::vector<In> x;
    for (float v : values) x.push_back(static_cast<In>(v));  // small integers, zeros, NaN: exact in every type
    auto acc = Op::identity();
    std::size_t i = 0;
    for (; i + VEC <= x.size(); i += VEC) acc = Op::template fold_lanes<VEC>(acc, x.data() + i, i);
    for (; i < x.size(); ++i) acc = Op::combine(acc, Op::transform(x[i], i));
    return acc.index;
}

template <typename In>
void expect_vector_folds_keep_the_first(std::uint64_t seed) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::mt19937_64 rng(seed);
    for (int trial = 0; trial < 2000; ++trial) {
        std::vector<float> values(1 + rng() % 40);
        // Half the trials (and every one for integers) without NaN and zeros.
        const unsigned kinds = trial % 2 && !std::is_integral_v<In> ? 16 : 5;
        for (float& v : values) {
            const unsigned r = rng() % kinds;
            v = kinds == 5      ? static_cast<float>(static_cast<int>(r) - 2)
                : r == 0        ? (rng() % 2 ? nan : -nan)
                : r == 1 ? -0.0f
                : r == 2 ? 0.0f
                         : static_cast<float>(static_cast<int>(r % 5) - 2);
        }
        unsigned long long first = 0;  // the first NaN, else the first largest (+0 above -0)
        for (std::size_t i = 1; i < values.size(); ++i) {
            const float a = values[first], b = values[i];
            if (a != a) break;
            if (b != b || b > a || (b == a && std::signbit(a) && !std::signbit(b))) first = i;
        }
        ASSERT_EQ((argmax_by_vectors<ArgMax<In>, 2>(values)), first) << trial;
        ASSERT_EQ((argmax_by_vectors<ArgMax<In>, 4>(values)), first) << trial;
        ASSERT_EQ((argmax_by_vectors<ArgMax<In>, 8>(values)), first) << trial;
        ASSERT_EQ((argmax_by_vectors<ArgMaxEveryLane<In>, 8>(values)), first) << trial;
    }
}

// A vector of the lowest value (-inf, INT_MIN) against the identity, which has that value
// too: the first element must be taken, in the vector fold as in the loop.
template <typename In>
void expect_lowest_vectors_taken() {
    const float lowest = std::is_integral_v<In> ? static_cast<float>(std::numeric_limits<int>::lowest())
                                                 : -std::numeric_limits<float>::infinity();
    for (std::size_t n : {8, 16, 17, 40}) {
        const std::vector<float> values(n, lowest);
        ASSERT_EQ((argmax_by_vectors<ArgMax<In>, 2>(values)), 0u) << n;
        ASSERT_EQ((argmax_by_vectors<ArgMax<In>, 4>(values)), 0u) << n;
        ASSERT_EQ((argmax_by_vectors<ArgMax<In>, 8>(values)), 0u) << n;
        ASSERT_EQ((argmax_by_vectors<ArgMaxEveryLane<In>, 8>(values)), 0u) << n;
    }
}

TEST(OpsArgMax, AVectorOfTheLowestValueIsTaken) {
    expect_lowest_vectors_taken<float>();
    expect_lowest_vectors_taken<double>();
    expect_lowest_vectors_taken<__half>();
    expect_lowest_vectors_taken<__nv_bfloat16>();
    expect_lowest_vectors_taken<int>();
}

TEST(OpsArgMax, VectorFoldKeepsTheFirst) {
    expect_vector_folds_keep_the_first<float>(13);
    expect_vector_folds_keep_the_first<double>(14);
    expect_vector_folds_keep_the_first<__half>(15);
    expect_vector_folds_keep_the_first<__nv_bfloat16>(16);
    expect_vector_folds_keep_the_first<int>(17);
}

// max, min and absmax of half and bfloat16 fold a vector two lanes at a time
// (extreme_of_pairs); each must give what its element-by-element combine gives, bit for
// bit, NaN, infinities and both zeros included.
template <template <typename> class OpT, typename In>
void expect_pairs_match_lanes(std::uint64_t seed) {
    using Op = OpT<In>;
    const float specials[] = {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                              0.0f, -0.0f};
    std::mt19937_64 rng(seed);
    for (int trial = 0; trial < 5000; ++trial) {
        In lanes[8];
        for (In& x : lanes) {
            const unsigned r = rng() % 20;
            // a third of the trials with specials; some with zeros and negative values only
            const bool special = r < 6 && trial % 3 == 0;
            const float plain = trial % 3 == 1 ? (r % 2 ? 0.0f : -0.0f) - static_cast<float>(r % 3)
                                               : static_cast<float>(static_cast<int>(r) - 10);
            x = static_cast<In>(special ? specials[r] : plain);
        }
        const float earlier[] = {3.0f, 0.0f, -0.0f, -5.0f};  // acc from earlier vectors
        const float before = earlier[trial % 4];
        float by_lanes = before;
        for (int k = 0; k < 8; ++k) by_lanes = Op::combine(by_lanes, Op::transform(lanes[k], k));
        const float by_pairs = Op::template fold_lanes<8>(before, lanes, 0);
        if (std::isnan(by_lanes)) {
            ASSERT_TRUE(std::isnan(by_pairs)) << trial;
        } else {
            ASSERT_EQ(by_pairs, by_lanes) << trial;
            ASSERT_EQ(std::signbit(by_pairs), std::signbit(by_lanes)) << trial;
        }
    }
}

TEST(OpsPairs, MaxMinAbsMaxMatchTheLanes) {
    expect_pairs_match_lanes<Max, __half>(21);
    expect_pairs_match_lanes<Max, __nv_bfloat16>(22);
    expect_pairs_match_lanes<Min, __half>(23);
    expect_pairs_match_lanes<Min, __nv_bfloat16>(24);
    expect_pairs_match_lanes<AbsMax, __half>(25);
    expect_pairs_match_lanes<AbsMax, __nv_bfloat16>(26);
}

TEST(OpsArgMax, ManyTiesOnIntegers) {
    std::mt19937_64 rng(11);
    for (int trial = 0; trial < 50; ++trial) {
        std::vector<ValueIndex<int>> leaves;
        int best = std::numeric_limits<int>::lowest();
        unsigned long long first = kNoIndex;
        for (unsigned long long i = 0; i < 257; ++i) {
            const int v = static_cast<int>(rng() % 5);  // ties everywhere
            if (v > best) best = v, first = i;
            leaves.push_back(ArgMax<int>::transform(v, i));
        }
        EXPECT_EQ(random_tree<ArgMax<int>>(leaves, 0, leaves.size(), rng).index, first);
    }
}

// ---------------------------------------------------------------- meanvar
struct Exact {
    long double mean, variance;
};
template <typename T>
Exact two_pass(const std::vector<T>& x) {
    long double sum = 0;
    for (T v : x) sum += v;
    const long double mean = sum / x.size();
    long double m2 = 0;
    for (T v : x) m2 += (v - mean) * (v - mean);
    return {mean, m2 / x.size()};
}

// The ways a meanvar can be folded: element by element (Welford), a random tree, and the
// kernel's way (vectors of four by fold_lanes, merged one after another).
template <typename Op>
std::vector<typename Op::Acc> meanvar_folds(const std::vector<typename Op::In>& x) {
    using Acc = typename Op::Acc;
    Acc welford = Op::identity();
    for (std::size_t i = 0; i < x.size(); ++i) welford = Op::combine(welford, Op::transform(x[i], i));
    std::vector<Acc> leaves;
    for (std::size_t i = 0; i < x.size(); ++i) leaves.push_back(Op::transform(x[i], i));
    std::mt19937_64 rng(3);
    Acc vectors = Op::identity();
    std::size_t i = 0;
    for (; i + 4 <= x.size(); i += 4) vectors = Op::template fold_lanes<4>(vectors, x.data() + i, i);
    for (; i < x.size(); ++i) vectors = Op::combine(vectors, Op::transform(x[i], i));
    return {welford, random_tree<Op>(leaves, 0, leaves.size(), rng), vectors};
}

TEST(OpsMeanVar, ChansMergeMatchesTwoPasses) {
    std::mt19937_64 rng(5);
    std::normal_distribution<float> normal(3.0f, 2.0f);
    std::vector<float> x(10007);
    for (float& v : x) v = normal(rng);
    const Exact exact = two_pass(x);
    for (const auto& m : meanvar_folds<MeanVar<float>>(x)) {
        EXPECT_EQ(m.count, x.size());
        EXPECT_NEAR(m.mean, exact.mean, 1e-4 * std::fabs(exact.mean));
        EXPECT_NEAR(m.m2 / m.count, exact.variance, 1e-4 * exact.variance);
    }
}

// The reason for Chan's merge: data 1e4 + {-1, 0, +1}, variance exactly 2/3. Two running sums
// in float, S2/n - (S1/n)^2, keep no correct digit of it; Chan's merge, in the same float,
// keeps it to a few parts per million.
TEST(OpsMeanVar, TwoSumsInFloatLoseTheVarianceChanKeepsIt) {
    const std::size_t n = 3 * 40000;
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = 1e4f + static_cast<float>(static_cast<int>(i % 3) - 1);
    const long double variance = 2.0L / 3.0L;

    float s1 = 0, s2 = 0;
    for (float v : x) s1 += v, s2 += v * v;
    const float mean = s1 / n;
    const float two_sums = s2 / n - mean * mean;
    const long double two_sums_error = std::fabs(two_sums - variance) / variance;
    EXPECT_GT(two_sums_error, 1.0L) << "two sums gave " << two_sums;  // more than 100% wrong

    for (const auto& m : meanvar_folds<MeanVar<float>>(x)) {
        const long double chan_error = std::fabs(m.m2 / m.count - variance) / variance;
        EXPECT_LT(chan_error, 1e-3L) << "Chan's merge gave " << m.m2 / m.count;
    }
    std::printf("variance of 1e4 + {-1, 0, 1} (exactly 0.6667), n = %zu, in float: two sums %.6g, Chan's merge %.6g\n",
                n, two_sums, meanvar_folds<MeanVar<float>>(x)[1].m2 / n);
}

// ---------------------------------------------------------------- the data and the references
TEST(OpsData, MagnitudesKeepResultsExact) {
    for (OpType type : kAllTypes) {
        for (std::size_t n : {std::size_t{1}, std::size_t{33}, std::size_t{1} << 20, std::size_t{1} << 24,
                              std::size_t{1} << 30}) {
            const std::uint64_t sum = op_magnitude(OpKind::Sum, type, n);
            const std::uint64_t sumsq = op_magnitude(OpKind::SumSq, type, n);
            const AccType sum_acc = accumulator_of(OpKind::Sum, type), sumsq_acc = accumulator_of(OpKind::SumSq, type);
            const long double sum_limit = std::ldexp(1.0L, acc_digits(sum_acc));
            const long double sumsq_limit = std::ldexp(1.0L, acc_digits(sumsq_acc));
            if (sum > 1) EXPECT_LE((n + kMaxPlanted) * static_cast<long double>(sum), sum_limit) << op_type_name(type);
            if (sumsq > 1) {
                EXPECT_LE((n + kMaxPlanted) * static_cast<long double>(sumsq) * sumsq, sumsq_limit)
                    << op_type_name(type) << " n=" << n;
            }
        }
        // Every magnitude, and a planted Largest one above, is exact in the element type.
        for (OpKind op : kAllOps) {
            const long double largest = static_cast<long double>(op_magnitude(op, type, 1) + 1);
            if (type == OpType::Half) EXPECT_EQ(__half2float(__float2half(static_cast<float>(largest))), largest);
            if (type == OpType::BFloat16) EXPECT_EQ(__bfloat162float(__float2bfloat16(static_cast<float>(largest))), largest);
            if (type == OpType::Float32) EXPECT_EQ(static_cast<float>(largest), largest);
        }
    }
    EXPECT_EQ(op_magnitude(OpKind::Max, OpType::Half, 1000), 2047u);
    EXPECT_EQ(op_magnitude(OpKind::Max, OpType::BFloat16, 1000), 255u);
    EXPECT_EQ(op_magnitude(OpKind::Sum, OpType::Int64, 1000), std::uint64_t{1} << 40);  // 64-bit sums exercised
    EXPECT_EQ(op_magnitude(OpKind::Sum, OpType::Float32, std::size_t{1} << 26), 1u);    // random signs keep it exact
}

TEST(OpsData, PlantRefusesWhatATypeCannotHold) {
    OpData data;
    EXPECT_THROW(plant(data, OpType::Int32, 0, Special::NaN), std::invalid_argument);
    EXPECT_THROW(plant(data, OpType::Int64, 0, Special::MinusZero), std::invalid_argument);
    plant(data, OpType::Half, 0, Special::NaN);
    EXPECT_THROW(plant(data, OpType::Half, 0, Special::Largest), std::invalid_argument);  // index 0 taken
    plant(data, OpType::Half, 1, Special::Largest);
    plant(data, OpType::Half, 2, Special::Largest);
    plant(data, OpType::Half, 3, Special::Largest);
    EXPECT_THROW(plant(data, OpType::Half, 4, Special::Largest), std::invalid_argument);  // a fifth
}

// The references against brute force: the elements in a vector, each operator's rule
// applied in a plain loop.
OpExpected brute_force(OpKind op, OpType type, std::size_t n, const OpData& data) {
    std::vector<long double> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = op_element_value(data, i);
    OpExpected e;
    OpValue& r = e.value;
    const long double inf = std::numeric_limits<long double>::infinity();
    const bool integer = !is_floating(type);
    auto above = [](long double a, long double b) { return a > b || (a == b && std::signbit(b) && !std::signbit(a)); };
    switch (op) {
        case OpKind::Sum:
        case OpKind::SumSq:
            r.value = n == 0 && !integer ? -0.0L : 0.0L;
            for (long double v : x) r.value += op == OpKind::Sum ? v : v * v;
            break;
        case OpKind::Max:
        case OpKind::Min: {
            const bool is_max = op == OpKind::Max;
            r.value = is_max ? (integer ? (type == OpType::Int32 ? INT32_MIN : static_cast<long double>(INT64_MIN)) : -inf)
                             : (integer ? (type == OpType::Int32 ? INT32_MAX : static_cast<long double>(INT64_MAX)) : inf);
            bool nan = false;
            for (long double v : x) {
                nan = nan || std::isnan(v);
                if (is_max ? above(v, r.value) : above(r.value, v)) r.value = v;
            }
            if (nan) r.value = std::numeric_limits<long double>::quiet_NaN();
            break;
        }
        case OpKind::AbsMax: {
            r.value = 0;
            bool nan = false;
            for (long double v : x) nan = nan || std::isnan(v), r.value = std::max(r.value, std::fabs(v));
            if (nan) r.value = std::numeric_limits<long double>::quiet_NaN();
            break;
        }
        case OpKind::ArgMax: {
            r.index = kNoIndex;
            r.value = integer ? (type == OpType::Int32 ? INT32_MIN : static_cast<long double>(INT64_MIN)) : -inf;
            for (std::size_t i = 0; i < n; ++i) {  // the first NaN, else the first largest
                if (std::isnan(x[i])) {
                    r.index = i, r.value = x[i];
                    break;
                }
                if (r.index == kNoIndex || above(x[i], r.value)) r.index = i, r.value = x[i];
            }
            break;
        }
        case OpKind::MeanVar: {
            r.count = n;
            long double sum = 0;
            for (long double v : x) sum += v;
            r.value = n ? sum / n : 0;
            long double m2 = 0;
            for (long double v : x) m2 += (v - r.value) * (v - r.value);
            r.variance = n ? m2 / n : std::numeric_limits<long double>::quiet_NaN();
            break;
        }
    }
    return e;
}

TEST(OpsReference, AgreesWithBruteForce) {
    for (OpKind op : kAllOps) {
        for (OpType type : kAllTypes) {
            for (std::size_t n : {0, 1, 2, 33, 1000}) {
                for (int variant = 0; variant < 4; ++variant) {
                    OpData data = op_data(op, type, n, 100 + n);
                    if (variant == 1 && n > 2) {  // a tie for the largest, and the smallest
                        plant(data, type, n / 3, Special::Largest);
                        plant(data, type, n - 1, Special::Largest);
                        plant(data, type, 1, Special::Smallest);
                    }
                    if (variant == 2 && n > 2 && is_floating(type) && op != OpKind::MeanVar) {
                        plant(data, type, n / 2, Special::NaN);
                        plant(data, type, 0, Special::PlusInf);
                        plant(data, type, n - 1, Special::NaN);
                    }
                    if (variant == 3) {
                        data.all_negative = true;
                        if (n > 2 && is_floating(type)) {
                            plant(data, type, 0, Special::MinusZero);
                            plant(data, type, n - 1, Special::PlusZero);
                        }
                    }
                    const OpExpected reference = host_reference(op, type, n, data, 132);
                    const OpExpected brute = brute_force(op, type, n, data);
                    OpExpected exact = reference;
                    exact.tolerance = exact.variance_tolerance = 1e-12L * (1 + std::fabs(brute.value.variance));
                    const SumCheck check = check_op(op, brute.value, reference.exact ? reference : exact);
                    EXPECT_TRUE(check.ok) << op_name(op) << " " << op_type_name(type) << " n=" << n
                                          << " variant " << variant << ": " << check.detail;
                }
            }
        }
    }
}

TEST(OpsReference, MeanVarBoundIsWideEnoughButNotVacuous) {
    const OpData data = op_data(OpKind::MeanVar, OpType::Float32, 1 << 20, 9);
    const OpExpected e = host_reference(OpKind::MeanVar, OpType::Float32, 1 << 20, data, 132);
    EXPECT_FALSE(e.exact);
    EXPECT_GT(e.variance_tolerance, 1e-6L * e.value.variance);  // far above float's real error here (~1e-7)
    EXPECT_LT(e.variance_tolerance, 1e-2L * e.value.variance);  // yet a 1% error fails
}

// ---------------------------------------------------------------- the checks
TEST(OpsCheck, CatchesWrongResults) {
    const OpData data = op_data(OpKind::Sum, OpType::Float32, 1000, 1);
    const OpExpected sum = host_reference(OpKind::Sum, OpType::Float32, 1000, data, 132);
    OpValue dropped = sum.value;
    dropped.value -= op_element_value(data, 999);
    EXPECT_TRUE(check_op(OpKind::Sum, sum.value, sum).ok);
    EXPECT_FALSE(check_op(OpKind::Sum, dropped, sum).ok);

    const OpData max_data = op_data(OpKind::ArgMax, OpType::Half, 1000, 1);
    const OpExpected argmax = host_reference(OpKind::ArgMax, OpType::Half, 1000, max_data, 132);
    OpValue wrong_index = argmax.value;
    wrong_index.index += 1;
    EXPECT_FALSE(check_op(OpKind::ArgMax, wrong_index, argmax).ok);

    OpExpected max;
    max.value.value = 0.0L;
    OpValue minus_zero;
    minus_zero.value = -0.0L;
    EXPECT_FALSE(check_op(OpKind::Max, minus_zero, max).ok);  // the sign of a zero maximum matters
    EXPECT_TRUE(check_op(OpKind::Sum, minus_zero, max).ok);   // a sum's does not

    const OpData mv_data = op_data(OpKind::MeanVar, OpType::Float32, 1000, 1);
    const OpExpected mv = host_reference(OpKind::MeanVar, OpType::Float32, 1000, mv_data, 132);
    OpValue short_count = mv.value;
    short_count.count -= 1;
    EXPECT_FALSE(check_op(OpKind::MeanVar, short_count, mv).ok);
}

TEST(OpsCheck, NaNEqualsNaN) {
    OpExpected e;
    e.value.value = std::numeric_limits<long double>::quiet_NaN();
    OpValue got;
    got.value = std::numeric_limits<long double>::quiet_NaN();
    EXPECT_TRUE(check_op(OpKind::Max, got, e).ok);
    got.value = 3;
    EXPECT_FALSE(check_op(OpKind::Max, got, e).ok);
}

TEST(OpsCheck, FormatsValues) {
    EXPECT_EQ(format_value(std::numeric_limits<long double>::quiet_NaN()), "nan");
    EXPECT_EQ(format_value(-std::numeric_limits<long double>::infinity()), "-inf");
    EXPECT_EQ(format_value(-0.0L), "-0");
    EXPECT_EQ(format_value(1099511627776.0L), "1099511627776");
    EXPECT_EQ(format_value(static_cast<long double>(std::numeric_limits<float>::lowest())), "-3.402823466e+38");
}

// ---------------------------------------------------------------- the command line
std::string usage_error(const std::vector<std::string>& args) {
    try {
        parse_ops_options(args);
    } catch (const UsageError& e) {
        return e.what();
    }
    return "";
}

TEST(OpsOptions, Defaults) {
    const OpsOptions o = parse_ops_options({});
    EXPECT_EQ(o.ops.size(), std::size(kAllOps));
    EXPECT_EQ(o.types.size(), std::size(kAllTypes));
    EXPECT_EQ(o.sizes, std::vector<std::size_t>{std::size_t{1} << 26});
    EXPECT_EQ(o.block, 256);
    EXPECT_EQ(o.iters, 20);
    EXPECT_EQ(o.warmup, 3);
    EXPECT_EQ(o.seed, 2026u);
    EXPECT_FALSE(o.csv || o.nan_table || o.help);
}

TEST(OpsOptions, AcceptedForms) {
    const OpsOptions o = parse_ops_options({"--op", "meanvar,argmax", "--type", "half", "--n", "2^20", "--block", "1024",
                                            "--iters", "5", "--warmup", "0", "--seed", "7", "--csv"});
    EXPECT_EQ(o.ops, (std::vector<OpKind>{OpKind::ArgMax, OpKind::MeanVar}));  // in the canonical order
    EXPECT_EQ(o.types, std::vector<OpType>{OpType::Half});
    EXPECT_EQ(o.sizes, std::vector<std::size_t>{std::size_t{1} << 20});
    EXPECT_EQ(o.block, 1024);
    EXPECT_TRUE(o.csv);
    EXPECT_EQ(parse_ops_options({"--sizes", "2^20:2^28"}).sizes,
              (std::vector<std::size_t>{1u << 20, 1u << 22, 1u << 24, 1u << 26, 1u << 28}));
    EXPECT_EQ(parse_ops_options({"--sizes", "2^20:2^23"}).sizes,
              (std::vector<std::size_t>{1u << 20, 1u << 22, 1u << 23}));
    EXPECT_EQ(parse_ops_options({"--sizes", "1024:1024"}).sizes, std::vector<std::size_t>{1024});
    EXPECT_EQ(parse_ops_options({"--op", "all", "--type", "all"}).ops.size(), std::size(kAllOps));
    EXPECT_TRUE(parse_ops_options({"--nan-table"}).nan_table);
    EXPECT_TRUE(parse_ops_options({"--help"}).help);
}

TEST(OpsOptions, EveryBadInputIsOneLine) {
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"--block", "64"}, "use 128, 256, 512 or 1024"},
        {{"--block", "300"}, "use 128, 256, 512 or 1024"},
        {{"--op", "median"}, "--op takes sum | max"},
        {{"--op", "sum,"}, "--op takes"},
        {{"--type", "int8"}, "--type takes int | int64"},
        {{"--n", "-1"}, "--n takes a count"},
        {{"--n", "2^41"}, "--n takes a count"},
        {{"--sizes", "2^20"}, "--sizes takes FROM:TO"},
        {{"--sizes", "2^28:2^20"}, "--sizes takes FROM:TO"},
        {{"--sizes", "1000:2^20"}, "--sizes takes FROM:TO"},
        {{"--n", "2^20", "--sizes", "2^20:2^22"}, "choose one of --n and --sizes"},
        {{"--iters", "0"}, "--iters takes a whole number from 1"},
        {{"--seed", "-3"}, "--seed takes a non-negative whole number"},
        {{"--nan-table", "--op", "max"}, "--nan-table prints one fixed table"},
        {{"--frobnicate"}, "unknown option '--frobnicate'"},
        {{"--op"}, "--op needs a value"},
    };
    for (const auto& [args, expected] : cases) {
        const std::string message = usage_error(args);
        EXPECT_NE(message.find(expected), std::string::npos) << "'" << message << "' lacks '" << expected << "'";
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
}

TEST(OpsOptions, HelpNamesTheBlockSizesAndExitStatus) {
    const std::string help = ops_usage_text();
    EXPECT_NE(help.find("128, 256, 512 or 1024"), std::string::npos);
    EXPECT_NE(help.find("--nan-table"), std::string::npos);
    EXPECT_NE(help.find("exit status"), std::string::npos);
}

// ---------------------------------------------------------------- the report
TEST(OpsReport, CsvColumns) {
    EXPECT_EQ(op_csv_columns(),
              (std::vector<std::string>{"op", "type", "impl", "n", "bytes", "block", "runs", "median_ms", "min_ms",
                                        "max_ms", "gbps", "pct_peak", "vs_cub", "verified", "check", "device",
                                        "peak_gbps"}));
    OpRecord r;
    r.op = "sumsq";
    r.type = "half";
    r.impl = "unfused";
    r.n = 1024;
    r.bytes = 2048;
    r.block = 256;
    r.check = "within bound";
    r.verified = true;
    r.device = "NVIDIA H100, 80GB";
    std::ostringstream csv;
    write_op_csv(csv, {r});
    EXPECT_NE(csv.str().find("sumsq,half,unfused,1024,2048,256,"), std::string::npos) << csv.str();
    EXPECT_NE(csv.str().find("\"NVIDIA H100, 80GB\""), std::string::npos) << csv.str();
    std::ostringstream table;
    print_op_table(table, {r});
    EXPECT_NE(table.str().find("x CUB"), std::string::npos);
}

}  // namespace
