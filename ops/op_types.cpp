#include "op_types.h"

namespace ops {

std::string_view op_name(OpKind op) {
    switch (op) {
        case OpKind::Sum: return "sum";
        case OpKind::Max: return "max";
        case OpKind::Min: return "min";
        case OpKind::AbsMax: return "absmax";
        case OpKind::ArgMax: return "argmax";
        case OpKind::SumSq: return "sumsq";
        case OpKind::MeanVar: return "meanvar";
    }
    return "?";
}

std::string_view op_type_name(OpType type) {
    switch (type) {
        case OpType::Int32: return "int";
        case OpType::Int64: return "int64";
        case OpType::Float32: return "float";
        case OpType::Float64: return "double";
        case OpType::Half: return "half";
        case OpType::BFloat16: return "bfloat16";
    }
    return "?";
}

}  // namespace ops
