#include "op_data.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <thread>
#include <vector>

namespace ops {

namespace {

__extension__ using Int128 = __int128;  // a GCC/Clang extension: sums of squares of 2^40 need 128 bits

constexpr std::uint64_t kNoIndex = ~0ull;  // as in argmax.cuh

// ---------------------------------------------------------------- magnitudes
// The largest magnitude each element type stores exactly, with room for a planted
// Largest (magnitude + 1) and for the host's 128-bit sums of squares:
//   int 2^30; int64 2^40 (past 32 bits, so that 64-bit arithmetic is exercised);
//   float 2^24 - 1 (every integer to 2^24 is a float); double 2^40;
//   half 2047 (11-bit significand: integers to 2^11 = 2048); bfloat16 255 (8 bits: 256).
std::uint64_t storage_cap(OpType type) {
    switch (type) {
        case OpType::Int32: return std::uint64_t{1} << 30;
        case OpType::Int64: return std::uint64_t{1} << 40;
        case OpType::Float32: return (std::uint64_t{1} << 24) - 1;
        case OpType::Float64: return std::uint64_t{1} << 40;
        case OpType::Half: return 2047;
        case OpType::BFloat16: return 255;
    }
    return 1;
}

// Every integer up to this is exact in the accumulator: 2^31 - 1, 2^63 - 1, 2^24, 2^53.
std::uint64_t acc_exact_limit(AccType acc) {
    const int digits = acc_digits(acc);
    return is_floating(acc) ? std::uint64_t{1} << digits : (std::uint64_t{1} << (digits - 1) << 1) - 1;
}

std::uint64_t integer_sqrt(std::uint64_t x) {
    auto r = static_cast<std::uint64_t>(std::sqrt(static_cast<long double>(x)));
    while (r > 0 && r * r > x) --r;
    while ((r + 1) * (r + 1) <= x) ++r;
    return r;
}

}  // namespace

std::uint64_t op_magnitude(OpKind op, OpType type, std::size_t n) {
    const std::uint64_t cap = storage_cap(type);
    const std::uint64_t limit = acc_exact_limit(accumulator_of(op, type));
    const std::uint64_t count = std::max<std::uint64_t>(n, 1) + kMaxPlanted;  // room for the plants' one extra each
    switch (op) {
        case OpKind::Sum: {
            // As common/input.h: even `count` values of one sign must sum exactly in the
            // accumulator, magnitude x count <= limit, and at most 8 (int64: 2^40, to use
            // its 64 bits). Past that (float accumulators beyond 2^24 elements) the values
            // are +-1 and their random signs keep every partial sum exact: the bound is in
            // docs/00-overview.md ("Exact results, also for floating point").
            const std::uint64_t sum_cap = type == OpType::Int64 ? cap : 8;
            return std::clamp<std::uint64_t>(limit / count, 1, sum_cap);
        }
        case OpKind::SumSq:
            // Squares are all positive: every partial sum is at most the total, so the sum
            // is exact while count x magnitude^2 <= limit (int64: 2^62, for the sign and
            // the plants). Past that (float beyond 2^24 elements) host_reference() checks
            // against a rounding bound instead.
            return std::clamp<std::uint64_t>(
                integer_sqrt((accumulator_of(op, type) == AccType::Int64 ? std::uint64_t{1} << 62 : limit) / count), 1,
                cap);
        case OpKind::MeanVar:
            return std::min<std::uint64_t>(cap, 1024);  // any size works; the check has a bound
        case OpKind::Max:
        case OpKind::Min:
        case OpKind::AbsMax:
        case OpKind::ArgMax:
            // A comparison rounds nothing: the full range of exact integers, so that values
            // are mostly distinct (half and bfloat16, with 4095 and 511 of them, tie often:
            // argmax's first-index rule at work on ordinary data).
            return cap;
    }
    return 1;
}

OpData op_data(OpKind op, OpType type, std::size_t n, std::uint64_t seed) {
    OpData data;
    data.seed = seed;
    data.magnitude = op_magnitude(op, type, n);
    return data;
}

void plant(OpData& data, OpType type, std::uint64_t index, Special value) {
    const bool integer_only = value == Special::Largest || value == Special::Smallest || value == Special::PlusZero;
    if (!is_floating(type) && !integer_only) {
        throw std::invalid_argument(std::string(op_type_name(type)) + " has no NaN, infinity or -0");
    }
    if (data.planted == kMaxPlanted) throw std::invalid_argument("at most 4 planted values");
    if (planted_at(data, index)) throw std::invalid_argument("index " + std::to_string(index) + " is planted already");
    data.plants[data.planted++] = {index, value};
}

namespace {

long double special_value(Special special, std::uint64_t magnitude) {
    const auto largest = static_cast<long double>(magnitude + 1);
    switch (special) {
        case Special::NaN: return std::numeric_limits<long double>::quiet_NaN();
        case Special::PlusInf: return std::numeric_limits<long double>::infinity();
        case Special::MinusInf: return -std::numeric_limits<long double>::infinity();
        case Special::Largest: return largest;
        case Special::Smallest: return -largest;
        case Special::PlusZero: return 0.0L;
        case Special::MinusZero: return -0.0L;
    }
    return 0.0L;
}

}  // namespace

long double op_element_value(const OpData& data, std::uint64_t i) {
    if (const Planted* p = planted_at(data, i)) return special_value(p->value, data.magnitude);
    return static_cast<long double>(op_integer(data, i));
}

// ---------------------------------------------------------------- the host's reference
namespace {

// Elements that are integers (all but the plants), summarized exactly.
struct Summary {
    std::uint64_t count = 0;
    Int128 sum = 0, sum_squares = 0;
    long long max = 0, min = 0;  // valid when count > 0, with the index of their first occurrence
    std::uint64_t max_index = 0, min_index = 0;
    std::uint64_t abs_max = 0;

    void add(long long v, std::uint64_t i) {
        if (count == 0 || v > max) max = v, max_index = i;  // only a larger value moves the index: the first wins
        if (count == 0 || v < min) min = v, min_index = i;
        abs_max = std::max(abs_max, static_cast<std::uint64_t>(v < 0 ? -v : v));
        sum += v;
        sum_squares += static_cast<Int128>(v) * v;
        ++count;
    }
    // `later` covers indices after this one's.
    void merge(const Summary& later) {
        if (later.count == 0) return;
        if (count == 0 || later.max > max) max = later.max, max_index = later.max_index;
        if (count == 0 || later.min < min) min = later.min, min_index = later.min_index;
        abs_max = std::max(abs_max, later.abs_max);
        sum += later.sum;
        sum_squares += later.sum_squares;
        count += later.count;
    }
};

// One pass over [0, n), on host_threads_for(n) threads, each a contiguous range.
Summary summarize(const OpData& data, std::size_t n) {
    const auto workers = static_cast<std::size_t>(host_threads_for(n));
    std::vector<Summary> parts(workers);
    auto work = [&](std::size_t w) {
        Summary local;  // a register, not parts[w]: neighbours' cache lines would crawl
        for (std::size_t i = n * w / workers, end = n * (w + 1) / workers; i < end; ++i) {
            if (!planted_at(data, i)) local.add(op_integer(data, i), i);
        }
        parts[w] = local;
    };
    std::vector<std::thread> threads;
    for (std::size_t w = 1; w < workers; ++w) threads.emplace_back(work, w);
    work(0);
    for (auto& t : threads) t.join();
    Summary total;
    for (const Summary& part : parts) total.merge(part);
    return total;
}

bool is_nan(long double x) { return x != x; }

// The rules of operators.cuh, restated for the host in long double: NaN wins max and min,
// +0 ranks above -0, argmax ties go to the smaller index.
bool ranks_above(long double a, long double b) {
    return a > b || (a == b && std::signbit(b) && !std::signbit(a));
}
long double max_of(long double a, long double b) {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return ranks_above(b, a) ? b : a;
}
long double min_of(long double a, long double b) {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return ranks_above(a, b) ? b : a;
}
OpValue argmax_of(const OpValue& a, const OpValue& b) {
    const bool a_nan = is_nan(a.value), b_nan = is_nan(b.value);
    const bool b_above = b_nan ? !a_nan : !a_nan && ranks_above(b.value, a.value);
    const bool tie = a_nan ? b_nan : !b_nan && a.value == b.value && std::signbit(a.value) == std::signbit(b.value);
    return b_above || (tie && b.index < a.index) ? b : a;
}

long double lowest_of(OpType type) {
    if (type == OpType::Int32) return std::numeric_limits<int>::lowest();
    if (type == OpType::Int64) return std::numeric_limits<long long>::lowest();
    return -std::numeric_limits<long double>::infinity();
}
long double highest_of(OpType type) {
    if (type == OpType::Int32) return std::numeric_limits<int>::max();
    if (type == OpType::Int64) return std::numeric_limits<long long>::max();
    return std::numeric_limits<long double>::infinity();
}

long double to_long_double(Int128 x) { return static_cast<long double>(x); }

// How many rounded operations can lie on one path from an element to the result, for
// any of the reductions checked here. Ours: each thread folds its share of the elements
// (n / threads, at most about n / (128 x SMs) with at least 128 threads per SM, far more
// in practice), then 5 + 5 shuffle steps, then the last block's strided loop over the
// partials (grid / BLOCK <= 33 steps for 32 blocks of 128 on each of 132 SMs) and
// 5 + 5 more, plus the head and tail: under 128 beyond the share. CUB's DeviceReduce is
// built the same way: a grid of at least one block per SM, a per-thread fold, block
// trees, and a second small kernel. So:
std::uint64_t chain_length(std::size_t n, int sms) {
    const std::uint64_t threads = 128 * static_cast<std::uint64_t>(std::max(sms, 1));
    return (n + threads - 1) / threads + 128;
}

}  // namespace

OpExpected host_reference(OpKind op, OpType type, std::size_t n, const OpData& data, int sms) {
    const Summary integers = summarize(data, n);
    // The plants, in index order, as (value, index).
    std::vector<OpValue> plants;
    for (int p = 0; p < data.planted; ++p) {
        if (data.plants[p].index >= n) continue;  // planted past the end: not in this input
        OpValue v;
        v.value = special_value(data.plants[p].value, data.magnitude);
        v.index = data.plants[p].index;
        plants.push_back(v);
    }
    std::sort(plants.begin(), plants.end(), [](const OpValue& a, const OpValue& b) { return a.index < b.index; });

    OpExpected expected;
    OpValue& result = expected.value;
    const AccType acc = accumulator_of(op, type);
    const long double u = is_floating(acc) ? std::ldexp(1.0L, -acc_digits(acc)) : 0.0L;  // unit roundoff
    const long double L = static_cast<long double>(chain_length(n, sms));
    switch (op) {
        case OpKind::Sum:
        case OpKind::SumSq: {
            Int128 exact = op == OpKind::Sum ? integers.sum : integers.sum_squares;
            long double nonfinite = 0;  // infinities and NaN, added in long double: inf - inf = NaN
            bool any_nonfinite = false;
            for (const OpValue& p : plants) {
                if (std::isfinite(p.value)) {
                    const auto v = static_cast<Int128>(p.value);
                    exact += op == OpKind::Sum ? v : v * v;
                } else {
                    nonfinite += op == OpKind::Sum ? p.value : p.value * p.value;
                    any_nonfinite = true;
                }
            }
            result.value = any_nonfinite ? nonfinite : to_long_double(exact);
            if (n == 0 && is_floating(acc)) result.value = -0.0L;  // the identity (operators.cuh)
            // Sums are exact (op_magnitude); sums of squares while the total is exact in
            // the accumulator: the terms are positive, so every partial sum is smaller.
            // Past that, the standard bound for any summation of positive terms whose
            // longest chain of additions is L: |error| <= gamma_L x total, gamma_L =
            // L u / (1 - L u) (Higham, Accuracy and Stability of Numerical Algorithms,
            // 4.2). Checked with a margin of 2.
            if (op == OpKind::SumSq && !any_nonfinite && exact > static_cast<Int128>(acc_exact_limit(acc))) {
                expected.exact = false;
                const long double gamma = L * u < 1 ? L * u / (1 - L * u) : std::numeric_limits<long double>::infinity();
                expected.tolerance = 2 * gamma * result.value;
            }
            break;
        }
        case OpKind::Max:
        case OpKind::Min: {
            const bool is_max = op == OpKind::Max;
            result.value = is_max ? lowest_of(type) : highest_of(type);  // the identity for n = 0
            if (integers.count) result.value = static_cast<long double>(is_max ? integers.max : integers.min);
            for (const OpValue& p : plants) result.value = is_max ? max_of(result.value, p.value) : min_of(result.value, p.value);
            break;
        }
        case OpKind::AbsMax:
            result.value = static_cast<long double>(integers.abs_max);  // 0 for no elements: the identity
            for (const OpValue& p : plants) result.value = max_of(result.value, std::fabs(p.value));
            break;
        case OpKind::ArgMax: {
            result.value = lowest_of(type);
            result.index = kNoIndex;
            if (integers.count) {
                result.value = static_cast<long double>(integers.max);
                result.index = integers.max_index;
            }
            for (const OpValue& p : plants) result = argmax_of(result, p);
            break;
        }
        case OpKind::MeanVar: {
            Int128 sum = integers.sum, sum_squares = integers.sum_squares;
            long double abs_max = static_cast<long double>(integers.abs_max);
            for (const OpValue& p : plants) {
                if (!std::isfinite(p.value)) {
                    throw std::invalid_argument("meanvar has no checked result for data with NaN or infinity");
                }
                const auto v = static_cast<Int128>(p.value);
                sum += v;
                sum_squares += v * v;
                abs_max = std::max(abs_max, std::fabs(p.value));
            }
            result.count = n;
            if (n == 0) {  // the identity: count 0, mean 0; the variance 0/0
                result.value = 0;
                result.variance = std::numeric_limits<long double>::quiet_NaN();
                break;
            }
            // Exact up to the final division: n x sum x^2 - (sum x)^2 = n^2 x variance, in
            // 128 bits (|x| <= 1025 and n <= 2^40: at most 2^100).
            const auto count = static_cast<Int128>(n);
            result.value = to_long_double(sum) / static_cast<long double>(n);
            result.variance = to_long_double(count * sum_squares - sum * sum) / static_cast<long double>(n) /
                              static_cast<long double>(n);
            // The bound. Each merge rounds the mean (a subtraction, a division, a product
            // and a sum) by at most about 4u of the largest |mean| it holds, so after a
            // chain of L merges |mean error| <= 4 L u max|x|. Each merge adds three
            // non-negative terms into M2, products of at most four rounded factors, so M2
            // gains at most about 6u of itself per merge; delta = meanB - meanA carries
            // the means' errors, about 2u max|x| of it per merge, and that enters M2 as
            // 2 delta x error, relative to M2 a factor kappa = max|x| / sigma larger. In
            // all, |variance error| <= 8 L u kappa variance to first order, the form of
            // Chan, Golub and LeVeque's bound for pairwise merging (1983), with L for
            // the tree's height. Checked with a margin of 4 for the second-order terms.
            // The count is exact, so a dropped element never hides in the tolerance.
            expected.exact = false;
            const long double sigma = std::sqrt(result.variance);
            const long double kappa = sigma > 0 ? std::max(1.0L, abs_max / sigma) : 1.0L;
            expected.tolerance = 4 * (4 * L * u * abs_max);
            expected.variance_tolerance =
                4 * (8 * L * u * kappa * (result.variance > 0 ? result.variance : abs_max * abs_max));
            break;
        }
    }
    return expected;
}

// ---------------------------------------------------------------- checking
namespace {

bool same_value(long double a, long double b, bool sign_of_zero) {
    if (is_nan(a) || is_nan(b)) return is_nan(a) && is_nan(b);
    return a == b && (!sign_of_zero || std::signbit(a) == std::signbit(b));
}

bool within(long double got, long double expected, long double tolerance) {
    if (is_nan(got) || is_nan(expected)) return is_nan(got) && is_nan(expected);
    if (std::isinf(expected)) return got == expected;
    return std::fabs(got - expected) <= tolerance;
}

std::uint64_t bits_of(long double x) {
    const auto d = static_cast<double>(x);
    std::uint64_t bits = 0;
    std::memcpy(&bits, &d, sizeof bits);
    return bits;
}

}  // namespace

SumCheck check_op(OpKind op, const OpValue& got, const OpExpected& expected) {
    const OpValue& want = expected.value;
    // The sign of a zero is part of max's, min's, absmax's and argmax's answer (+0 ranks
    // above -0); a sum of zeros may come out as either.
    const bool sign_of_zero = op == OpKind::Max || op == OpKind::Min || op == OpKind::AbsMax || op == OpKind::ArgMax;
    bool ok = false;
    if (op == OpKind::ArgMax) {
        ok = got.index == want.index && same_value(got.value, want.value, true);
    } else if (op == OpKind::MeanVar) {
        ok = got.count == want.count && within(got.value, want.value, expected.tolerance) &&
             within(got.variance, want.variance, expected.variance_tolerance);
    } else if (expected.exact) {
        ok = same_value(got.value, want.value, sign_of_zero);
    } else {
        ok = within(got.value, want.value, expected.tolerance);
    }
    SumCheck check;
    check.ok = ok;
    check.value = static_cast<double>(got.value);
    check.bits = bits_of(got.value) ^ (got.index * 0x9E3779B97F4A7C15ULL) ^ (got.count * 0xBF58476D1CE4E5B9ULL) ^
                 (bits_of(got.variance) >> 1);
    if (ok) {
        check.detail = expected.exact && op != OpKind::MeanVar ? "exact" : "within bound";
    } else {
        check.detail = "got " + describe(op, got) + ", expected " + describe(op, want);
        if (!expected.exact || op == OpKind::MeanVar) {
            check.detail += " within " + format_value(expected.tolerance);
            if (op == OpKind::MeanVar) check.detail += " (mean), " + format_value(expected.variance_tolerance) + " (variance)";
        }
    }
    return check;
}

std::string format_value(long double value) {
    if (is_nan(value)) return "nan";
    if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
    if (value == 0) return std::signbit(value) ? "-0" : "0";
    char text[64];
    if (value == std::trunc(value) && std::fabs(value) < 1e19L) {
        std::snprintf(text, sizeof text, "%.0Lf", value);
    } else {
        std::snprintf(text, sizeof text, "%.10Lg", value);
    }
    return text;
}

std::string describe(OpKind op, const OpValue& v) {
    switch (op) {
        case OpKind::ArgMax:
            return "argmax " + (v.index == kNoIndex ? std::string("none") : std::to_string(v.index)) + " (" +
                   format_value(v.value) + ")";
        case OpKind::MeanVar:
            return "mean " + format_value(v.value) + ", variance " + format_value(v.variance) + " (n = " +
                   std::to_string(v.count) + ")";
        default:
            return std::string(op_name(op)) + " " + format_value(v.value);
    }
}

}  // namespace ops
