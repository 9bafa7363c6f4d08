// --running-sum shared: reduce3 with reduce2's tree, in which a thread that adds at step s
// reads its own slot, shared[tid], again, although it wrote that value itself one step
// before. Kept as a labelled variant so that docs/03-first-add.md can measure the first
// add during the load and the running sum in a register apart.
#pragma once

#include "stage.h"  // Variant (common/variant.h)

// Where the tree keeps a thread's running sum (reduce3's --running-sum).
enum class RunningSum {
    Register,  // the sum stays in a register; a step reads only shared[tid + s] (default)
    Shared,    // every step reads shared[tid] again, as reduce2's tree does (below)
};

template <typename T>
__device__ void shared_tree_sum(T* shared, unsigned tid, unsigned block) {
    for (unsigned s = block / 2; s > 0; s >>= 1) {
        if (tid < s) shared[tid] += shared[tid + s];
        __syncthreads();  // every add of this step lands before any thread reads in the next
    }
}

// --running-sum, reduce3's labelled variant (common/variant.h), read by kernel.cu's
// launcher: a result is labelled "running-sum=shared"; --variants times both.
constexpr std::string_view kRunningSumChoices[] = {"register", "shared"};  // in the order of enum RunningSum
constexpr Variant kRunningSum = {
    .name = "running-sum",
    .value_name = "R",
    .choices = kRunningSumChoices,
    .help = "register (default) | shared (each step reads shared[tid] again,\n"
            "as reduce2's tree does)",
};
constexpr Variant kVariants[] = {kRunningSum};
