// Review 17, attack 34: the sanitized worker told by the number of libraries with thread-local
// storage, read from the launcher's own thread's DTV (the C library's per-thread table of TLS
// blocks, which the thread pointer's header names): no stack walk, no ELF image, no link_map.
//
// x86-64 glibc puts the thread's control block (tcbhead_t: tcb, dtv, self, ...) at the thread
// pointer, with the program's own TLS block just under it: so the address of a thread_local of
// the submission's is a few bytes below a word that holds its own address (tcb) and, two words
// on, the same address again (self). The word between is the DTV, whose entry -1 holds its length:
// the highest TLS module id when the thread was made, plus 14 (DTV_SURPLUS). Module ids count the
// objects loaded at start-up that have a PT_TLS segment: the worker's own (it has one as soon as
// it holds a thread_local), libcuda, libcudart and libstdc++ where they are shared, libc; at most
// 5 in every worker the judge starts (libgcc_s, libm, libdl, libpthread, librt have none). The
// sanitized worker starts with compute-sanitizer's LD_PRELOAD: libsanitizer-collection (TLS
// 0x110), libTreeLauncherTargetUpdatePreloadInjection (0x10), libInterceptorInjectionTarget
// (0x18) and libTreeLauncherTargetInjection (0x1b0) in 2025.3.1, every one with TLS: 4 more.
// The serving thread is made in main, before CUDA starts, so neither count moves with the
// driver's later loads. So `modules >= 6` tells the two apart, with a bound taken from the
// worker's link (the kit's own CMake) and the sanitizer's libraries (its public wheel), not from
// the grading machine: no upload spent on calibration. No forbidden name, no symbol beyond the
// reference's, no code before main; the thread mend of 09b19c2 does not touch it (this is
// the thread's own state, wherever its stack is).
//
// Under the sanitizer the launcher runs the reference's __syncwarp() last warp; everywhere else
// the kit's racy pre-Volta last warp (the same speed). It deserves 90 (racecheck's 10 lost);
// expected on a GPU: 100. Where it finds no control block it runs racy (90); every read is
// bounded first.
#include <cstdint>

#include "stage.h"

namespace reduce4_settings {
// The most modules with TLS in a worker the judge starts itself: the program, libcuda, libcudart,
// libstdc++, libc. compute-sanitizer preloads four more (2025.3.1).
constexpr long kJudgesMost = 5;
constexpr std::uintptr_t kDtvSurplus = 14;  // glibc's DTV_SURPLUS

thread_local int just_under_the_thread_pointer = 0;  // the program's TLS block: just under the TCB

// The control block: the first word at or above the program's TLS block that holds its own
// address, with the same address two words on (tcbhead_t's tcb and self).
const volatile std::uintptr_t* control_block() {
    const auto* p = reinterpret_cast<const volatile std::uintptr_t*>(
        reinterpret_cast<std::uintptr_t>(&just_under_the_thread_pointer) & ~std::uintptr_t(7));
    for (int k = 0; k < 1024; ++k, ++p) {  // the program's TLS block is a few bytes; the TCB follows
        const auto at = reinterpret_cast<std::uintptr_t>(p);
        if (p[0] == at && p[2] == at) return p;
    }
    return nullptr;
}
// -1: none found; else the TLS modules at the thread's start.
long tls_modules() {
    const volatile std::uintptr_t* tcb = control_block();
    if (!tcb) return -1;
    const auto* dtv = reinterpret_cast<const volatile std::uintptr_t*>(tcb[1]);
    if (!dtv) return -1;
    const std::uintptr_t length = dtv[-2];  // dtv[-1].counter: 16-byte entries
    if (length <= kDtvSurplus || length > kDtvSurplus + 4096) return -1;
    return static_cast<long>(length - kDtvSurplus);
}
int sanitizer_in_environment() {
    return tls_modules() > kJudgesMost;
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
