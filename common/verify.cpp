#include "verify.h"

#include <cmath>
#include <sstream>

template <typename T>
SumCheck check_sum(T got, long long exact) {
    // long double holds every int64 and every float/double value exactly on x86-64, so this
    // comparison itself rounds nothing.
    const long double got_value = static_cast<long double>(got);
    const bool ok = std::isfinite(got_value) && got_value == static_cast<long double>(exact);
    if (ok) return {true, "exact"};
    std::ostringstream detail;
    detail.precision(17);
    detail << "got " << got << ", expected " << exact;
    if (std::isfinite(got_value)) detail << " (off by " << got_value - static_cast<long double>(exact) << ")";
    return {false, detail.str()};
}

template SumCheck check_sum<int>(int, long long);
template SumCheck check_sum<float>(float, long long);
template SumCheck check_sum<double>(double, long long);
