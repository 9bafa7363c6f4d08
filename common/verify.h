// Verification: the GPU's sum against what the host knows the sum must be.
#pragma once

#include <cstdint>
#include <string>

#include "options.h"

// What a correct sum of one input must be (common/input.h makes the inputs).
struct ExpectedSum {
    InputData data = InputData::Integers;
    long long exact = 0;        // integers: the exact sum, computed in 64-bit integers
    long double reference = 0;  // the sum in extended precision with compensation (integers: exact)
    long double bound = 0;      // uniform: how far any summation order may round from `reference`
};

struct SumCheck {
    bool ok = false;
    std::string detail;       // "exact", "within the rounding bound ...", or what went wrong
    double value = 0;         // the result checked
    std::uint64_t bits = 0;   // its bit pattern, to count distinct results over runs
};

// Integer data: the GPU's sum must equal the exact sum, bit for bit (input.h says why it
// can). NaN, infinity and values that are not the exact integer all fail.
template <typename T>
SumCheck check_sum(T got, long long exact);

// Either kind of data. Uniform data have no exact sum to compare with: the result must be
// finite and within `bound` of the reference, which every summation order satisfies; that
// check cannot see one dropped value in a large float sum, which is why integer data are
// the default and what the tests use.
template <typename T>
SumCheck check_sum(T got, const ExpectedSum& expected);

// |got - reference rounded to T| in units in the last place of T at that value:
// 0 means the result is the correctly rounded sum.
template <typename T>
double error_in_ulps(T got, long double reference);
