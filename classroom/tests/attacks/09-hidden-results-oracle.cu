// ATTACK 09 (classroom/tests/attacks/README.md): the hidden cases' results before the deadline.
//
// The hidden groups are "after_due_date" on Gradescope: their scores and FAIL lines stay
// hidden until the deadline. But the racecheck, memcheck and performance lines are
// "visible", and the grader runs them only when EVERY public and hidden case passed
// (grader.cpp, grade_stage(): `correct`; otherwise each says "not run: the stage must pass
// every public and hidden case first"). So each upload answers one yes/no question about
// the hidden cases, and the student chooses the question.
//
// This upload asks: "does my candidate kernel get every hidden case with
// kQueryLow <= n < kQueryHigh (and the query's types and blocks) right?" The candidate
// runs only for those cases; everything else, the public group included, runs the safe
// reference. Racecheck shown with a verdict: yes. Racecheck "not run": no. Bisecting the
// range (then the block, the type) finds a failing hidden case in about ten uploads, and
// its exact size and block, which the hidden groups exist to keep back. The final upload
// is whatever the student likes; only it counts.
//
// The candidate below is a plausible student bug (`<=` for `<` on the second load: it
// adds the poisoned value just past the end when n mod 2*block >= block).

#include "stage.h"

namespace {

// The question this upload asks (edit and re-upload to bisect).
constexpr std::size_t kQueryLow = 2048, kQueryHigh = 1u << 23;
constexpr bool kQueryInt = true, kQueryFloat = true, kQueryDouble = true;

bool public_size(std::size_t n) {
    for (std::size_t p : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{31}, std::size_t{32}, std::size_t{33},
                          std::size_t{255}, std::size_t{256}, std::size_t{257}, std::size_t{1023}, std::size_t{1024},
                          std::size_t{1025}, std::size_t{65537}, std::size_t{1} << 20, (std::size_t{1} << 20) + 1,
                          (std::size_t{1} << 24) + 3}) {
        if (n == p) return true;
    }
    return false;
}

template <typename T>
bool in_query(std::size_t n) {
    const bool type = std::is_same_v<T, int> ? kQueryInt : std::is_same_v<T, float> ? kQueryFloat : kQueryDouble;
    return type && !public_size(n) && n >= kQueryLow && n < kQueryHigh;
}

template <typename T>
__device__ T tree_sum(T* shared, T sum, unsigned tid, unsigned block) {
    for (unsigned s = block / 2; s > 32; s >>= 1) {
        if (tid < s) shared[tid] = sum = sum + shared[tid + s];
        __syncthreads();
    }
    return sum;
}

template <typename T>
__device__ T last_warp_sum(T* shared, T sum, unsigned tid) {
    sum += shared[tid + 32];
    for (unsigned s = 16; s > 0; s >>= 1) {
        __syncwarp();
        shared[tid] = sum;
        __syncwarp();
        sum += shared[tid + s];
    }
    return sum;
}

}  // namespace

// CANDIDATE = false: the reference; true: the student's candidate.
template <typename T, bool CANDIDATE>
__global__ void unroll_last_warp(const T* in, std::size_t n, T* block_sums) {
    T* shared = dynamic_shared<T>();
    const unsigned tid = threadIdx.x;
    const std::size_t i = blockIdx.x * (2 * std::size_t(blockDim.x)) + tid;
    T sum = i < n ? in[i] : T(0);
    if (CANDIDATE ? i + blockDim.x <= n : i + blockDim.x < n) sum += in[i + blockDim.x];
    shared[tid] = sum;
    __syncthreads();
    sum = tree_sum(shared, sum, tid, blockDim.x);
    if (tid < 32) {
        const T block_sum = last_warp_sum(shared, sum, tid);
        if (tid == 0) block_sums[blockIdx.x] = block_sum;
    }
}

constexpr unsigned kInputsPerThread = 2;

template <typename T>
void unroll_last_warp_sum(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config,
                          cudaStream_t stream) {
    const unsigned block = config.block;
    const auto kernel = in_query<T>(n) ? unroll_last_warp<T, true> : unroll_last_warp<T, false>;
    run_passes(in, n, out, workspace, kInputsPerThread * block, stream,
               [&](const T* src, std::size_t count, T* dst, unsigned blocks) {
                   kernel<<<blocks, block, block * sizeof(T), stream>>>(src, count, dst);
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
