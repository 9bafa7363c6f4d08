// reduce7_cub: reduce7 (16-byte loads, 4 in flight, a fixed grid, the last-block finish)
// with cub::BlockReduce for the block's sum. What changes from reduce7 is one template
// argument of ops::reduce_op; how many lines each way costs is in reduce_op.cuh.
//
//   build/release/bin/reduce_all --type int     # reduce7, reduce7_cg, reduce7_cub and CUB in one table
#include "library_stage.cuh"

constexpr Stage reduce7_cub_stage =
    library_stage::make_stage<ops::CubBlockReduce>("reduce7_cub", "cub_block_reduce_single_pass",
                                                  "reduce7 with cub::BlockReduce for the block's sum");
