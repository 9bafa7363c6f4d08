// Deterministic input whose sum the host knows.
//
// By default the values are nonzero integers v with 1 <= |v| <= magnitude and random signs,
// stored as int, float or double. Why integers, also for float: every partial sum of
// integers is an integer, and integers are exact in floating point up to 2^24 (float) and
// 2^53 (double). So the GPU's sum must equal the exact sum, bit for bit, and because no
// value is zero, one element dropped or counted twice always changes the result. A rounding
// tolerance could not promise that: for float it would exceed a whole element once n
// passes 2^23.
//
// --data uniform gives real values uniform in [0, 1) instead (float and double), to measure
// what rounding does to each summation order (docs/00-overview.md): their reference is the
// sum computed in extended precision with compensation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "options.h"
#include "verify.h"

// Calls f(T{}) with T the C++ type of `type` (int, float, double): one switch, so that
// code templated on T can be chosen by the run-time --type.
template <typename F>
decltype(auto) with_value_type(ValueType type, F&& f) {
    switch (type) {
        case ValueType::Int32: return f(int{});
        case ValueType::Float32: return f(float{});
        case ValueType::Float64: break;
    }
    return f(double{});
}

// Integers up to this size are exact in the type: 2^31 - 1, 2^24, 2^53.
long long exact_integer_limit(ValueType type);

// The largest magnitude (at most 8) such that even n values of one sign sum to an
// exact integer: magnitude * n <= exact_integer_limit(type), and never below 1.
// Beyond that (float past 2^24 elements, int past 2^31) the values are +-1, and what
// keeps every partial sum exact is their random signs: docs/00-overview.md gives the
// bound ("Exact results, also for floating point").
int value_magnitude(std::size_t n, ValueType type);

// ---------------------------------------------------------------- the values
// Element i of the input is a pure function of (seed, i), the same on the host and the
// GPU: the GPU generates the input where it is summed (no host array, no copy), and the
// host computes the expected sum from the same formula, independently of any GPU code.

#if defined(__CUDACC__)
#define INPUT_HOST_DEVICE __host__ __device__
#else
#define INPUT_HOST_DEVICE
#endif

// splitmix64 of (seed, i): a good 64-bit mix, cheap, and independent of thread count.
INPUT_HOST_DEVICE inline std::uint64_t input_hash(std::uint64_t seed, std::uint64_t i) {
    std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + (i + 1) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

// Element i of the integer input: a nonzero integer in [-magnitude, magnitude], its
// sign the hash's lowest bit.
INPUT_HOST_DEVICE inline int input_value(std::uint64_t seed, std::uint64_t i, int magnitude) {
    const std::uint64_t z = input_hash(seed, i);
    // (Past 2^24 elements the magnitude is 1: skipping the 64-bit division there halves
    // the cost of a 2^32-element input, on the host and the GPU, for the same values.)
    const int size = magnitude == 1 ? 1 : 1 + static_cast<int>((z >> 1) % static_cast<std::uint64_t>(magnitude));
    return (z & 1) ? size : -size;
}

// Element i of the uniform input: the hash's top 24 (float) or 53 (double) bits as a
// fraction, a multiple of 2^-24 or 2^-53 in [0, 1), exact in T.
template <typename T>
INPUT_HOST_DEVICE inline T uniform_value(std::uint64_t seed, std::uint64_t i) {
    constexpr int kBits = sizeof(T) == 4 ? 24 : 53;
    constexpr double kScale = 1.0 / static_cast<double>(std::uint64_t{1} << kBits);
    return static_cast<T>(static_cast<double>(input_hash(seed, i) >> (64 - kBits)) * kScale);
}

// Element i of the input for this data kind, as T.
template <typename T>
INPUT_HOST_DEVICE inline T input_element(std::uint64_t seed, std::uint64_t i, int magnitude, InputData data) {
    if constexpr (std::is_floating_point_v<T>) {
        if (data == InputData::Uniform) return uniform_value<T>(seed, i);
    }
    return static_cast<T>(input_value(seed, i, magnitude));
}

// ---------------------------------------------------------------- the expected sum
// What the sum of elements [0, n) must be, computed on the host from the formula alone,
// with no array: integers in 64-bit integers, uniform values with compensation in long
// double (input.cpp). Large n use every host core.
template <typename T>
ExpectedSum expected_sum(std::size_t n, std::uint64_t seed, InputData data = InputData::Integers);
// How many host threads expected_sum uses for n elements.
int host_threads_for(std::size_t n);

// The input as a host array, with its expected sum (the host tests; the GPU path makes
// the input on the device: benchmark.h).
template <typename T>
struct HostInput {
    std::vector<T> values;
    ExpectedSum expected;  // integers: the exact sum; uniform: the reference and its bound
    int magnitude = 1;     // integers: the largest |v|
};

template <typename T>
HostInput<T> make_input(std::size_t n, std::uint64_t seed, InputData data = InputData::Integers);
