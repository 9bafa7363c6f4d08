// reduce_ops' command line. Pure host code: a bad option is reported before any CUDA call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "op_types.h"
#include "options.h"  // UsageError, parse_count, kMaxElements

namespace ops {

struct OpsOptions {
    std::vector<OpKind> ops;      // in kAllOps order, no repeats
    std::vector<OpType> types;    // in kAllTypes order, no repeats
    std::vector<std::size_t> sizes = {std::size_t{1} << 26};
    int block = 256;
    int iters = 20;
    int warmup = 3;
    std::uint64_t seed = 2026;
    bool csv = false;
    bool nan_table = false;
    bool help = false;
};

// The block sizes the operator kernels are compiled for (each one is another instantiation
// of every operator on every type: fewer sizes, a shorter build).
inline constexpr int kOpBlocks[] = {128, 256, 512, 1024};

// Throws UsageError, whose message is one line, for anything it does not accept.
OpsOptions parse_ops_options(const std::vector<std::string>& args);
std::string ops_usage_text();
// "sum | max | min | absmax | argmax | sumsq | meanvar | all", from kAllOps: what --op takes.
std::string op_choices();

}  // namespace ops
