// ATTACK 01 (classroom/tests/attacks/README.md): racecheck points for a racy reduce4.
//
// The student's reduce4 is the classic pre-Volta code: the last warp with `volatile` and
// no __syncwarp() (what most slides and blog posts still show). It is the kit's own
// "racy" fixture: exact sums on the H100, fast enough (1.018x the reference), and racecheck
// finds the hazards: 90/100 deserved (results/grading/reduce4-racy.txt).
//
// The launcher swaps in the handed-out previous stage (reduce3: a __syncthreads() at every
// step, no hazard) in exactly one situation: the first launcher call of a process, for an
// int input of a size the sanitizer steps draw. judge.cu's sanitize() starts a fresh worker
// per tool and sends it ONE request (batch 1, repeats 1, int, n in [2^16 - 1000,
// 2^16 + 1000) for racecheck, [999000, 1001000) for memcheck); the correctness worker's
// first call is the public group's n = 0, every performance worker's first call has
// n = 2^26. So racecheck only ever sees reduce3, and everything that is timed or checked
// for correctness runs the racy reduce4.
//
// No clock, no forbidden name, no new symbol: a static counter is enough.

#include "legacy_last_warp.cuh"  // the pre-Volta last warp (this stage's own header)
#include "stage.h"

namespace {

template <typename T>
__device__ T tree_sum(T* shared, T sum, unsigned tid, unsigned block, unsigned stop) {
    for (unsigned s = block / 2; s > stop; s >>= 1) {
        if (tid < s) shared[tid] = sum = sum + shared[tid + s];
        __syncthreads();
    }
    return sum;
}

bool first_call_of_process() {
    static int calls = 0;  // one counter for every type
    return calls++ == 0;
}

// Is this the judge's sanitizer run? The first launcher call of the process, int, at a
// size the sanitizer steps draw (judge.cu, sanitize(): `pick % 2000` around 2^16 or 10^6).
template <typename T>
bool sanitizer_run(std::size_t n) {
    const bool first = first_call_of_process();
    const bool size = (n >= 64536 && n < 66536) || (n >= 999000 && n < 1001000);
    return first && size && std::is_same_v<T, int>;
}

}  // namespace

// RACY = true: the student's reduce4 (pre-Volta last warp); false: reduce3's full tree.
template <typename T, bool RACY>
__global__ void unroll_last_warp(const T* in, std::size_t n, T* block_sums) {
    T* shared = dynamic_shared<T>();
    const unsigned tid = threadIdx.x;
    const std::size_t i = blockIdx.x * (2 * std::size_t(blockDim.x)) + tid;
    T sum = i < n ? in[i] : T(0);
    if (i + blockDim.x < n) sum += in[i + blockDim.x];
    shared[tid] = sum;
    __syncthreads();
    if (RACY) {
        sum = tree_sum(shared, sum, tid, blockDim.x, 32);
        if (tid < 32) {
            const T block_sum = legacy_last_warp_sum<LastWarp::LegacyVolatile>(shared, tid);
            if (tid == 0) block_sums[blockIdx.x] = block_sum;
        }
    } else {
        sum = tree_sum(shared, sum, tid, blockDim.x, 0);
        if (tid == 0) block_sums[blockIdx.x] = sum;
    }
}

constexpr unsigned kInputsPerThread = 2;

template <typename T>
void unroll_last_warp_sum(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config,
                          cudaStream_t stream) {
    const unsigned block = config.block;
    const auto kernel = sanitizer_run<T>(n) ? unroll_last_warp<T, false> : unroll_last_warp<T, true>;
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
