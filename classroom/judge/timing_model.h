// The judge's arithmetic on request times (judge.cu --perf), apart so that a host test
// checks it: a request of B reductions takes T(B) = fixed + B * t, and two sizes S < L
// give both unknowns.
#pragma once

#include <algorithm>
#include <vector>

namespace timing_model {

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// The fixed cost of one request, from the times of a small (S inputs) and a large (L inputs)
// request of the same program: L*T(S) - S*T(L) = (L - S) * fixed.
inline double fixed_cost(double small_ms, unsigned small, double large_ms, unsigned large) {
    return (large * small_ms - small * large_ms) / (large - small);
}

// What one reduction of a large request took: the request less the fixed cost, over L.
inline double per_reduction(double large_ms, unsigned large, double fixed_ms) {
    return (large_ms - fixed_ms) / large;
}

}  // namespace timing_model
