// The operators and element types of reduce_ops, by name. Pure host code: the command
// line, the host references, the report and the tests share it, and none needs a GPU.
#pragma once

#include <cstddef>
#include <string_view>

namespace ops {

// What a reduction computes (operators.cuh, argmax.cuh and meanvar.cuh have the policy of each).
enum class OpKind {
    Sum,      // x0 + x1 + ...
    Max,      // the largest value; NaN if any is NaN
    Min,      // the smallest value; NaN if any is NaN
    AbsMax,   // the largest |x| (the infinity norm); NaN if any is NaN
    ArgMax,   // the index of the first largest value (of the first NaN if there is one)
    SumSq,    // x0^2 + x1^2 + ...: the squared L2 norm, in one pass
    MeanVar,  // the mean and the (population) variance, in one pass
};

// The element types, as stored in memory.
enum class OpType { Int32, Int64, Float32, Float64, Half, BFloat16 };

inline constexpr OpKind kAllOps[] = {OpKind::Sum,    OpKind::Max,   OpKind::Min,    OpKind::AbsMax,
                                     OpKind::ArgMax, OpKind::SumSq, OpKind::MeanVar};
inline constexpr OpType kAllTypes[] = {OpType::Int32,   OpType::Int64, OpType::Float32,
                                       OpType::Float64, OpType::Half,  OpType::BFloat16};

std::string_view op_name(OpKind op);          // "sum", "max", "min", "absmax", "argmax", "sumsq", "meanvar"
std::string_view op_type_name(OpType type);   // "int", "int64", "float", "double", "half", "bfloat16"

// Bytes per element: what a reduction reads, and the numerator of its GB/s.
constexpr std::size_t op_type_size(OpType type) {
    switch (type) {
        case OpType::Int32: case OpType::Float32: return 4;
        case OpType::Int64: case OpType::Float64: return 8;
        case OpType::Half: case OpType::BFloat16: return 2;
    }
    return 0;
}

constexpr bool is_floating(OpType type) { return type != OpType::Int32 && type != OpType::Int64; }

// The scalar type an operator computes in: its accumulator, or the value part of it
// (argmax: the value; meanvar: the mean and M2). operators.cuh chooses the types and
// checks them against this table at compile time, so the host's bounds use the same.
enum class AccType { Int32, Int64, UInt32, UInt64, Float32, Float64 };

constexpr AccType accumulator_of(OpKind op, OpType type) {
    // half and bfloat16 always widen to float: half's 11-bit significand stops counting at
    // 2048 (2048 + 1 rounds back to 2048), bfloat16's 8 bits at 256.
    const bool small_float = type == OpType::Half || type == OpType::BFloat16 || type == OpType::Float32;
    switch (op) {
        case OpKind::Sum:
        case OpKind::Max:
        case OpKind::Min:
        case OpKind::ArgMax:
            if (type == OpType::Int32) return AccType::Int32;
            if (type == OpType::Int64) return AccType::Int64;
            return small_float ? AccType::Float32 : AccType::Float64;
        case OpKind::AbsMax:  // |INT_MIN| = 2^31 does not fit in an int; it does in an unsigned
            if (type == OpType::Int32) return AccType::UInt32;
            if (type == OpType::Int64) return AccType::UInt64;
            return small_float ? AccType::Float32 : AccType::Float64;
        case OpKind::SumSq:  // squares never cancel: an int's sum of squares outgrows 32 bits fast
            if (type == OpType::Int32 || type == OpType::Int64) return AccType::Int64;
            return small_float ? AccType::Float32 : AccType::Float64;
        case OpKind::MeanVar:  // a mean is not an integer: integers go to double (int64's 2^40 need it)
            return small_float ? AccType::Float32 : AccType::Float64;
    }
    return AccType::Float64;
}

constexpr bool is_floating(AccType acc) { return acc == AccType::Float32 || acc == AccType::Float64; }

// Significand bits (floating point) or value bits (integers) of the accumulator: every
// integer up to 2^digits is exact in it.
constexpr int acc_digits(AccType acc) {
    switch (acc) {
        case AccType::Int32: return 31;
        case AccType::Int64: return 63;
        case AccType::UInt32: return 32;
        case AccType::UInt64: return 64;
        case AccType::Float32: return 24;
        case AccType::Float64: return 53;
    }
    return 0;
}

}  // namespace ops
