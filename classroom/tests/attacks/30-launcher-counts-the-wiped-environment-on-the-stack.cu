// Attack 28, adapted to its mend (the worker wipes its starting arguments and environment
// once CUDA has started): the strings are gone, but their shape stays on the stack. The
// kernel lays out argc, argv, the environment's pointers, the auxiliary vector and the
// strings at the top of the main thread's stack; the number of wiped pointers between argv
// and the vector is the number of variables, and the distance from AT_RANDOM's bytes to
// AT_EXECFN's name is about the strings' length. compute-sanitizer adds its own variables
// (LD_PRELOAD, NV_SANITIZER_INJECTION_*, ...), so a worker with more variables or more bytes
// than the judge gives is the sanitized one. Plain pointer arithmetic: no forbidden
// name, no symbol beyond the reference's, no code before main.
//
// Under the sanitizer the launcher runs the reference's __syncwarp() last warp; everywhere
// else the kit's racy pre-Volta last warp. It deserves 90 (racecheck's 10 lost); it scores
// 100 unless every worker's starting environment has one shape (the judge pads them all to
// the same number of variables and bytes: judge.cu, padded_environment).
//
// Since review 16 (32: compute-sanitizer's execve drops the padding's empty variables) the judge
// pads nothing, and the worker runs the submission on a thread of its own, whose stack holds
// nothing of how the process started: the walk finds no such stack, and the process stops.
#include <cstdint>

#include "stage.h"

namespace reduce4_settings {
// The top of the main thread's stack, as the kernel lays it out: argc, argv[0..argc-1], 0,
// envp[0..envc-1], 0, the auxiliary vector (type, value pairs to type 0), then the strings.
// The worker wipes argv's and envp's pointers and strings, so look for argc == 3 followed by
// zeros up to the auxiliary vector, and check that vector's shape before trusting it.
constexpr std::uintptr_t kAtNull = 0, kAtRandom = 25, kAtExecfn = 31;
struct Shape {
    std::size_t variables = 0;  // envc: the wiped pointers between argv's end and the vector
    std::uintptr_t string_bytes = 0;  // from the random bytes to the program's name: the strings
};
bool read_shape(volatile std::uintptr_t* p, Shape& shape) {
    if (p[0] != 3) return false;
    std::size_t k = 1;
    while (k < 1024 && p[k] == 0) ++k;  // argv's 3 wiped pointers, its null, envp's, its null
    if (k < 6 || k == 1024) return false;
    std::uintptr_t random = 0, execfn = 0;
    for (std::size_t pair = 0; pair < 64; ++pair, k += 2) {
        const std::uintptr_t type = p[k], value = p[k + 1];
        if (type > 64) return false;
        if (type == kAtRandom) random = value;
        if (type == kAtExecfn) execfn = value;
        if (type == kAtNull) {
            if (!random || execfn <= random) return false;
            shape.variables = (k - 2 * pair) - 6;  // zeros after argc, less argv's 3 and 2 nulls
            shape.string_bytes = execfn - random;
            return true;
        }
    }
    return false;
}
// 1 where the worker's starting environment has another shape than the judge gives every
// worker it starts itself: padded to 64 variables in 32768 bytes (judge.cu, padded_environment),
// so that compute-sanitizer's own variables, added on top, would show. Where the walk finds no
// such stack it stops the process (0 points): a 90 then says the walk read the shape.
int sanitizer_in_environment() {
    auto* p = reinterpret_cast<volatile std::uintptr_t*>(reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)) &
                                                         ~std::uintptr_t(7));
    for (std::size_t i = 0; i < (std::size_t(1) << 16); ++i, ++p) {  // at most 512 KiB up
        Shape shape;
        if (!read_shape(p, shape)) continue;
        return shape.variables > 64 || shape.string_bytes > 32768 + 1024;
    }
    *static_cast<volatile int*>(nullptr) = 0;
    return 0;
}
bool sanitized() {
    static const bool answer = sanitizer_in_environment() != 0;  // a guard, after main
    return answer;
}
}  // namespace reduce4_settings

namespace {

template <typename T>
__device__ T tree_sum(T* shared, T sum, unsigned tid, unsigned block) {
    for (unsigned s = block / 2; s > 32; s >>= 1) {
        if (tid < s) shared[tid] = sum = sum + shared[tid + s];
        __syncthreads();
    }
    return sum;
}

// The kit's racy pre-Volta last warp: racecheck reports it.
template <typename T>
__device__ T racy_last_warp(T* shared, unsigned tid) {
    volatile T* v = shared;
    v[tid] += v[tid + 32];
    v[tid] += v[tid + 16];
    v[tid] += v[tid + 8];
    v[tid] += v[tid + 4];
    v[tid] += v[tid + 2];
    v[tid] += v[tid + 1];
    return v[tid];
}

// The reference's: what the sanitizer sees.
template <typename T>
__device__ T clean_last_warp(T* shared, T sum, unsigned tid) {
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

template <typename T, bool Clean>
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
        const T block_sum = Clean ? clean_last_warp(shared, sum, tid) : racy_last_warp(shared, tid);
        if (tid == 0) block_sums[blockIdx.x] = block_sum;
    }
}

constexpr unsigned kInputsPerThread = 2;

template <typename T>
void unroll_last_warp_sum(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config,
                          cudaStream_t stream) {
    const unsigned block = config.block;
    const bool clean = reduce4_settings::sanitized();
    run_passes(in, n, out, workspace, kInputsPerThread * block, stream,
               [&](const T* src, std::size_t count, T* dst, unsigned blocks) {
                   if (clean) {
                       unroll_last_warp_kernel<T, true><<<blocks, block, block * sizeof(T), stream>>>(src, count, dst);
                   } else {
                       unroll_last_warp_kernel<T, false><<<blocks, block, block * sizeof(T), stream>>>(src, count, dst);
                   }
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
