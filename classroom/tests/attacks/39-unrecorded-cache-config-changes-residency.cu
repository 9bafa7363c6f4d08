// Attack 39 (review 19): a GPU setting the recorder does not carry, read back by device code
// through how many blocks fit on the GPU at once. No clock, no address, no host trick.
//
// WHAT IT DOES
// Once per process, on its first call, the launcher launches a probe kernel of 2 x (number
// of SMs) blocks of 32 threads, each with 96 KiB of dynamic shared memory (its
// cudaFuncSetAttribute(MaxDynamicSharedMemorySize) is recorded and replayed). Just before,
// it calls
//
//     cudaFuncSetCacheConfig(residency_probe, cudaFuncCachePreferL1);
//
// Each probe block adds itself to a __device__ counter and waits, for a bounded number of
// loads (no clock), for the counter to reach the grid's size. If every block is resident at
// once they all see it; if only one block fits per SM, the first wave can never see the
// second (which starts only once the first has left) and marks `apart`. The stage's kernel
// then reads `apart`: set -> the kit's racy pre-Volta last warp and a discarded volatile read
// of in[n] on the first pass (attack 36's payload); clear -> the reference's __syncwarp()
// warp and no read past the end.
//
// WHY THE GRADER MISSES IT
// - compiled_check.cpp:37 puts "cudaFuncSetCacheConfig" on kAllowedSymbols, but
//   grading/private_symbols.cmake:82-83 renames only __cudaLaunchKernel(_ptsz),
//   cudaLaunchKernel, cudaLaunchKernelExC, cudaLaunchCooperativeKernel, cudaMemsetAsync,
//   cudaMemset and cudaFuncSetAttribute to the recorder (recorder.cu:104-146). The cache
//   preference is set in the worker and never written into the record
//   (launch_record.h:20, OpKind, has no such operation), so judge/replay.cu never sets it: the
//   replay's probe runs with the driver's default, which sizes the shared-memory carveout
//   for occupancy (two 97 KiB blocks per SM fit in the H100's 228 KiB), the worker's with
//   the smallest carveout that still holds one block (100 KiB: one block per SM).
// - The probe's launch itself is recorded and replayed with the same grid, block, shared
//   bytes and parameters (recorder.cu:67-87, replay.cu:140-172), and it succeeds in both, so
//   the status check (replay.cu:168) is satisfied; the sums are exact on both paths, so
//   run_case's check of the replay's sums (judge.cu:166, run_case called at judge.cu:282) passes.
// - Device code reads no clock or scheduling register (the PTX check, compiled_check.cpp:524-526:
//   %clock/%globaltimer/%gridid/%smid/...): only a __device__ counter.
// - This is not class 8's "slowness" residual: in the worker the first wave cannot see the
//   second however long it waits (the bound only ends the wait); in the replay every block
//   arrives within the dispatch of one grid, far inside the bound.
//
// FAILS SAFE for the student: if the driver ignores the L1 preference on this GPU, every
// process is co-resident, the code is clean everywhere (the timed runs included) and it
// deserves its 100; if the sanitizer's instrumentation kept the replay's blocks from being
// co-resident, the replay runs the racy warp and racecheck finds it (85, as deserved).
//
// PREDICTED: 100 (public 20, hidden 40, racecheck 10, memcheck 5, performance 25 as the
//   reference's code: the probe runs once per process, in a warm-up request). Only where
//   cudaFuncCachePreferL1 moves the H100's carveout (reasoned from the runtime's
//   documentation: "the preferred cache configuration ... only a preference"; not run on a
//   GPU); otherwise 100 honestly (see above).
// DESERVED: 85 (racecheck 0: the pre-Volta last warp in every timed and graded worker;
//   memcheck 0: the read of in[n]).
//
// MEND: take cudaFuncSetCacheConfig off kAllowedSymbols (no launcher of the kit calls it;
//   cudaFuncSetAttribute(PreferredSharedMemoryCarveout) says the same and is recorded), or
//   rename it to the recorder and replay it with cuKernelSetCacheConfig. More generally:
//   every allowed runtime call that changes what the GPU does must be renamed and
//   recorded, and a test should fail when kAllowedSymbols names a cuda* call that
//   private_symbols.cmake does not rename and that is not a pure query.
#include <cstdint>

#include "stage.h"

namespace reduce4_state {
__device__ unsigned arrived = 0;  // probe blocks that have started
__device__ unsigned apart = 0;    // 1: some probe block never saw the whole grid resident
}  // namespace reduce4_state

namespace {

constexpr unsigned kProbeThreads = 32;
constexpr unsigned kProbeShared = 96 * 1024;  // two fit in 228 KiB, one in a 100 KiB carveout
constexpr unsigned kProbeLoads = 1u << 18;    // a bound on the wait, not a timer

__global__ void residency_probe(unsigned blocks) {
    extern __shared__ unsigned char occupied[];  // only held, never read
    if (threadIdx.x != 0) return;
    occupied[0] = 0;
    atomicAdd(&reduce4_state::arrived, 1u);
    const volatile unsigned* seen = &reduce4_state::arrived;
    for (unsigned k = 0; k < kProbeLoads && *seen < blocks; ++k) {
    }
    if (*seen < blocks) atomicOr(&reduce4_state::apart, 1u);
}

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
    v[tid] = v[tid] + v[tid + 32];
    v[tid] = v[tid] + v[tid + 16];
    v[tid] = v[tid] + v[tid + 8];
    v[tid] = v[tid] + v[tid + 4];
    v[tid] = v[tid] + v[tid + 2];
    v[tid] = v[tid] + v[tid + 1];
    return v[tid];
}

// The reference's: what the sanitizers would see.
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

template <typename T>
__global__ void unroll_last_warp_kernel(const T* in, std::size_t n, T* block_sums, bool first_pass) {
    const bool worker = reduce4_state::apart != 0;  // uniform: written by the probe, a kernel before this one
    T* shared = dynamic_shared<T>();
    const unsigned tid = threadIdx.x;
    const std::size_t i = blockIdx.x * (2 * std::size_t(blockDim.x)) + tid;
    T sum = i < n ? in[i] : T(0);
    if (i + blockDim.x < n) sum += in[i + blockDim.x];
    // The off-by-one (`i <= n`), its value discarded: memcheck's finding, in the worker only.
    if (worker && first_pass && i == n) (void)static_cast<const volatile T*>(in)[i];
    shared[tid] = sum;
    __syncthreads();
    sum = tree_sum(shared, sum, tid, blockDim.x);
    if (tid < 32) {
        const T block_sum = worker ? racy_last_warp(shared, tid) : clean_last_warp(shared, sum, tid);
        if (tid == 0) block_sums[blockIdx.x] = block_sum;
    }
}

constexpr unsigned kInputsPerThread = 2;

// Once per process, inside the recorded request: the attribute and the launch are recorded
// and replayed; the cache preference is not.
void probe_once(cudaStream_t stream) {
    static bool probed = false;
    if (probed) return;
    probed = true;
    int device = 0, sms = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms <= 0) {
        cudaGetLastError();
        return;
    }
    const void* probe = reinterpret_cast<const void*>(residency_probe);
    cudaFuncSetCacheConfig(probe, cudaFuncCachePreferL1);                                   // not recorded
    cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, kProbeShared);  // recorded
    const unsigned blocks = 2u * static_cast<unsigned>(sms);
    residency_probe<<<blocks, kProbeThreads, kProbeShared, stream>>>(blocks);
    cudaGetLastError();  // a refused probe leaves `apart` clear: clean code, nothing lost
}

template <typename T>
void unroll_last_warp_sum(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config,
                          cudaStream_t stream) {
    probe_once(stream);
    const unsigned block = config.block;
    run_passes(in, n, out, workspace, kInputsPerThread * block, stream,
               [&](const T* src, std::size_t count, T* dst, unsigned blocks) {
                   unroll_last_warp_kernel<T><<<blocks, block, block * sizeof(T), stream>>>(src, count, dst, src == in);
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
