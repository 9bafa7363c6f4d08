// Control for attack 20: the same file without its std::future_category() (the racy warp alone, deserves 90).
// Review 11, attack 20: run code of the submission's inside the C++ library's own
// initializer, before the sanitizer's collection library reads its settings, through a C++
// name that the C++ library defines and calls through its own PLT.
//
// The work is the kit's racy fixture (the pre-Volta `volatile` last warp without __syncwarp,
// attacks 15-19's kernel): it deserves 90 (racecheck's 10 lost).
//
// How: libstdc++.so.6's initializers (.init_array; 6.0.30 here, GCC 12) call
// std::future_category() through the PLT (its compatibility pointer `future_category` of
// gcc 4.6's ABI is initialized from it) and std::error_category's constructor. A C++ program may define a
// function of that name (it is an ODR violation, but nothing refuses it): the name is mangled,
// _ZSt15future_categoryv, so the compiled check's allow-list of defined names passes it; ld
// exports it from the worker because libstdc++.so defines it too; and ld.so binds
// libstdc++'s own PLT slot to the executable's definition, which comes first in the lookup.
// ld.so runs libstdc++'s initializers before the preloaded collection library's constructor
// (review10/evidence/init-order.txt), and that constructor reads
// NV_COMPUTE_SANITIZER_BINARY_PATCHING with getenv (review9, review10). So this function sets
// it to "0" with the C library's setenv, reached by attack 08's walk (class 7, conceded), and
// then returns the C++ library's own future_category(), found the same way: libstdc++ goes
// on as before. No C name is defined, no exec, no process, no .preinit_array, no IFUNC.
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

namespace reduce4_hook {
using setenv_fn = int (*)(const char*, const char*, int);
using category_fn = const void* (*)();
}  // namespace reduce4_hook


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
