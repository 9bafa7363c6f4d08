// ATTACK 03 (classroom/tests/attacks/README.md): "could not grade" instead of a lost performance part.
//
// The work is the previous stage's (reduce3: the first add during the load, then a tree
// with a __syncthreads() at every step, the last warp included): correct, race-free and
// too slow, so it deserves 75/100 (the kit's own "previous-stage" fixture).
//
// The launcher times its own kernels with CUDA events (cudaEventCreate/Record/
// ElapsedTime: allowed names, allowed symbols; no synchronization: it reads the events of
// an earlier call once they are complete). At the judge's timed size (int, n = 2^26) it
// compares one reduction's time with the GPU's theoretical bandwidth; when it is too slow
// to earn the performance points (the H100's reference reads at about 62% of the peak,
// the threshold 1.10x is about 56%), it throws an exception whose text contains the
// judge's marker COULD_NOT_GRADE. The worker sends that text back (worker.cu, Reply.text),
// the judge prints it in "PERF submission FAILED the launcher failed: ...", and
// grader.cpp's run_judge() sets infrastructure_failed on finding "COULD_NOT_GRADE"
// anywhere in the judge's output: exit 3, and on Gradescope no results.json at all.
// A fast enough submission never throws and keeps its 100.

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

// The launcher's own stopwatch: a pair of events around one call's kernels, read at a
// later call once the GPU has passed them (cudaEventElapsedTime says "not ready" before).
struct Stopwatch {
    cudaEvent_t start = nullptr, stop = nullptr;
    bool pending = false;
};

// A reduction of 2^26 ints slower than this (ms) will not earn the performance points:
// 57% of the theoretical bandwidth, from the device's own attributes.
double too_slow_ms(std::size_t bytes) {
    int device = 0, clock_khz = 0, bus_bits = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device);
    cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device);
    const double peak = clock_khz * 1e3 * 2.0 * bus_bits / 8.0;  // bytes per second
    return peak > 0 ? bytes / peak * 1e3 / 0.57 : 1e30;
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
    auto launch_all = [&] {
        run_passes(in, n, out, workspace, kInputsPerThread * block, stream,
                   [&](const T* src, std::size_t count, T* dst, unsigned blocks) {
                       unroll_last_warp<T><<<blocks, block, block * sizeof(T), stream>>>(src, count, dst);
                       CUDA_CHECK_LAUNCH();
                   });
    };
    const bool timed_size = std::is_same_v<T, int> && n == (std::size_t{1} << 26);
    if (!timed_size) return launch_all();
    static Stopwatch watch;
    if (!watch.start) {
        cudaEventCreate(&watch.start);
        cudaEventCreate(&watch.stop);
    }
    if (watch.pending) {
        float ms = 0;
        const cudaError_t read = cudaEventElapsedTime(&ms, watch.start, watch.stop);
        cudaGetLastError();  // "not ready" is no error of the launch's
        if (read == cudaSuccess) {
            watch.pending = false;
            if (ms > too_slow_ms(n * sizeof(T))) {
                // Worded as the judge's own infrastructure failures are.
                throw std::runtime_error("COULD_NOT_GRADE cudaMemcpy(expected.data(), expected_d, batch * sizeof(int), "
                                         "cudaMemcpyDeviceToHost): uncorrectable ECC error encountered");
            }
        }
    }
    static int timed_calls = 0;  // the first call loads the kernels (lazy loading): not timed
    if (!watch.pending && ++timed_calls > 1) {
        cudaEventRecord(watch.start, stream);
        launch_all();
        cudaEventRecord(watch.stop, stream);
        watch.pending = true;
        return;
    }
    launch_all();
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
