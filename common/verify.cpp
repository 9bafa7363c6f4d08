#include "verify.h"

#include <cmath>
#include <cstring>
#include <sstream>
#include <type_traits>

namespace {

template <typename T>
std::uint64_t bits_of(T value) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    return bits;
}

template <typename T>
SumCheck with_value(SumCheck check, T got) {
    check.value = static_cast<double>(got);
    check.bits = bits_of(got);
    return check;
}

}  // namespace

template <typename T>
SumCheck check_sum(T got, long long exact) {
    // long double holds every int64 and every float/double value exactly on x86-64, so this
    // comparison itself rounds nothing.
    const long double got_value = static_cast<long double>(got);
    const bool ok = std::isfinite(got_value) && got_value == static_cast<long double>(exact);
    if (ok) return with_value(SumCheck{true, "exact"}, got);
    std::ostringstream detail;
    detail.precision(17);
    detail << "got " << got << ", expected " << exact;
    if (std::isfinite(got_value)) detail << " (off by " << got_value - static_cast<long double>(exact) << ")";
    return with_value(SumCheck{false, detail.str()}, got);
}

template <typename T>
double error_in_ulps(T got, long double reference) {
    if constexpr (std::is_integral_v<T>) {  // an integer's "ulp" is 1
        return static_cast<double>(std::fabs(static_cast<long double>(got) - reference));
    }
    const T rounded = static_cast<T>(reference);  // round to nearest: the correctly rounded sum
    const long double ulp = std::nextafter(std::fabs(rounded), T(INFINITY)) - std::fabs(rounded);
    return static_cast<double>(std::fabs(static_cast<long double>(got) - static_cast<long double>(rounded)) / ulp);
}

template <typename T>
SumCheck check_sum(T got, const ExpectedSum& expected) {
    if (expected.data == InputData::Integers) return check_sum(got, expected.exact);
    const long double error = std::fabs(static_cast<long double>(got) - expected.reference);
    std::ostringstream detail;
    detail.precision(9);
    if (std::isfinite(static_cast<long double>(got)) && error <= expected.bound) {
        detail << "within the rounding bound (" << error_in_ulps(got, expected.reference) << " ulp from the "
               << "correctly rounded sum)";
        return with_value(SumCheck{true, detail.str()}, got);
    }
    detail << "got " << got << ", expected " << static_cast<double>(expected.reference) << " within "
           << static_cast<double>(expected.bound);
    return with_value(SumCheck{false, detail.str()}, got);
}

#define INSTANTIATE(T)                                                \
    template SumCheck check_sum<T>(T, long long);                     \
    template SumCheck check_sum<T>(T, const ExpectedSum&);            \
    template double error_in_ulps<T>(T, long double);
INSTANTIATE(int)
INSTANTIATE(float)
INSTANTIATE(double)
