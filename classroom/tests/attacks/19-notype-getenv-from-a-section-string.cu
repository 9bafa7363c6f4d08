// Review 10, attack 19: attack 18 again past its mend. The worker still exports a function
// named getenv, which the sanitizer's collection library (preloaded into the worker) asks whether
// to patch any kernel; but the name is now made by the assembler from a section attribute's
// string, and typed NOTYPE, which the compiled check's new rule does not read.
//
// The work is the kit's racy fixture (the pre-Volta `volatile` last warp without __syncwarp,
// attacks 15-18's kernel): it deserves 90 (racecheck's 10 lost).
//
// How the name is made: nvcc's own header (crt/host_defines.h, through <cuda_runtime.h>)
// defines __annotate__(a) as __attribute__((a)); GCC writes a section attribute's string into
// its assembly as it is, so "\n" in the string ends the .section line and what follows is an
// assembler directive of the submission's: `.globl getenv`, `.set getenv, <reduce4_setting's
// mangled name>`, `.type getenv, @notype`. Neither check reads names in string literals; the
// compiled check exempts __attribute__ in the preprocessed lines; its rule on defined symbols
// (review9's mend) refuses a versioned name, a FUNC or IFUNC with a C name and an OBJECT named
// with '_' or environ, and lets a NOTYPE through whatever its name. ld exports the executable's
// getenv (libstdc++.so.6 imports it and libc defines it) and ld.so binds the collection
// library's getenv@GLIBC_2.2.5 to it (a NOTYPE definition matches; an unversioned one in the
// executable satisfies a versioned reference). Every other name is answered by the C library's
// getenv, found by attack 08's walk (class 7, conceded), so the sanitizer, the driver and the
// C++ library see their environment unchanged. No exec, no process, no .preinit_array, no IFUNC.
#include <cstdint>
#include <cstdio>

#include "stage.h"

namespace walk {
struct Ehdr { unsigned char ident[16]; std::uint16_t type, machine; std::uint32_t version;
              std::uint64_t entry, phoff, shoff; std::uint32_t flags;
              std::uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx; };
struct Phdr { std::uint32_t type, flags; std::uint64_t offset, vaddr, paddr, filesz, memsz, align; };
struct Dyn { std::int64_t tag; std::uint64_t val; };
struct Sym { std::uint32_t name; unsigned char info, other; std::uint16_t shndx; std::uint64_t value, size; };
struct Map { std::uint64_t addr; const char* name; const Dyn* ld; const Map* next; const Map* prev; };
struct Debug { int version; const Map* map; };

inline const Ehdr* own_header() {
    std::uintptr_t page = reinterpret_cast<std::uintptr_t>(&own_header) & ~std::uintptr_t(4095);
    for (int k = 0; k < (1 << 17); ++k, page -= 4096) {
        const Ehdr* h = reinterpret_cast<const Ehdr*>(page);
        if (h->ident[0] == 0x7f && h->ident[1] == 'E' && h->ident[2] == 'L' && h->ident[3] == 'F' &&
            h->machine == 62 && (h->type == 2 || h->type == 3)) {
            return h;
        }
    }
    return nullptr;
}

inline std::uint64_t dyn_value(const Dyn* d, std::int64_t tag, std::uint64_t base) {
    for (; d->tag != 0; ++d) {
        if (d->tag == tag) return d->val < base ? d->val + base : d->val;
    }
    return 0;
}

inline bool same(const char* a, const char* b) {
    for (; *a && *a == *b; ++a, ++b) {
    }
    return *a == *b;
}

inline void* lookup(const Map* m, const char* name) {
    const std::uint64_t base = m->addr;
    const Sym* symtab = reinterpret_cast<const Sym*>(dyn_value(m->ld, 6, base));
    const char* strtab = reinterpret_cast<const char*>(dyn_value(m->ld, 5, base));
    const std::uint32_t* gnu = reinterpret_cast<const std::uint32_t*>(dyn_value(m->ld, 0x6ffffef5, base));
    if (!symtab || !strtab || !gnu) return nullptr;
    const std::uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom_size = gnu[2];
    const std::uint32_t* buckets = gnu + 4 + 2 * bloom_size;
    const std::uint32_t* chain = buckets + nbuckets;
    std::uint32_t h = 5381;
    for (const char* c = name; *c; ++c) h = h * 33 + static_cast<unsigned char>(*c);
    std::uint32_t i = buckets[h % nbuckets];
    if (i < symoffset) return nullptr;
    for (;; ++i) {
        const std::uint32_t h2 = chain[i - symoffset];
        const Sym& s = symtab[i];
        if ((h | 1) == (h2 | 1) && s.shndx != 0 && s.value != 0 && same(strtab + s.name, name)) {
            return reinterpret_cast<void*>(base + s.value);
        }
        if (h2 & 1) return nullptr;
    }
}

inline bool contains(const char* text, const char* part) {
    for (; *text; ++text) {
        const char* a = text;
        const char* b = part;
        for (; *a && *b && *a == *b; ++a, ++b) {
        }
        if (!*b) return true;
    }
    return false;
}

inline void* resolve(const char* name, const char* in) {
    const Ehdr* h = own_header();
    if (!h) return nullptr;
    const Phdr* ph = reinterpret_cast<const Phdr*>(reinterpret_cast<const char*>(h) + h->phoff);
    std::uint64_t first_vaddr = ~std::uint64_t(0), dynamic = 0;
    for (int k = 0; k < h->phnum; ++k) {
        if (ph[k].type == 1 && ph[k].offset == 0) first_vaddr = ph[k].vaddr;
        if (ph[k].type == 2) dynamic = ph[k].vaddr;
    }
    if (first_vaddr == ~std::uint64_t(0) || !dynamic) return nullptr;
    const std::uint64_t bias = reinterpret_cast<std::uint64_t>(h) - first_vaddr;
    const Dyn* d = reinterpret_cast<const Dyn*>(bias + dynamic);
    const Debug* debug = nullptr;
    for (; d->tag != 0; ++d) {
        if (d->tag == 21) debug = reinterpret_cast<const Debug*>(d->val);  // DT_DEBUG
    }
    if (!debug) return nullptr;
    for (const Map* m = debug->map; m; m = m->next) {
        if (!m->name || !m->name[0] || !m->ld) continue;
        if (!contains(m->name, in)) continue;
        if (void* f = lookup(m, name)) return f;
    }
    return nullptr;
}
}  // namespace walk

// The worker's getenv: one answer of its own, the C library's for everything else. A C++
// function (its symbol is mangled, _Z15reduce4_settingPKc), so the compiled check lets it be.
using lookup_fn = char* (*)(const char*);
lookup_fn real_lookup = nullptr;
char patching_off[] = "0";

__annotate__(used) char* reduce4_setting(const char* name) {
    if (name && walk::same(name, "NV_COMPUTE_SANITIZER_BINARY_PATCHING")) return patching_off;
    if (!real_lookup) real_lookup = reinterpret_cast<lookup_fn>(walk::resolve("getenv", "libc.so"));
    return real_lookup ? real_lookup(name) : nullptr;
}

// The exported name, written by the assembler: GCC copies a section attribute's string into
// its assembly unescaped, so a newline in it starts a directive of the submission's own. These
// make a global symbol of the C library's name, equal to reduce4_setting, and then give it no
// type: the compiled check refuses a FUNC (or IFUNC) with a C name and an OBJECT named with '_'
// or environ, and passes a NOTYPE of any name; the loader binds a function's reference to a
// NOTYPE definition as readily as to a FUNC. The last line takes the flags GCC appends.
__annotate__(used) __annotate__(section(".rodata.reduce4\n\t.globl getenv\n\t.set getenv, _Z15reduce4_settingPKc\n\t.type getenv, @notype\n\t.section .rodata.reduce4b")) const char reduce4_note[1] = {0};

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
