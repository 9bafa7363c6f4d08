// The inputs of reduce_ops, and what each reduction of them must give.
//
// As in common/input.h, element i is a pure function of (seed, i): the GPU writes the
// input where it is reduced (op_input.cu), and the host computes the expected result from
// the same formula, on all its cores, without looking at the GPU's copy (op_data.cpp).
//
// The values are nonzero integers in [-magnitude, magnitude] with random signs: exact in
// every element type at the magnitudes op_magnitude() picks, so that most results can be
// checked bit for bit, and one element dropped or counted twice changes them. The tests'
// "special" data plant up to four values on top (NaN, +-infinity, +-0, a new largest or
// smallest value) at chosen positions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "input.h"
#include "op_types.h"
#include "verify.h"

namespace ops {

enum class Special : std::uint8_t {
    NaN,
    PlusInf,
    MinusInf,
    Largest,   // magnitude + 1: larger than every other value (plant it twice for a tie)
    Smallest,  // -(magnitude + 1)
    PlusZero,
    MinusZero,
};

struct Planted {
    std::uint64_t index;
    Special value;
};

constexpr int kMaxPlanted = 4;

struct OpData {
    std::uint64_t seed = 2026;
    std::uint64_t magnitude = 8;  // |value| <= magnitude
    bool all_negative = false;    // every value negative (what max's identity must survive)
    int planted = 0;
    Planted plants[kMaxPlanted] = {};
};

// Element i's integer (ignoring plants): a nonzero integer in [-magnitude, magnitude], its
// sign the hash's lowest bit, as input_value() in common/input.h.
INPUT_HOST_DEVICE inline long long op_integer(const OpData& data, std::uint64_t i) {
    const std::uint64_t z = input_hash(data.seed, i);
    const std::uint64_t size = data.magnitude <= 1 ? 1 : 1 + (z >> 1) % data.magnitude;
    const bool negative = data.all_negative || (z & 1) == 0;
    return negative ? -static_cast<long long>(size) : static_cast<long long>(size);
}

// The plant at index i, or nullptr.
INPUT_HOST_DEVICE inline const Planted* planted_at(const OpData& data, std::uint64_t i) {
    for (int p = 0; p < data.planted; ++p) {
        if (data.plants[p].index == i) return &data.plants[p];
    }
    return nullptr;
}

// ---------------------------------------------------------------- choosing the data
// The magnitude for (op, type, n): the largest, up to a cap per type, at which the
// result stays exact in the accumulator (op_data.cpp explains each choice).
std::uint64_t op_magnitude(OpKind op, OpType type, std::size_t n);
// The data reduce_ops and the tests use for (op, type, n): nothing planted.
OpData op_data(OpKind op, OpType type, std::size_t n, std::uint64_t seed);
// Plants `value` at `index`. Throws std::invalid_argument for a value the type cannot hold
// (NaN, infinities or -0 in an integer type), for a fifth plant, or for a second plant at one index.
void plant(OpData& data, OpType type, std::uint64_t index, Special value);
// What element i is, exactly (long double holds every value of every type here).
long double op_element_value(const OpData& data, std::uint64_t i);

// ---------------------------------------------------------------- results
// A reduction's result, whatever the operator, as the host reads it.
struct OpValue {
    long double value = 0;     // sum, max, min, absmax, sumsq; argmax: the value found; meanvar: the mean
    std::uint64_t index = 0;   // argmax
    std::uint64_t count = 0;   // meanvar
    long double variance = 0;  // meanvar: M2 / count (NaN for no elements)
};

// What the result must be, and how closely.
struct OpExpected {
    OpValue value;               // the exact result (meanvar: to long double precision)
    bool exact = true;           // compare exactly; otherwise within the tolerances
    long double tolerance = 0;   // the largest |got - value| accepted (meanvar: for the mean)
    long double variance_tolerance = 0;  // meanvar
};

// The expected result of reducing elements [0, n) of `data` as `type`, from the formula
// alone. `sms`, the GPU's multiprocessor count, bounds how long a chain of rounded
// operations any reduction forms (op_data.cpp), where the check needs a tolerance.
OpExpected host_reference(OpKind op, OpType type, std::size_t n, const OpData& data, int sms);

// The result against the expectation: "exact", "within bound", or what is wrong. `bits`
// is a hash of the result, to count distinct results over runs.
SumCheck check_op(OpKind op, const OpValue& got, const OpExpected& expected);

// "nan", "inf", "-inf", "-0", "7", "0.1000000015": integers in full, other values to 10 digits.
std::string format_value(long double value);
// "max 7", "argmax 12 (7)", "mean 0.25, variance 21 (n = 33)"
std::string describe(OpKind op, const OpValue& value);

}  // namespace ops
