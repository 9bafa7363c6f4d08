// reduce_ops' output: one record per timed reduction, as a table or CSV. Pure host code.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace ops {

struct OpRecord {
    std::string op;     // "argmax"
    std::string type;   // "half"
    std::string impl;   // "ours", "cub", "every_lane" (argmax lane by lane) or "unfused" (sumsq: square to memory, then sum)
    std::string call;   // the kernel or library call: "reduce_single_pass<argmax, half>", "DeviceReduce::ArgMax"
    std::size_t n = 0;
    std::size_t bytes = 0;  // n x sizeof(element): the input, read once (the unfused path reads and writes more)
    int block = 0;          // threads per block; 0 where the library chooses
    int runs = 0;
    double median_ms = 0, min_ms = 0, max_ms = 0;
    double gbps = 0;                  // bytes / median time
    std::optional<double> pct_peak;   // of the theoretical peak
    std::optional<double> vs_cub;     // CUB's median time / this median time (> 1: faster than CUB)
    bool verified = false;
    int checked_runs = 0;
    int failed_runs = 0;
    std::string check;  // "exact", "within bound", or the first failure
    std::string device;
    std::optional<double> peak_gbps;
};

// One row per record: op, type, impl, call, median ms, GB/s, % peak, x CUB, check.
void print_op_table(std::ostream& out, const std::vector<OpRecord>& records);
void write_op_csv(std::ostream& out, const std::vector<OpRecord>& records, bool with_header = true);
// The CSV columns, in order.
const std::vector<std::string>& op_csv_columns();

}  // namespace ops
