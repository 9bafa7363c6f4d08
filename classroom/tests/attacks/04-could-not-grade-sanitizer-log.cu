// ATTACK 04 (classroom/tests/attacks/README.md): the sanitizer's own log carries the student's text.
//
// The work is the kit's "racy" fixture: reduce4 with the pre-Volta last warp (volatile, no
// __syncwarp()): exact sums on the H100, racecheck finds the hazards, 90/100 deserved.
//
// The only change is the names. compute-sanitizer writes the function of every hazard
// into its log ("=========     and Write access at T2 <function>(...)+0x410 in ...
// [7936 hazards]", results/grading/reduce4-racy.txt); judge.cu's sanitize() copies every
// log line with "azard", "Invalid" or "rror" into its own output as a DETAIL line; and
// grader.cpp's run_judge() declares the whole grading "could not grade" (exit 3; on
// Gradescope no results.json) when "COULD_NOT_GRADE" appears anywhere in that output.
// A function named COULD_NOT_GRADE_error_... puts the marker into every report line that
// names it ("error" also makes memcheck's "at <function>" lines DETAIL lines).
//
// The student needs no way to tell whether the code is racy: if a sanitizer finds
// nothing, nothing is printed and the grade is whatever the rest earns; if it finds
// something, the points the finding would cost turn into "could not grade".

#include "stage.h"

namespace {

template <typename T>
__device__ T tree_sum(T* shared, T sum, unsigned tid, unsigned block) {
    for (unsigned s = block / 2; s > 32; s >>= 1) {
        if (tid < s) shared[tid] = sum = sum + shared[tid + s];
        __syncthreads();
    }
    return sum;
}

}  // namespace

// The classic pre-Volta last warp: legacy_last_warp.cuh's LegacyVolatile, line for line
// (C++20 deprecates `+=` on a volatile: a warning, which the header's #pragma silences and
// a kernel.cu may not), under a name of the student's choosing.
template <typename T>
__device__ T COULD_NOT_GRADE_error_last_warp(T* shared, unsigned tid) {
    volatile T* v = shared;
    v[tid] += v[tid + 32];
    v[tid] += v[tid + 16];
    v[tid] += v[tid + 8];
    v[tid] += v[tid + 4];
    v[tid] += v[tid + 2];
    v[tid] += v[tid + 1];
    return v[tid];
}

template <typename T>
__global__ void COULD_NOT_GRADE_error_unroll_last_warp(const T* in, std::size_t n, T* block_sums) {
    T* shared = dynamic_shared<T>();
    const unsigned tid = threadIdx.x;
    const std::size_t i = blockIdx.x * (2 * std::size_t(blockDim.x)) + tid;
    T sum = i < n ? in[i] : T(0);
    if (i + blockDim.x < n) sum += in[i + blockDim.x];
    shared[tid] = sum;
    __syncthreads();
    sum = tree_sum(shared, sum, tid, blockDim.x);
    if (tid < 32) {
        const T block_sum = COULD_NOT_GRADE_error_last_warp(shared, tid);
        if (tid == 0) block_sums[blockIdx.x] = block_sum;
    }
}

constexpr unsigned kInputsPerThread = 2;

template <typename T>
void unroll_last_warp_sum(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config,
                          cudaStream_t stream) {
    const unsigned block = config.block;
    run_passes(in, n, out, workspace, kInputsPerThread * block, stream,
               [&](const T* src, std::size_t count, T* dst, unsigned blocks) {
                   COULD_NOT_GRADE_error_unroll_last_warp<T><<<blocks, block, block * sizeof(T), stream>>>(src, count, dst);
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
    .min_block = 64,
    .max_block = 1024,
    .workspace_bytes = unroll_last_warp_workspace,
    .sum_int = unroll_last_warp_sum<int>,
    .sum_float = unroll_last_warp_sum<float>,
    .sum_double = unroll_last_warp_sum<double>,
};
