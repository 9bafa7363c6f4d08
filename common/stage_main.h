// The main() of every stage and of the runner: parse, check, time, print.
#pragma once

#include <cstdio>
#include <exception>
#include <new>
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "cuda_check.h"
#include "device_info.h"
#include "device_input.h"  // TooLargeError
#include "memory_plan.h"
#include "operator_program.h"  // --op
#include "options.h"
#include "stage.h"

struct Program {
    ProgramSpec spec;
    std::vector<const Stage*> stages;  // timed in this order, on the same input
    bool yardsticks = false;           // also time CUB's DeviceReduce::Sum and a device copy
};

// Exit status: 0 every result exact, 1 a result failed, 2 usage error, 3 CUDA/runtime error.
int run_program(int argc, char** argv, const Program& program);

// The configurations one stage is timed with: the command line's, or with --variants one
// per combination of the labelled variants the stage declares that `device` can run.
std::vector<RunConfig> stage_configs(const Stage& stage, const Options& options, const DeviceInfo& device);

// The sizes a run times: every 2^K of --sweep, or --n.
std::vector<std::size_t> run_sizes(const Options& options);

// What timing `kernels` on n values of T needs on the GPU at its fullest: the input, the
// largest workspace (each kernel frees its own before the next allocates), the L2 flush
// buffer, and with the yardsticks a copy of the input.
template <typename T>
MemoryPlan stage_memory_plan(const std::vector<std::pair<const Stage*, RunConfig>>& kernels, std::size_t n,
                             std::size_t flush_bytes) {
    MemoryPlan plan;
    plan.add("input", n * sizeof(T));
    std::size_t workspace = 0;
    for (const auto& [stage, config] : kernels) workspace = std::max(workspace, stage->workspace_bytes(n, sizeof(T), config));
    plan.add("workspace", workspace);
    plan.add("L2 flush buffer", flush_bytes);
    return plan;
}

// Runs `body` (which returns the exit status) and turns what it throws into one line on
// stderr, "NAME: CUDA error: ...", and exit status 3: the ending every program shares.
template <typename Body>
int run_reporting_errors(const std::string& name, Body&& body) {
    try {
        return body();
    } catch (const TooLargeError& e) {
        std::fprintf(stderr, "%s: too large for this GPU: %s\n", name.c_str(), e.what());
    } catch (const CudaError& e) {
        std::fprintf(stderr, "%s: CUDA error: %s\n", name.c_str(), e.what());
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "%s: out of host memory\n", name.c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: error: %s\n", name.c_str(), e.what());
    }
    return 3;
}

// A stage executable: the stage, and reduce0 before it for the speedup column (unless
// --no-baseline); with_yardsticks adds CUB and the copy (reduce7).
int stage_main(int argc, char** argv, const Stage& stage, bool with_yardsticks = false);
