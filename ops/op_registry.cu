// The type-erased entry points: which OpImpl serves (op, type), and the input generator.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cuda/std/limits>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "cuda_check.h"
#include "op_impl.h"

namespace ops {

const OpImpl& op_impl(OpKind op, OpType type) {
    const OpImpl* family = nullptr;
    switch (op) {
        case OpKind::Sum: family = sum_impls(); break;
        case OpKind::Max: family = max_impls(); break;
        case OpKind::Min: family = min_impls(); break;
        case OpKind::AbsMax: family = absmax_impls(); break;
        case OpKind::ArgMax: family = argmax_impls(); break;
        case OpKind::SumSq: family = sumsq_impls(); break;
        case OpKind::MeanVar: family = meanvar_impls(); break;
    }
    for (std::size_t t = 0; family && t < std::size(kAllTypes); ++t) {
        if (kAllTypes[t] == type) return family[t];
    }
    throw std::invalid_argument("no implementation of " + std::string(op_name(op)) + " for " +
                                std::string(op_type_name(type)));
}

namespace {

// A value of the data (an integer, or a planted special) as the element type. Every one
// is exact in the type: op_magnitude() and plant() see to that.
template <typename In>
__device__ In to_element(double value) {
    if constexpr (std::is_same_v<In, __half>) return __double2half(value);
    else if constexpr (std::is_same_v<In, __nv_bfloat16>) return __double2bfloat16(value);
    else return static_cast<In>(value);
}

__device__ double special_value(Special special, std::uint64_t magnitude) {
    const double largest = static_cast<double>(magnitude + 1);
    switch (special) {
        case Special::NaN: return cuda::std::numeric_limits<double>::quiet_NaN();
        case Special::PlusInf: return cuda::std::numeric_limits<double>::infinity();
        case Special::MinusInf: return -cuda::std::numeric_limits<double>::infinity();
        case Special::Largest: return largest;
        case Special::Smallest: return -largest;
        case Special::PlusZero: return 0.0;
        case Special::MinusZero: return -0.0;
    }
    return 0.0;
}

template <typename In>
__global__ void generate_op_elements(In* values, std::size_t n, OpData data) {
    for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < n;
         k += std::size_t(gridDim.x) * blockDim.x) {
        const Planted* planted = planted_at(data, k);
        if constexpr (std::is_integral_v<In>) {  // integers: no NaN, infinity or -0 (plant() refuses them)
            values[k] = static_cast<In>(planted ? static_cast<long long>(special_value(planted->value, data.magnitude))
                                                : op_integer(data, k));
        } else {  // |integer| <= 2^40: exact in double, and from there in In
            values[k] = to_element<In>(planted ? special_value(planted->value, data.magnitude)
                                               : static_cast<double>(op_integer(data, k)));
        }
    }
}

template <typename In>
void generate(void* values, std::size_t n, const OpData& data, cudaStream_t stream) {
    if (n == 0) return;
    const auto blocks = static_cast<unsigned>(std::min<std::size_t>((n + 255) / 256, 65536));
    generate_op_elements<<<blocks, 256, 0, stream>>>(static_cast<In*>(values), n, data);
    CUDA_CHECK_LAUNCH();
}

}  // namespace

void generate_op_input(OpType type, void* values, std::size_t n, const OpData& data, cudaStream_t stream) {
    switch (type) {
        case OpType::Int32: return generate<int>(values, n, data, stream);
        case OpType::Int64: return generate<long long>(values, n, data, stream);
        case OpType::Float32: return generate<float>(values, n, data, stream);
        case OpType::Float64: return generate<double>(values, n, data, stream);
        case OpType::Half: return generate<__half>(values, n, data, stream);
        case OpType::BFloat16: return generate<__nv_bfloat16>(values, n, data, stream);
    }
}

}  // namespace ops
