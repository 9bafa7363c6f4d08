// Verification against the host's exact sum (see input.h for why the data make it exact).
#pragma once

#include <string>

struct SumCheck {
    bool ok = false;
    std::string detail;  // "exact" or what went wrong, e.g. "got 12, expected 13 (off by -1)"
};

// The GPU's sum must equal the exact sum: integer data keep every partial sum exact.
// NaN, infinity and values that are not the exact integer all fail.
template <typename T>
SumCheck check_sum(T got, long long exact);
