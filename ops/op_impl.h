// One operator on one element type, behind plain function pointers: what reduce_ops and the
// tests call, without compiling a kernel themselves. The templates behind the pointers are
// in op_impl.cuh; one file per operator instantiates them (op_sum.cu, op_max.cu, ...), so
// the seven compile side by side.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "op_data.h"
#include "op_types.h"

namespace ops {

struct OpImpl {
    OpKind op;
    OpType type;
    const char* kernel;     // "reduce_single_pass<ArgMax<half>>"
    const char* cub_call;   // "DeviceReduce::ArgMax", "DeviceReduce::TransformReduce(square, plus)"
    std::size_t acc_bytes;  // the result at `out`: one accumulator
    // Ours: reduce_op<Op> (reduce_op.cuh), one launch; block 128, 256, 512 or 1024.
    std::size_t (*workspace_bytes)(std::size_t n, int block);
    void (*reduce)(const void* in, std::size_t n, void* out, void* workspace, int block, cudaStream_t stream);
    // CUB's DeviceReduce for the same result, in CUB's two phases: with temp == nullptr it
    // only sets temp_bytes.
    void (*cub_reduce)(void* temp, std::size_t& temp_bytes, const void* in, std::size_t n, void* out,
                       cudaStream_t stream);
    // The accumulator at `out`, copied to the host, as a result.
    OpValue (*read)(const void* acc);
    // sumsq only, else nullptr: the unfused way's first kernel, which writes every square to
    // `squares` (n accumulators); reducing them with op_impl(Sum, unfused_sum_type) is the second.
    void (*square)(const void* in, std::size_t n, void* squares, cudaStream_t stream);
    OpType unfused_sum_type;
    // argmax only, else nullptr: ours with every lane of every vector compared in turn
    // (ArgMaxEveryLane), the same kernel otherwise; same workspace as reduce.
    void (*reduce_every_lane)(const void* in, std::size_t n, void* out, void* workspace, int block,
                              cudaStream_t stream);
};

const OpImpl& op_impl(OpKind op, OpType type);

// Writes elements [0, n) of `data` as `type` to `values` (n elements of the type), on the GPU.
void generate_op_input(OpType type, void* values, std::size_t n, const OpData& data, cudaStream_t stream);

// The implementations of one operator for every type, in kAllTypes order (op_sum.cu, ...).
const OpImpl* sum_impls();
const OpImpl* max_impls();
const OpImpl* min_impls();
const OpImpl* absmax_impls();
const OpImpl* argmax_impls();
const OpImpl* sumsq_impls();
const OpImpl* meanvar_impls();

}  // namespace ops
