// Shared by the GPU tests: skip when there is no GPU, and inputs whose exact sum is known.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "device_buffer.h"
#include "input.h"
#include "stage.h"
#include "verify.h"

// A choice on the command line as part of a test's name, which takes letters, digits and
// '_' only: "one-shot" -> "one_shot".
inline std::string name_part(std::string_view choice) {
    std::string part(choice);
    std::replace(part.begin(), part.end(), '-', '_');
    return part;
}

// Empty when a CUDA device is usable, else why not (no driver, no device, ...).
const std::string& gpu_unavailable_reason();

#define SKIP_WITHOUT_GPU()                                                          \
    do {                                                                            \
        if (!gpu_unavailable_reason().empty()) GTEST_SKIP() << gpu_unavailable_reason(); \
    } while (0)

// Empty when this GPU has Programmatic Dependent Launch (compute capability 9.0 and newer),
// else why not (reduce7's --finish pdl).
const std::string& pdl_unavailable_reason();

// The sizes every stage is tested at: around warp and block edges, an odd size past a
// pass boundary (65537), and sizes that need two and three passes.
const std::vector<std::size_t>& test_sizes();

// The test input for (type, n) on the device, `offset` elements past a 256-byte aligned
// address (reduce7's misaligned-pointer tests); cached, since many tests share it.
template <typename T>
struct TestInput {
    const T* values;      // n values
    long long exact_sum;  // their exact sum
};
template <typename T>
TestInput<T> test_input(std::size_t n, std::size_t offset = 0);

// Runs the stage's launcher twice on the same workspace (the second run checks that the
// launcher leaves its workspace ready for the next, as reduce7's counter must) and
// returns the check of each run.
// `stream`: the default stream unless given (reduce7's PDL path is tested in a stream of its own).
template <typename T>
std::vector<SumCheck> run_stage_twice(const Stage& stage, const RunConfig& config, const TestInput<T>& input,
                                      std::size_t n, cudaStream_t stream = nullptr);

