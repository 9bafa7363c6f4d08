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
#include <vector>

#include "options.h"
#include "verify.h"

template <typename T> constexpr ValueType value_type_of();
template <> constexpr ValueType value_type_of<int>() { return ValueType::Int32; }
template <> constexpr ValueType value_type_of<float>() { return ValueType::Float32; }
template <> constexpr ValueType value_type_of<double>() { return ValueType::Float64; }

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
// For float beyond 2^24 elements no magnitude guarantees this; see docs/00-overview.md.
int value_magnitude(std::size_t n, ValueType type);

// Element i of the integer input for this seed: a pure function, so any part can be regenerated.
int input_value(std::uint64_t seed, std::size_t i, int magnitude);

// Element i of the uniform input: a multiple of 2^-24 (float) or 2^-53 (double) in [0, 1).
template <typename T>
T uniform_value(std::uint64_t seed, std::size_t i);

template <typename T>
struct HostInput {
    std::vector<T> values;
    ExpectedSum expected;  // integers: the exact sum; uniform: the reference and its bound
    int magnitude = 1;     // integers: the largest |v|
};

template <typename T>
HostInput<T> make_input(std::size_t n, std::uint64_t seed, InputData data = InputData::Integers);
