// Measure one kernel on one input: check it, time it, turn the times into a Record.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "device_input.h"
#include "device_info.h"
#include "input.h"
#include "options.h"
#include "report.h"
#include "stage.h"
#include "timing.h"

struct BenchContext {
    const DeviceInfo& device;
    const Options& options;
    L2Flusher& flusher;
    cudaStream_t stream;
};

// The stage's run with the command line's block (or the stage's default_block) and variants.
RunConfig run_config(const Stage& stage, const Options& options);

// A stage's launcher, timed from its first kernel to its last.
template <typename T>
Record bench_stage(const Stage& stage, const RunConfig& config, const DeviceInput<T>& input, BenchContext& context);

// The yardsticks: CUB's DeviceReduce::Sum, and a device-to-device copy of the input. The
// copy's GB/s counts bytes read + bytes written: what a kernel that reads and writes gets
// on this GPU. It is not a ceiling for a kernel that only reads (docs/00-overview.md).
template <typename T>
Record bench_cub(const DeviceInput<T>& input, BenchContext& context);
template <typename T>
Record bench_copy(const DeviceInput<T>& input, BenchContext& context);

// Which CUB this build compiled against, "CCCL 3.0.1"; every CUB row's label names it.
std::string cub_version();
// CCCL 3.1 and newer: DeviceReduce::Sum with no determinism required, a single pass that
// adds the tiles' sums with atomics. bench_cub_not_guaranteed times it (and throws, with
// one line, where this CUB lacks it).
bool cub_has_not_guaranteed();
template <typename T>
Record bench_cub_not_guaranteed(const DeviceInput<T>& input, BenchContext& context);

// Fill the relative columns (% copy, x CUB, x reduce0) of records measured at one size.
void compare_records(std::vector<Record>& records);
