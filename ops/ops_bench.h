// reduce_ops' harness: inputs on the device, a reduction run once (the tests, the NaN table)
// or timed with common/timing.h's time_runs (L2 flushed before each run, the result
// poisoned before each run, every run's result checked), and the whole program.
#pragma once

#include <cuda_runtime.h>

#include <optional>
#include <ostream>
#include <vector>

#include "device_buffer.h"
#include "device_info.h"
#include "memory_plan.h"
#include "op_data.h"
#include "op_impl.h"
#include "ops_options.h"
#include "ops_report.h"
#include "timing.h"

namespace ops {

// Elements [0, n) of `data` as `type`, made on the GPU, `offset` elements past a 256-byte
// aligned address (the misaligned-pointer tests).
struct DeviceOpInput {
    OpType type = OpType::Float32;
    std::size_t n = 0;
    DeviceBuffer<unsigned char> storage;
    void* values = nullptr;
};
DeviceOpInput make_op_input(OpType type, std::size_t n, const OpData& data, std::size_t offset = 0,
                            cudaStream_t stream = nullptr);

// Runs ours `times` times on one workspace (a launch must leave its workspace ready for
// the next: the last block's counter) and reads each result back; nullopt where a run
// wrote nothing (the poison written before it is intact).
std::vector<std::optional<OpValue>> run_ours(const OpImpl& impl, const void* values, std::size_t n, int block,
                                             int times = 1);
std::optional<OpValue> run_cub(const OpImpl& impl, const void* values, std::size_t n);
// sumsq: squares to memory, then our sum of them.
std::optional<OpValue> run_unfused(const OpImpl& impl, const void* values, std::size_t n, int block);

// What timing (op, type) on n elements needs on the GPU at its fullest.
MemoryPlan op_memory_plan(OpKind op, OpType type, std::size_t n, int block, std::size_t flush_bytes);

struct OpsContext {
    const DeviceInfo& device;
    L2Flusher& flusher;
    cudaStream_t stream;
    int iters;
    int warmup;
    int block;
};

// Ours, CUB, (argmax) ours lane by lane and (sumsq) the unfused way, timed on one input; x CUB filled in.
std::vector<OpRecord> bench_op(OpKind op, OpType type, std::size_t n, std::uint64_t seed, OpsContext& context);

// The program after its command line: the tables (or CSV); returns 0 when every result
// was verified, else 1. No GPU, a CUDA error or a run too large throw (CudaError, TooLargeError).
int run_ops(const OpsOptions& options);

// --nan-table: max and argmax of small float inputs with NaN, infinities and zeros, from
// ours, host folds with fmaxf and std::max, and CUB. Every entry is computed, on the GPU
// where it says so.
void print_nan_table(std::ostream& out);

}  // namespace ops
