// The stages, each defined at the bottom of its own reduceN/kernel.cu.
#pragma once

#include <string_view>
#include <vector>

#include "stage.h"

// The baseline every run times beside a stage (common/stage_main.cu). The other stages'
// records are declared where they are used: each stage's main.cu, and the list CMake
// writes from the folders it finds (common/stage_list.cu.in), so a new reduceN folder
// needs no line here.
extern const Stage reduce0_stage;  // interleaved addressing, divergent branch

// The stages this build has, in order: every reduceN folder present (a classroom tree
// has only the stages up to its assignment). Written by CMake (common/stage_list.cu.in).
const std::vector<const Stage*>& all_stages();
// The stage of that name, or nullptr.
const Stage* find_stage(std::string_view name);
