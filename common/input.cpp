#include "input.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

namespace {

// A running sum with Neumaier's compensation: the rounding error of each add is kept
// and added back at the end. In long double (64-bit significand) it is far more accurate
// than float or double rounding needs.
struct CompensatedSum {
    long double sum = 0, compensation = 0;
    void add(long double x) {
        const long double t = sum + x;
        compensation += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
        sum = t;
    }
    long double value() const { return sum + compensation; }
};

// Calls work(begin, end, worker) over [0, n) on host_threads_for(n) threads.
template <typename Work>
void in_parallel(std::size_t n, Work&& work) {
    const auto workers = static_cast<std::size_t>(host_threads_for(n));
    std::vector<std::thread> threads;
    for (std::size_t w = 1; w < workers; ++w) threads.emplace_back(work, n * w / workers, n * (w + 1) / workers, w);
    work(std::size_t{0}, n / workers, std::size_t{0});
    for (auto& t : threads) t.join();
}

}  // namespace

long long exact_integer_limit(ValueType type) {
    switch (type) {
        case ValueType::Int32: return 2147483647LL;
        case ValueType::Float32: return 1LL << 24;
        case ValueType::Float64: return 1LL << 53;
    }
    return 1;
}

int value_magnitude(std::size_t n, ValueType type) {
    if (n == 0) return 8;
    const long long fits = exact_integer_limit(type) / static_cast<long long>(n);
    return static_cast<int>(std::clamp<long long>(fits, 1, 8));
}

int host_threads_for(std::size_t n) {
    return n < (1u << 20) ? 1 : static_cast<int>(std::clamp<unsigned>(std::thread::hardware_concurrency(), 1, 64));
}

namespace {

// The expected sum from the workers' partial sums.
template <typename T>
ExpectedSum finish_expected(std::size_t n, InputData data, const std::vector<long long>& exact,
                            const std::vector<CompensatedSum>& compensated) {
    ExpectedSum expected;
    expected.data = data;
    if (data == InputData::Integers || !std::is_floating_point_v<T>) {
        for (long long part : exact) expected.exact += part;
        expected.reference = static_cast<long double>(expected.exact);
        return expected;
    }
    CompensatedSum total;
    for (const CompensatedSum& part : compensated) {
        total.add(part.sum);
        total.add(part.compensation);
    }
    // Any order of n - 1 additions in T, each rounding by at most u, stays within
    // gamma(n - 1) x sum |x| of the true sum (Higham, Accuracy and Stability of Numerical
    // Algorithms, section 4.2); the values are >= 0, so sum |x| is the sum.
    expected.reference = total.value();
    const long double u = std::ldexp(1.0L, -std::numeric_limits<T>::digits);
    const long double k = n > 0 ? static_cast<long double>(n - 1) : 0.0L;
    expected.bound = k * u < 1 ? k * u / (1 - k * u) * expected.reference : std::numeric_limits<long double>::infinity();
    return expected;
}

}  // namespace

template <typename T>
ExpectedSum expected_sum(std::size_t n, std::uint64_t seed, InputData data) {
    const int magnitude = value_magnitude(n, value_type_of<T>());
    const bool integers = data == InputData::Integers || !std::is_floating_point_v<T>;
    std::vector<long long> exact(host_threads_for(n), 0);
    std::vector<CompensatedSum> compensated(exact.size());
    in_parallel(n, [&](std::size_t begin, std::size_t end, std::size_t w) {
        long long local = 0;  // a register, not exact[w]: threads writing neighbours' cache lines would crawl
        CompensatedSum local_compensated;
        for (std::size_t i = begin; i < end; ++i) {
            if (integers) {
                local += input_value(seed, i, magnitude);
            } else {
                local_compensated.add(uniform_value<T>(seed, i));
            }
        }
        exact[w] = local;
        compensated[w] = local_compensated;
    });
    return finish_expected<T>(n, data, exact, compensated);
}

template <typename T>
HostInput<T> make_input(std::size_t n, std::uint64_t seed, InputData data) {
    HostInput<T> input;
    input.magnitude = value_magnitude(n, value_type_of<T>());
    input.values.resize(n);
    in_parallel(n, [&](std::size_t begin, std::size_t end, std::size_t) {
        for (std::size_t i = begin; i < end; ++i) input.values[i] = input_element<T>(seed, i, input.magnitude, data);
    });
    input.expected = expected_sum<T>(n, seed, data);
    return input;
}

#define INSTANTIATE(T)                                                       \
    template ExpectedSum expected_sum<T>(std::size_t, std::uint64_t, InputData); \
    template HostInput<T> make_input<T>(std::size_t, std::uint64_t, InputData);
INSTANTIATE(int)
INSTANTIATE(float)
INSTANTIATE(double)
