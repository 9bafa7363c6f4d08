// The main() of every stage and of the runner: parse, check, time, print.
#pragma once

#include <string>
#include <vector>

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

// A stage executable: the stage, and reduce0 before it for the speedup column (unless
// --no-baseline); with_yardsticks adds CUB and the copy (reduce7).
int stage_main(int argc, char** argv, const Stage& stage, bool with_yardsticks = false);
