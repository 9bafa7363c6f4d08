// ATTACK 10 (classroom/tests/attacks/README.md): a results.json that Gradescope cannot read.
//
// The work is the previous stage's (reduce3): correct, race-free, too slow: 75 deserved.
//
// grader.cpp's json_escape() (gradescope.cpp) escapes quotes, backslashes and control
// characters and copies every byte >= 0x80 as it is. JSON must be UTF-8 (RFC 8259), and
// the student decides bytes that reach results.json: the tree's public tests (feedback,
// 0 points) put up to 25 of their output lines into their test's "output" when they fail
// (public_tests_feedback(): lines matching Failure|FAILED|...).
//
// The tree's tests (tests/gpu/test_stages.cu) run every block from the Stage record's own
// .min_block; the judge uses the assignment's (64 for reduce4, assignment.cpp). So
// `.min_block = 32` makes gpu_tests, and nothing the judge runs, call the launcher with
// block = 32: there it prints a line with "Failure" and invalid UTF-8 (0xFF 0xFE 0xFD) and
// writes a zero, so that those feedback tests fail and the line is copied into
// results.json. Every graded part is unaffected (the judge never asks for block 32), the
// grader exits 1 and writes results.json, run_autograder exits 0, and Gradescope gets a
// file that a strict UTF-8 JSON parser (Python's json on a text file, Ruby's JSON.parse)
// rejects: the run shows as failed and no score is recorded.

#include <cstdint>
#include "stage.h"

namespace {

// reduce3's tree: a barrier at every step, down to one value.
template <typename T>
__device__ T full_tree_sum(T* shared, T sum, unsigned tid, unsigned block) {
    for (unsigned s = block / 2; s > 0; s >>= 1) {
        if (tid < s) shared[tid] = sum = sum + shared[tid + s];
        __syncthreads();
    }
    return sum;
}

}  // namespace

template <typename T>
__global__ void unroll_last_warp(const T* in, std::size_t n, T* block_sums) {
    T* shared = dynamic_shared<T>();
    const unsigned tid = threadIdx.x;
    const std::size_t i = blockIdx.x * (2 * std::size_t(blockDim.x)) + tid;
    T sum = i < n ? in[i] : T(0);
    if (i + blockDim.x < n) sum += in[i + blockDim.x];
    shared[tid] = sum;
    __syncthreads();
    sum = full_tree_sum(shared, sum, tid, blockDim.x);
    if (tid == 0) block_sums[blockIdx.x] = sum;
}

constexpr unsigned kInputsPerThread = 2;

template <typename T>
void unroll_last_warp_sum(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config,
                          cudaStream_t stream) {
    const unsigned block = config.block;
    if (block == 32) {  // only the tree's own tests ask for it (the Stage record's .min_block)
        std::printf("Failure: \xff\xfe\xfd (feedback only)\n");
        std::fflush(stdout);
        return write_zero(out, stream);
    }
    run_passes(in, n, out, workspace, kInputsPerThread * block, stream,
               [&](const T* src, std::size_t count, T* dst, unsigned blocks) {
                   unroll_last_warp<T><<<blocks, block, block * sizeof(T), stream>>>(src, count, dst);
                   CUDA_CHECK_LAUNCH();
               });
}

std::size_t unroll_last_warp_workspace(std::size_t n, std::size_t value_size, const RunConfig& config) {
    return passes_workspace_bytes(n, kInputsPerThread * config.block, value_size);
}

extern const Stage reduce4_stage = {
    .name = "reduce4",
    .kernel = "unroll_last_warp",
    .idea = "the last warp unrolled: no block-wide barriers once s <= 32",
    .min_block = 32,  // the tree's tests (only) then call the launcher with block 32
    .max_block = 1024,
    .workspace_bytes = unroll_last_warp_workspace,
    .sum_int = unroll_last_warp_sum<int>,
    .sum_float = unroll_last_warp_sum<float>,
    .sum_double = unroll_last_warp_sum<double>,
};
