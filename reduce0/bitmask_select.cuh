// --select bitmask: reduce0's tree with the test (tid & (2s - 1)) == 0 in place of
// tid % (2s) == 0. Kept as a labelled variant so that docs/01-divergence.md can measure
// reduce0's two costs apart: both tests pick the same threads (2s is a power of two, so
// tid is a multiple of 2s exactly when its low bits below 2s are zero), so the warps
// have the same partly active lanes; but the mask is one AND, where % by a run-time value
// is a division of many instructions.
#pragma once

#include "stage.h"  // Variant (common/variant.h)

// How the tree picks the threads that add at step s (reduce0's --select).
enum class Select {
    Modulo,   // tid % (2s) == 0: the classic code, kernel.cu's tree_sum
    Bitmask,  // (tid & (2s - 1)) == 0: the same test without a division, below
};

template <typename T>
__device__ void bitmask_tree_sum(T* shared, unsigned tid, unsigned block) {
    for (unsigned s = 1; s < block; s *= 2) {
        if ((tid & (2 * s - 1)) == 0) shared[tid] += shared[tid + s];
        __syncthreads();  // every add of this step lands before any thread reads in the next
    }
}

// --select, reduce0's labelled variant (common/variant.h), read by kernel.cu's launcher: a
// result is labelled "select=bitmask"; --variants times both tests.
constexpr std::string_view kSelectChoices[] = {"modulo", "bitmask"};  // in the order of enum Select
constexpr Variant kSelect = {
    .name = "select",
    .value_name = "S",
    .choices = kSelectChoices,
    .help = "modulo (default, tid % (2s) == 0) | bitmask ((tid & (2s - 1)) == 0):\n"
            "the same threads add; bitmask measures what the run-time % costs",
};
constexpr Variant kVariants[] = {kSelect};
