// reduce7's sum the library way: the same kernel (ops/reduce_op.cuh), with the block's sum
// done by cooperative groups or by CUB's BlockReduce instead of shuffles written out.
// reduce_all times both after the eight stages, on the same input, beside reduce7 and CUB.
#pragma once

#include "stage.h"

extern const Stage reduce7_cg_stage;   // cooperative_groups::reduce on 32-thread tiles
extern const Stage reduce7_cub_stage;  // cub::BlockReduce
