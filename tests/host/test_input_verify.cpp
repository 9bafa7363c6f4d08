// The input generator and the exact check: together they must catch one element dropped
// or counted twice at every size the GPU tests use, for every type.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "input.h"
#include "verify.h"

namespace {

const std::vector<std::size_t> kSizes = {1, 2, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 65537,
                                         std::size_t{1} << 20, (std::size_t{1} << 20) + 1,
                                         (std::size_t{1} << 24) + 3};

TEST(Input, MagnitudeKeepsEverySumExactWhereThatIsPossible) {
    for (ValueType type : {ValueType::Int32, ValueType::Float32, ValueType::Float64}) {
        for (std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{1} << 21, std::size_t{1} << 24,
                              std::size_t{1} << 28, std::size_t{2147483647}}) {
            const int m = value_magnitude(n, type);
            EXPECT_GE(m, 1);
            EXPECT_LE(m, 8);
            // Where one is possible, even n values of one sign sum exactly.
            if (n <= static_cast<std::size_t>(exact_integer_limit(type))) {
                EXPECT_LE(static_cast<long long>(m) * static_cast<long long>(n), exact_integer_limit(type))
                    << type_name(type) << " n=" << n;
            }
        }
    }
    EXPECT_EQ(value_magnitude(1000, ValueType::Float32), 8);
    EXPECT_EQ(value_magnitude(std::size_t{1} << 22, ValueType::Float32), 4);
    EXPECT_EQ(value_magnitude(std::size_t{1} << 26, ValueType::Float32), 1);
    EXPECT_EQ(value_magnitude(std::size_t{1} << 28, ValueType::Int32), 7);
    EXPECT_EQ(value_magnitude(std::size_t{1} << 26, ValueType::Float64), 8);
}

TEST(Input, ValuesAreNonzeroBoundedDeterministicAndSumExactly) {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{1000}, (std::size_t{1} << 20) + 1}) {
        const HostInput<float> a = make_input<float>(n, 42);
        const HostInput<float> b = make_input<float>(n, 42);
        ASSERT_EQ(a.values.size(), n);
        EXPECT_EQ(a.values, b.values);  // the same seed gives the same input
        long long sum = 0;
        int positives = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const float v = a.values[i];
            ASSERT_NE(v, 0.0f);
            ASSERT_LE(std::fabs(v), a.magnitude);
            ASSERT_EQ(v, std::trunc(v));
            ASSERT_EQ(static_cast<int>(v), input_value(42, i, a.magnitude));  // the threads split the work only
            positives += v > 0;
            sum += static_cast<long long>(v);
        }
        EXPECT_EQ(a.expected.exact, sum);
        if (n >= 1000) {  // both signs, roughly half each
            EXPECT_GT(positives, static_cast<int>(n * 4 / 10));
            EXPECT_LT(positives, static_cast<int>(n * 6 / 10));
        }
    }
    EXPECT_NE(make_input<int>(1000, 1).values, make_input<int>(1000, 2).values);
}

template <typename T>
void expect_drop_and_double_caught(std::size_t n) {
    const HostInput<T> input = make_input<T>(n, n + 3);
    ASSERT_TRUE(check_sum(static_cast<T>(input.expected.exact), input.expected.exact).ok);
    for (std::size_t k : {std::size_t{0}, n / 2, n - 1}) {
        const long long v = static_cast<long long>(input.values[k]);
        const SumCheck dropped = check_sum(static_cast<T>(input.expected.exact - v), input.expected.exact);
        const SumCheck doubled = check_sum(static_cast<T>(input.expected.exact + v), input.expected.exact);
        EXPECT_FALSE(dropped.ok) << "n=" << n << " element " << k;
        EXPECT_FALSE(doubled.ok) << "n=" << n << " element " << k;
        EXPECT_NE(dropped.detail.find("expected"), std::string::npos);
    }
}

TEST(Verify, CatchesOneElementDroppedOrDoubledAtEveryTestedSize) {
    for (std::size_t n : kSizes) {
        expect_drop_and_double_caught<int>(n);
        expect_drop_and_double_caught<float>(n);
        expect_drop_and_double_caught<double>(n);
    }
}

TEST(Verify, RejectsNonFiniteAndNonIntegerResults) {
    EXPECT_FALSE(check_sum(std::numeric_limits<float>::quiet_NaN(), 0).ok);
    EXPECT_FALSE(check_sum(std::numeric_limits<double>::infinity(), 5).ok);
    EXPECT_FALSE(check_sum(12.5f, 12).ok);
    EXPECT_FALSE(check_sum(12.000001, 12).ok);
    EXPECT_TRUE(check_sum(-7, -7).ok);
    EXPECT_TRUE(check_sum(-7.0f, -7).ok);
    EXPECT_FALSE(check_sum(0, 1).ok);
    EXPECT_EQ(check_sum(3.0, 3).detail, "exact");
    // The harness's poison value (bytes 0x7F) is never an exact sum of these inputs.
    float poison_float;
    int poison_int;
    const unsigned char bytes[8] = {0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F};
    std::memcpy(&poison_float, bytes, 4);
    std::memcpy(&poison_int, bytes, 4);
    EXPECT_FALSE(check_sum(poison_float, 0).ok);
    EXPECT_GT(static_cast<long long>(poison_int), 8LL * ((1LL << 24) + 3));  // past any test size x magnitude
}

TEST(Input, UniformValuesAndTheirCorrectlyRoundedReference) {
    for (std::size_t n : {std::size_t{1}, std::size_t{1000}, (std::size_t{1} << 20) + 1}) {
        const HostInput<float> a = make_input<float>(n, 5, InputData::Uniform);
        EXPECT_EQ(a.values, make_input<float>(n, 5, InputData::Uniform).values);
        ASSERT_EQ(a.expected.data, InputData::Uniform);
        long double plain = 0;
        for (std::size_t i = 0; i < n; ++i) {
            ASSERT_GE(a.values[i], 0.0f);
            ASSERT_LT(a.values[i], 1.0f);
            ASSERT_EQ(a.values[i], uniform_value<float>(5, i));
            // A multiple of 2^-24: exact in float, and in the long double sum below.
            ASSERT_EQ(std::ldexp(a.values[i], 24), std::trunc(std::ldexp(a.values[i], 24)));
            plain += a.values[i];
        }
        // Below 2^40 multiples of 2^-24 the long double sum is exact, so the compensated
        // reference must equal it.
        EXPECT_EQ(a.expected.reference, plain) << n;
        EXPECT_EQ(a.expected.bound > 0, n > 1);  // one value: nothing to round
        EXPECT_LT(a.expected.bound, a.expected.reference);
        const float rounded = static_cast<float>(a.expected.reference);
        EXPECT_TRUE(check_sum(rounded, a.expected).ok);
        EXPECT_EQ(error_in_ulps(rounded, a.expected.reference), 0.0);
        EXPECT_EQ(error_in_ulps(std::nextafter(rounded, 2 * rounded + 1), a.expected.reference), 1.0);
        EXPECT_FALSE(check_sum(static_cast<float>(a.expected.reference * 1.5L + 1), a.expected).ok);
        EXPECT_FALSE(check_sum(std::numeric_limits<float>::quiet_NaN(), a.expected).ok);
    }
    const HostInput<double> d = make_input<double>(4097, 9, InputData::Uniform);
    EXPECT_EQ(error_in_ulps(static_cast<double>(d.expected.reference), d.expected.reference), 0.0);
    // The integer path is unchanged by the data switch.
    EXPECT_EQ(make_input<float>(1000, 3, InputData::Integers).expected.data, InputData::Integers);
    EXPECT_TRUE(check_sum(5.0f, ExpectedSum{InputData::Integers, 5, 5, 0}).ok);
    EXPECT_FALSE(check_sum(5.5f, ExpectedSum{InputData::Integers, 5, 5, 0}).ok);
}

}  // namespace
