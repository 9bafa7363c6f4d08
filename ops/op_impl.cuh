// The templates behind OpImpl (op_impl.h), for one operator policy: our launcher, CUB's
// DeviceReduce call for the same result, the unfused sum of squares, and reading a result.
// Included only by the per-operator files (op_sum.cu, ...), which instantiate them.
#pragma once

#include <cub/device/device_reduce.cuh>
#include <cuda/functional>
#include <cuda/std/functional>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "argmax.cuh"
#include "meanvar.cuh"
#include "op_impl.h"
#include "reduce_op.cuh"

namespace ops {

// ---------------------------------------------------------------- the result, on the host
template <typename T>
OpValue to_op_value(const T& acc) {
    return {.value = static_cast<long double>(acc)};
}
template <typename V>
OpValue to_op_value(const ValueIndex<V>& acc) {
    return {.value = static_cast<long double>(acc.value), .index = acc.index};
}
template <typename F>
OpValue to_op_value(const Moments<F>& acc) {
    const long double variance = acc.count ? static_cast<long double>(acc.m2) / acc.count
                                           : std::numeric_limits<long double>::quiet_NaN();
    return {.value = acc.mean, .count = acc.count, .variance = variance};
}

// ---------------------------------------------------------------- CUB's way
// Op::transform as a function object: CUB's TransformReduce applies it on load, as our
// kernel does. (The index is not needed: argmax uses CUB's own ArgMax.)
template <typename Op>
struct Transform {
    __host__ __device__ typename Op::Acc operator()(const typename Op::In& x) const { return Op::transform(x, 0); }
};

// The DeviceReduce call that computes what Op computes. CUB's own Max, Min and ArgMax
// use their own comparisons, cuda::maximum (a < b ? b : a) and cub::ArgMax: with NaN in
// the input their results differ from ours (reduce_ops --nan-table shows how).
template <typename Op>
cudaError_t cub_device_reduce(void* temp, std::size_t& temp_bytes, const typename Op::In* in, std::size_t n,
                              typename Op::Acc* out, cudaStream_t stream) {
    using In = typename Op::In;
    using Acc = typename Op::Acc;
    const auto items = static_cast<long long>(n);  // 64-bit offsets: inputs past 2^31 elements
    if constexpr (Op::kind == OpKind::Sum && std::is_same_v<In, Acc>) {
        return cub::DeviceReduce::Sum(temp, temp_bytes, in, out, items, stream);
    } else if constexpr (Op::kind == OpKind::Sum || Op::kind == OpKind::SumSq) {  // half -> float; x -> x*x
        return cub::DeviceReduce::TransformReduce(temp, temp_bytes, in, out, items, cuda::std::plus<Acc>(),
                                                  Transform<Op>(), Acc(0), stream);
    } else if constexpr (Op::kind == OpKind::Max) {
        return cub::DeviceReduce::Max(temp, temp_bytes, in, out, items, stream);
    } else if constexpr (Op::kind == OpKind::Min) {
        return cub::DeviceReduce::Min(temp, temp_bytes, in, out, items, stream);
    } else if constexpr (Op::kind == OpKind::AbsMax) {
        return cub::DeviceReduce::TransformReduce(temp, temp_bytes, in, out, items, cuda::maximum<Acc>(),
                                                  Transform<Op>(), Acc(0), stream);
    } else if constexpr (Op::kind == OpKind::ArgMax) {
        // The current interface: the value and the index to two outputs (the one that wrote
        // a cub::KeyValuePair is deprecated). Ours hold both in one ValueIndex.
        return cub::DeviceReduce::ArgMax(temp, temp_bytes, in, &out->value, &out->index, items, stream);
    } else {  // meanvar: our Moments and Chan's merge, as CUB's transform and reduction operator
        return cub::DeviceReduce::TransformReduce(temp, temp_bytes, in, out, items, Combine<Op>(), Transform<Op>(),
                                                  Op::identity(), stream);
    }
}

template <typename Op>
const char* cub_call_name() {
    switch (Op::kind) {
        case OpKind::Sum:
            return std::is_same_v<typename Op::In, typename Op::Acc> ? "DeviceReduce::Sum"
                                                                     : "DeviceReduce::TransformReduce(to float, plus)";
        case OpKind::Max: return "DeviceReduce::Max";
        case OpKind::Min: return "DeviceReduce::Min";
        case OpKind::AbsMax: return "DeviceReduce::TransformReduce(abs, maximum)";
        case OpKind::ArgMax: return "DeviceReduce::ArgMax";
        case OpKind::SumSq: return "DeviceReduce::TransformReduce(square, plus)";
        case OpKind::MeanVar: return "DeviceReduce::TransformReduce(to moments, Chan's merge)";
    }
    return "?";
}

// ---------------------------------------------------------------- the unfused sum of squares
// What fusing saves: a kernel that writes every x*x to memory, for a sum to read back.
// Read n x In, write n x Acc, read n x Acc: 3x the bytes when In is Acc, 5x for half
// (squares of half need float: 2047^2 is past half's largest value, 65504).
template <typename Op>
__global__ void square_elements(const typename Op::In* in, std::size_t n, typename Op::Acc* squares) {
    for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < n;
         k += std::size_t(gridDim.x) * blockDim.x) {
        squares[k] = Op::transform(in[k], k);
    }
}

// ---------------------------------------------------------------- behind the pointers
template <typename Op>
std::size_t workspace_bytes_of(std::size_t n, int block) {
    return reduce_op_workspace_bytes<Op>(n, block);
}

template <typename Op>
void reduce_of(const void* in, std::size_t n, void* out, void* workspace, int block, cudaStream_t stream) {
    reduce_op<Op>(static_cast<const typename Op::In*>(in), n, static_cast<typename Op::Acc*>(out), workspace, block,
                  stream);
}

template <typename Op>
void cub_reduce_of(void* temp, std::size_t& temp_bytes, const void* in, std::size_t n, void* out, cudaStream_t stream) {
    CUDA_CHECK(cub_device_reduce<Op>(temp, temp_bytes, static_cast<const typename Op::In*>(in), n,
                                     static_cast<typename Op::Acc*>(out), stream));
}

template <typename Op>
OpValue read_of(const void* bytes) {
    typename Op::Acc acc;
    std::memcpy(static_cast<void*>(&acc), bytes, sizeof acc);
    return to_op_value(acc);
}

template <typename Op>
void square_of(const void* in, std::size_t n, void* squares, cudaStream_t stream) {
    if (n == 0) return;
    const auto blocks = static_cast<unsigned>(std::min<std::size_t>(ceil_div(n, 256), 65536));
    square_elements<Op><<<blocks, 256, 0, stream>>>(static_cast<const typename Op::In*>(in), n,
                                                    static_cast<typename Op::Acc*>(squares));
    CUDA_CHECK_LAUNCH();
}

template <typename Acc>
constexpr OpType op_type_of_sum_over() {  // the sum that adds up the squares
    if constexpr (std::is_same_v<Acc, long long>) return OpType::Int64;
    else if constexpr (std::is_same_v<Acc, float>) return OpType::Float32;
    else return OpType::Float64;
}

template <template <typename> class OpT, typename In>
OpImpl make_impl() {
    using Op = OpT<In>;
    OpImpl impl{};
    impl.op = Op::kind;
    impl.type = op_type_of<In>();
    static const std::string kernel = "reduce_single_pass<" + std::string(op_name(impl.op)) + ", " +
                                      std::string(op_type_name(impl.type)) + ">";
    impl.kernel = kernel.c_str();
    impl.cub_call = cub_call_name<Op>();
    impl.acc_bytes = sizeof(typename Op::Acc);
    impl.workspace_bytes = workspace_bytes_of<Op>;
    impl.reduce = reduce_of<Op>;
    impl.cub_reduce = cub_reduce_of<Op>;
    impl.read = read_of<Op>;
    if constexpr (Op::kind == OpKind::SumSq) {
        impl.square = square_of<Op>;
        impl.unfused_sum_type = op_type_of_sum_over<typename Op::Acc>();
    }
    if constexpr (Op::kind == OpKind::ArgMax) impl.reduce_every_lane = reduce_of<ArgMaxEveryLane<In>>;
    return impl;
}

// One operator for every type, in kAllTypes order.
template <template <typename> class OpT>
std::array<OpImpl, 6> make_impls() {
    return {make_impl<OpT, int>(),    make_impl<OpT, long long>(), make_impl<OpT, float>(),
            make_impl<OpT, double>(), make_impl<OpT, __half>(),    make_impl<OpT, __nv_bfloat16>()};
}

}  // namespace ops
