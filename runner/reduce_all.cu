// reduce_all: every stage on the same input, next to CUB's DeviceReduce::Sum and a
// device-to-device copy, in one table; with --sweep, at every size from 2^FROM to 2^TO.
//
//   build/release/bin/reduce_all                        # n = 2^26 floats
//   build/release/bin/reduce_all --type int --n 2^28
//   build/release/bin/reduce_all --sweep 2^10:2^28 --csv > sweep.csv
//   build/release/bin/reduce_all --op argmax --type half   # another operator, beside CUB's
#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>

#include "stage_main.h"
#include "stages.h"
#ifdef REDUCTION_HAVE_LIBRARY_STAGES
#include "library_stages.h"  // ops/: reduce7_cg, reduce7_cub
#endif

// --op (another operator, or the sum over half, bfloat16 or int64) is run_program's: with
// ops/ in the tree, ops/ops_entry.cpp is linked in and hands such a command line to reduce_ops,
// reduce7's kernel for that operator beside CUB's, from the same bin/.
int main(int argc, char** argv) {
    // --list-stages: the lesson stages this build has (the reduceN folders CMake found),
    // one a line, for scripts; no GPU needed.
    for (int i = 1; i < argc; ++i) {
        if (std::string_view(argv[i]) != "--list-stages") continue;
        if (argc != 2) {
            std::fprintf(stderr, "reduce_all: --list-stages takes no other option\n");
            return 2;
        }
        for (const Stage* stage : all_stages()) std::printf("%s\n", stage->name);
        return 0;
    }
    Program program;
    program.stages = all_stages();
#ifdef REDUCTION_HAVE_LIBRARY_STAGES
    // reduce7's sum with a library's block reduction, timed after the stages on the same input.
    program.stages.push_back(&reduce7_cg_stage);
    program.stages.push_back(&reduce7_cub_stage);
#endif
    program.yardsticks = true;
    program.spec.name = "reduce_all";
    program.spec.summary = "every stage, CUB's DeviceReduce::Sum and a device copy, on the same input";
    // One --block for all: the sizes every stage supports.
    std::string narrower;  // the stages that narrow the range, for the error message
    for (const Stage* stage : program.stages) {
        program.spec.min_block = std::max(program.spec.min_block, stage->min_block);
        program.spec.max_block = std::min(program.spec.max_block, stage->max_block);
        if (stage->min_block > 32 || stage->max_block < 1024) {
            narrower += (narrower.empty() ? "" : ", ") + std::string(stage->name);
        }
    }
    program.spec.stage_variants = stage_variants(program.stages);  // each stage's own options
    program.spec.block_owner = narrower.empty() ? "every stage" : "every stage (" + narrower + " narrow the range)";
    program.spec.sweep = true;
    program.spec.more_options = "  --list-stages     alone: print the stages this build has, one a line, and exit (no GPU needed)\n";
    return run_program(argc, argv, program);
}
