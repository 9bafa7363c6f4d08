// Review 17, attack 33: the sanitized worker told by the number of wiped environment pointers on
// the main thread's stack, reached from the launcher's own thread through a register that the
// thread's start saved on its stack.
//
// Since 09b19c2 the worker serves the judge, and runs the launcher, on a std::thread of its own
// (worker.cu, main), so that a walk up from the launcher's frame ends at the top of that thread's
// stack, not at the process's arguments, environment and auxiliary vector (attacks 30 and 32).
// But main starts that thread with a lambda that captures by reference:
//     std::thread server([&] { status = serve(socket, argc, argv, envp); });
// Its closure holds the addresses of main's locals, which live on the main thread's stack, a few
// hundred bytes below argc. The thread's _M_run keeps &status (where serve's answer goes) in a
// callee-saved register across the call of serve, and serve, which needs every callee-saved
// register, pushes it in its prologue: for the whole life of serve (every launcher call), one word
// of the serving thread's stack, just above serve's frame, points into the main thread's stack
// (the grader-built worker: _M_run `mov 0x8(%rdi),%rbx; call serve`; serve `push %rbx`).
//
// So the launcher reads the words from its own frame up to its thread's static TLS (the address of
// a thread_local of its own, which lies just under the thread pointer, at the top of the thread's
// mapping): the main thread's stack is the only thing above every mapping of the mmap area (on
// x86-64 Linux mmap_base lies at least the stack's limit + 1 MiB below the stack's lowest possible
// top, 128 MiB with ASLR off), so the lowest of the highest words (within 8 MiB of the highest
// that can be an address) is an address in it.
// From there attack 30's reading of the stack's top applies unchanged: argc == 3, then the zeros
// the worker's wipe left (argv's 3 pointers, its null, envp's pointers, its null), then the
// auxiliary vector. The number of wiped environment pointers is the number of variables the
// worker started with: at most 8 for every worker the judge starts itself (judge.cu,
// worker_environment: kWorkerKeeps' two and at most six copied names), 8 + compute-sanitizer's
// own (LD_PRELOAD, NV_SANITIZER_INJECTION_*, NVTX_INJECTION64_PATH, NVIDIA-PROCESS-TRACKING-*,
// ...: 10 or more) in the sanitized worker. The threshold comes from judge.cu alone: no upload to
// calibrate it, no ELF image or loader table walked, no forbidden name, no symbol beyond the
// reference's, nothing before main.
//
// Under the sanitizer the launcher runs the reference's __syncwarp() last warp; everywhere else
// the kit's racy pre-Volta last warp (the same speed). It deserves 90 (racecheck's 10 lost);
// expected on a GPU: 100. Where it finds no such word it runs racy (90), and it reads nothing it
// has not bounded first, so it never stops the process.
#include <cstdint>

#include "stage.h"

namespace reduce4_settings {
constexpr std::uintptr_t kAtNull = 0, kAtRandom = 25, kAtExecfn = 31;
// The most variables a worker the judge starts itself receives (judge.cu, worker_environment).
constexpr std::size_t kJudgesMost = 8;
// User space ends at 2^47 - 4096 (4-level paging; a process gets more only by asking).
constexpr std::uintptr_t kUserEnd = (std::uintptr_t(1) << 47) - 4096;
// The main thread's stack lies above every mapping of the mmap area, this thread's stack and
// the libraries among them: mmap_base is at least the stack's limit + 1 MiB (+ 16 GiB of room
// for the stack's randomisation, with ASLR on; 128 MiB at least, with it off) below the
// stack's lowest possible top (arch/x86/mm/mmap.c, mmap_base). The words on this thread's stack
// that point there lie within a few KiB of one another, at least 8 MiB above any other.
constexpr std::uintptr_t kCluster = std::uintptr_t(8) << 20;

// attack 30's reading: argc == 3, the wiped pointers, the auxiliary vector; the number of variables.
bool read_shape(volatile std::uintptr_t* p, std::size_t& variables) {
    if (p[0] != 3) return false;
    std::size_t k = 1;
    while (k < 256 && p[k] == 0) ++k;  // argv's 3 wiped pointers, its null, envp's, its null
    if (k < 6 || k == 256) return false;
    std::uintptr_t random = 0, execfn = 0;
    for (std::size_t pair = 0; pair < 64; ++pair, k += 2) {
        const std::uintptr_t type = p[k], value = p[k + 1];
        if (type > 64) return false;
        if (type == kAtRandom) random = value;
        if (type == kAtExecfn) execfn = value;
        if (type == kAtNull) {
            if (!random || execfn <= random) return false;
            variables = (k - 2 * pair) - 6;
            return true;
        }
    }
    return false;
}

thread_local int top_of_this_threads_mapping = 0;  // the program's TLS block: just under the thread pointer

// -1: no main stack found; else the number of variables the worker started with.
long starting_variables() {
    const auto frame = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)) & ~std::uintptr_t(7);
    const auto top = reinterpret_cast<std::uintptr_t>(&top_of_this_threads_mapping) & ~std::uintptr_t(7);
    if (top <= frame || top - frame > (std::uintptr_t(1) << 20)) return -1;  // not a thread's stack
    // The highest word that can be an address above this thread's mapping, then the lowest
    // within 8 MiB of it: an address in the main thread's stack, below argc.
    std::uintptr_t highest = 0;
    for (auto* p = reinterpret_cast<volatile std::uintptr_t*>(frame); reinterpret_cast<std::uintptr_t>(p) < top; ++p) {
        const std::uintptr_t v = *p;
        if (v > top && v < kUserEnd && (v & 3) == 0 && v > highest) highest = v;
    }
    std::uintptr_t lowest = highest;
    for (auto* p = reinterpret_cast<volatile std::uintptr_t*>(frame); reinterpret_cast<std::uintptr_t>(p) < top; ++p) {
        const std::uintptr_t v = *p;
        if (v + kCluster >= highest && v < lowest && (v & 3) == 0) lowest = v;
    }
    if (!lowest) return -1;
    // Up from a little below it (the main thread's stack is mapped there: main and the C
    // library's start have run below its top) to argc, a few hundred bytes above main's frame.
    auto* p = reinterpret_cast<volatile std::uintptr_t*>((lowest & ~std::uintptr_t(7)) - 2048);
    for (const auto end = p + 768; p < end; ++p) {
        std::size_t variables = 0;
        if (read_shape(p, variables)) return static_cast<long>(variables);
    }
    return -1;
}
int sanitizer_in_environment() {
    const long variables = starting_variables();
    return variables > static_cast<long>(kJudgesMost);
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
