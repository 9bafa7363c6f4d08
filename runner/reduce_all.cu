// reduce_all: all eight stages on the same input, next to CUB's DeviceReduce::Sum and a
// device-to-device copy, in one table; with --sweep, at every size from 2^FROM to 2^TO.
//
//   build/release/bin/reduce_all                        # n = 2^26 floats
//   build/release/bin/reduce_all --type int --n 2^28
//   build/release/bin/reduce_all --sweep 2^10:2^28 --csv > sweep.csv
#include <algorithm>
#include <string>

#include "stage_main.h"
#include "stages.h"

int main(int argc, char** argv) {
    Program program;
    program.stages = {&reduce0_stage, &reduce1_stage, &reduce2_stage, &reduce3_stage,
                      &reduce4_stage, &reduce5_stage, &reduce6_stage, &reduce7_stage};
    program.yardsticks = true;
    program.spec.name = "reduce_all";
    program.spec.summary = "the eight stages, CUB's DeviceReduce::Sum and a device copy, on the same input";
    // One --block for all: the sizes every stage supports.
    for (const Stage* stage : program.stages) {
        program.spec.min_block = std::max(program.spec.min_block, stage->min_block);
        program.spec.max_block = std::min(program.spec.max_block, stage->max_block);
    }
    std::string narrower;  // the stages that narrow the range, for the error message
    for (const Stage* stage : program.stages) {
        if (stage->min_block > 32 || stage->max_block < 1024) {
            narrower += (narrower.empty() ? "" : ", ") + std::string(stage->name);
        }
    }
    program.spec.block_owner = "every stage (" + narrower + " narrow the range)";
    program.spec.vector_and_finish = true;  // for reduce7
    program.spec.last_warp = true;          // for reduce4
    program.spec.sweep = true;
    return run_program(argc, argv, program);
}
