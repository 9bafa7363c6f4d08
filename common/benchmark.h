// Measure one kernel on one input: check it, time it, turn the times into a Record.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "device_buffer.h"
#include "device_info.h"
#include "input.h"
#include "options.h"
#include "report.h"
#include "stage.h"
#include "timing.h"

// The input on the device, and what its sum must be, from the host (input.h).
template <typename T>
struct DeviceInput {
    std::size_t n = 0;
    DeviceBuffer<T> values;
    ExpectedSum expected;
};

template <typename T>
DeviceInput<T> upload_input(std::size_t n, std::uint64_t seed, InputData data = InputData::Integers);

struct BenchContext {
    const DeviceInfo& device;
    const Options& options;
    L2Flusher& flusher;
    cudaStream_t stream;
};

RunConfig run_config(const Options& options);

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

// Fill the relative columns (% copy, x CUB, x reduce0) of records measured at one size.
void compare_records(std::vector<Record>& records);
