// The input on the GPU: generated there, from the same formula as the host's reference.
//
// A 2^32-element input is 16 GB of float. Making it on the host and copying it over would
// cost seconds of one core's work and a 16 GB transfer before the first timed run; the
// GPU writes it in milliseconds. The expected sum does not come from the GPU's copy: the
// host evaluates the formula for every index itself (common/input.h), on all its cores,
// so a fault in the generator cannot hide a fault in a kernel, and the GPU tests check
// that the generated values equal the host's, element for element.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "device_buffer.h"
#include "input.h"
#include "memory_plan.h"

template <typename T>
struct DeviceInput {
    std::size_t n = 0;
    DeviceBuffer<T> values;
    ExpectedSum expected;
    double generate_ms = 0;   // the GPU's time to write the input (CUDA events)
    double reference_ms = 0;  // the host's time to compute the expected sum (wall clock)
    int reference_threads = 1;
};

// Writes elements [begin, begin + count) of the n-element input for this seed into
// `values` (values[0] is element `begin`): a shard of a larger input, or all of it.
template <typename T>
void generate_input_on_device(T* values, std::size_t begin, std::size_t count, std::size_t n, std::uint64_t seed,
                              InputData data, cudaStream_t stream);

// The whole input on the current device, and its expected sum from the host; the two run
// at the same time.
template <typename T>
DeviceInput<T> make_device_input(std::size_t n, std::uint64_t seed, InputData data = InputData::Integers);

// Free and total memory of the current device (cudaMemGetInfo).
struct DeviceMemory {
    std::size_t free_bytes = 0, total_bytes = 0;
};
DeviceMemory device_memory();

// Thrown when a plan does not fit; its message is the one line from memory_shortfall().
struct TooLargeError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
void require_device_memory(const MemoryPlan& plan, const std::string& what);
