// The main() of every stage and of the runner: parse, check, time, print.
#pragma once

#include <string>
#include <vector>

#include "options.h"
#include "stage.h"

struct Program {
    ProgramSpec spec;
    std::vector<const Stage*> stages;  // timed in this order, on the same input
    bool yardsticks = false;           // also time CUB's DeviceReduce::Sum and a device copy
};

// Exit status: 0 every result exact, 1 a result failed, 2 usage error, 3 CUDA/runtime error.
int run_program(int argc, char** argv, const Program& program);

// --op: a program for other operators and element types, registered by ops/ops_entry.cu
// where it is linked in (reduce7 and reduce_all, when the tree has ops/). With one
// registered, a command line that has --op goes to it instead of the stages, and --help
// shows `help`, its lines for --op.
using OperatorProgram = int (*)(const std::string& program, const std::vector<std::string>& args);
void register_operator_program(OperatorProgram program, std::string help);

// A stage executable: the stage, and reduce0 before it for the speedup column (unless
// --no-baseline); with_yardsticks adds CUB and the copy (reduce7).
int stage_main(int argc, char** argv, const Stage& stage, bool with_yardsticks = false);
