// reduce7_cg and reduce7_cub: reduce7 (16-byte loads, 4 in flight, a fixed grid, the
// last-block finish) with a library's block reduction. What changes is one template
// argument of ops::reduce_op; how many lines each way costs is in reduce_op.cuh.
//
//   build/release/bin/reduce_all --type int     # reduce7, reduce7_cg, reduce7_cub and CUB in one table
#include "library_stages.h"

#include "reduce_op.cuh"

namespace {

template <typename BlockReduce, typename T>
void library_sum(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config, cudaStream_t stream) {
    // Every block size a stage offers, 32 to 1024 (the operator kernels of reduce_ops stop at 128).
    ops::reduce_op<ops::Sum<T>, BlockReduce, 32>(in, n, out, workspace, config.block, stream);
}

std::size_t library_workspace(std::size_t n, std::size_t value_size, const RunConfig& config) {
    // The counter, then one partial per whole tile of 4 x block 16-byte loads at most.
    return ops::kCounterBytes + ceil_div(n, 16 / value_size * ops::kLoadsInFlight * config.block) * value_size;
}

}  // namespace

const Stage reduce7_cg_stage = {
    .name = "reduce7_cg",
    .kernel = "cg_reduce_single_pass",
    .idea = "reduce7 with cooperative_groups::reduce for the block's sum",
    .min_block = 32,
    .max_block = 1024,
    .workspace_bytes = library_workspace,
    .sum_int = library_sum<ops::CooperativeGroupsBlockReduce, int>,
    .sum_float = library_sum<ops::CooperativeGroupsBlockReduce, float>,
    .sum_double = library_sum<ops::CooperativeGroupsBlockReduce, double>,
};

const Stage reduce7_cub_stage = {
    .name = "reduce7_cub",
    .kernel = "cub_block_reduce_single_pass",
    .idea = "reduce7 with cub::BlockReduce for the block's sum",
    .min_block = 32,
    .max_block = 1024,
    .workspace_bytes = library_workspace,
    .sum_int = library_sum<ops::CubBlockReduce, int>,
    .sum_float = library_sum<ops::CubBlockReduce, float>,
    .sum_double = library_sum<ops::CubBlockReduce, double>,
};
