// The eight stages, each defined at the bottom of its own reduceN/kernel.cu.
#pragma once

#include <string_view>
#include <vector>

#include "stage.h"

extern const Stage reduce0_stage;  // interleaved addressing, divergent branch (baseline)
extern const Stage reduce1_stage;  // interleaved addressing, strided index: no divergence
extern const Stage reduce2_stage;  // sequential addressing: no bank conflicts
extern const Stage reduce3_stage;  // first add during the global load
extern const Stage reduce4_stage;  // last warp unrolled, no barriers in it
extern const Stage reduce5_stage;  // block size as a template parameter, tree fully unrolled
extern const Stage reduce6_stage;  // many elements per thread, fixed grid
extern const Stage reduce7_stage;  // warp shuffles, 16-byte loads, single pass

// The stages this build has, in order: every reduceN folder present (a classroom tree
// has only the stages up to its assignment). Written by CMake (common/stage_list.cu.in).
const std::vector<const Stage*>& all_stages();
// The stage of that name, or nullptr.
const Stage* find_stage(std::string_view name);
