// reduce7_cg: reduce7 (16-byte loads, 4 in flight, a fixed grid, the last-block finish)
// with cooperative_groups::reduce for the block's sum. What changes from reduce7 is one
// template argument of ops::reduce_op; how many lines each way costs is in reduce_op.cuh.
//
//   build/release/bin/reduce_all --type int     # reduce7, reduce7_cg, reduce7_cub and CUB in one table
#include "library_stage.cuh"

constexpr Stage reduce7_cg_stage =
    library_stage::make_stage<ops::CooperativeGroupsBlockReduce>("reduce7_cg", "cg_reduce_single_pass",
                                                                "reduce7 with cooperative_groups::reduce for the block's sum");
