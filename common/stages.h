// The eight stages, each defined at the bottom of its own reduceN/kernel.cu.
#pragma once

#include "stage.h"

extern const Stage reduce0_stage;  // interleaved addressing, divergent branch (baseline)
extern const Stage reduce1_stage;  // interleaved addressing, strided index: no divergence
extern const Stage reduce2_stage;  // sequential addressing: no bank conflicts
extern const Stage reduce3_stage;  // first add during the global load
extern const Stage reduce4_stage;  // last warp unrolled, no barriers in it
extern const Stage reduce5_stage;  // block size as a template parameter, tree fully unrolled
extern const Stage reduce6_stage;  // many elements per thread, fixed grid
extern const Stage reduce7_stage;  // warp shuffles, 16-byte loads, single pass
