// ATTACK 02 (classroom/tests/attacks/README.md): memcheck points for code that reads out of bounds.
//
// The student's reduce4 is the reference's algorithm, except that every pass reads its
// input in whole 256-byte segments (an "optimization" gone wrong, or a tail bug the
// student cannot find): the loads run up to the next 256-byte boundary past the end of the input
// (up to 63 ints, 31 doubles too far) and the values past the end are thrown away. The
// sums are exact, and on the hardware the reads never fault (a cudaMalloc'd or VMM buffer
// starts on a 256-byte boundary, so the padding lies in a page that is mapped), but it is
// exactly what memcheck exists to find: "Invalid __global__ read ... bytes after the
// nearest allocation" on the exactly sized private copy (kCopyIn) that the judge uses for
// its memcheck run (and for the last pass, past the end of the workspace).
//
// memcheck deserves 0 here: 95/100.
//
// The launcher swaps in an exact pass (reads [0, n) and nothing more; the previous stage's
// loads, handed out in the tree) in one situation only: the first launcher call of the
// process, int, at a size the sanitizer steps draw. That is the judge's memcheck (and
// racecheck) run and nothing else (judge.cu, sanitize(): one request, batch 1, repeats 1;
// the correctness worker starts with n = 0, the performance workers with n = 2^26).

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

bool first_call_of_process() {
    static int calls = 0;
    return calls++ == 0;
}

template <typename T>
bool sanitizer_run(std::size_t n) {
    const bool first = first_call_of_process();
    const bool size = (n >= 64536 && n < 66536) || (n >= 999000 && n < 1001000);
    return first && size && std::is_same_v<T, int>;
}

// Elements from `in` to the first 256-byte boundary at or after in + n: what the
// "segment" loads may touch (n itself when the sanitizer is watching).
template <typename T>
std::size_t readable_count(const T* in, std::size_t n, bool exact) {
    if (exact || n == 0) return n;
    const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(in + n);
    const std::uintptr_t padded = (end + 255) & ~std::uintptr_t(255);
    return n + (padded - end) / sizeof(T);
}

}  // namespace

// Loads up to `readable`, adds only what lies below `n`.
template <typename T>
__global__ void unroll_last_warp(const T* in, std::size_t n, std::size_t readable, T* block_sums) {
    T* shared = dynamic_shared<T>();
    const unsigned tid = threadIdx.x;
    const std::size_t i = blockIdx.x * (2 * std::size_t(blockDim.x)) + tid;
    const std::size_t j = i + blockDim.x;
    T a = T(0), b = T(0);
    if (i < readable) a = in[i];  // whole segments: the tail of the last one is past the end
    if (j < readable) b = in[j];
    T sum = (i < n ? a : T(0)) + (j < n ? b : T(0));
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
    const bool exact = sanitizer_run<T>(n);
    run_passes(in, n, out, workspace, kInputsPerThread * block, stream,
               [&](const T* src, std::size_t count, T* dst, unsigned blocks) {
                   unroll_last_warp<T><<<blocks, block, block * sizeof(T), stream>>>(
                       src, count, readable_count(src, count, exact), dst);
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
