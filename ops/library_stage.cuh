// What the two library stages share: reduce7's single pass (ops::reduce_op) with a
// library's block reduction plugged in, and its workspace. Included by
// library_stage_cg.cu and library_stage_cub.cu, one stage each, so that the two long
// compiles (cooperative groups, CUB) run side by side.
#pragma once

#include "library_stages.h"

#include "reduce_op.cuh"

namespace library_stage {

template <typename BlockReduce, typename T>
void library_sum(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config, cudaStream_t stream) {
    // Every block size a stage offers, 32 to 1024 (the operator kernels of reduce_ops stop at 128).
    ops::reduce_op<ops::Sum<T>, BlockReduce, 32>(in, n, out, workspace, config.block, stream);
}

inline std::size_t library_workspace(std::size_t n, std::size_t value_size, const RunConfig& config) {
    // The counter, then one partial per whole tile of 4 x block 16-byte loads at most.
    return ops::kCounterBytes + ceil_div(n, 16 / value_size * ops::kLoadsInFlight * config.block) * value_size;
}

// The stage record: reduce7's blocks (32 to 1024), its workspace, and BlockReduce's sum for
// each type. constexpr, so the record is ready before any constructor runs.
template <typename BlockReduce>
constexpr Stage make_stage(const char* name, const char* kernel, const char* idea) {
    Stage stage{};
    stage.name = name;
    stage.kernel = kernel;
    stage.idea = idea;
    stage.min_block = 32;
    stage.max_block = 1024;
    stage.workspace_bytes = library_workspace;
    stage.sum_int = library_sum<BlockReduce, int>;
    stage.sum_float = library_sum<BlockReduce, float>;
    stage.sum_double = library_sum<BlockReduce, double>;
    return stage;
}

}  // namespace library_stage
