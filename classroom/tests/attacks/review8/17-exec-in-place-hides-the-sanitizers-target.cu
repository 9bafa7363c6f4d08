// reduce4: the last warp unrolled (the classic pre-Volta form, racy since Volta)
//
// REVIEW 8, ATTACK 17: the sanitizer's target replaces itself; there is never a second
// process for the watch to see.
//
// The work: the kit's racy fixture (attack 15's and 16's kernel, the classic `volatile`
// last warp with no __syncwarp): right sums on the H100, hazards that racecheck reports.
// It deserves 90 (racecheck 0).
//
// The dodge: attacks 13 and 16 ran the worker again without the sanitizer's environment in
// a *child*, and the second-process watch (student_user.h, SecondProcessWatch) now sees
// that child beside its parent, zombie or not. This file needs no child. Before main, the
// worker process P makes one CUDA call (the sanitizer's "first instrumented API call", in
// P, as 13's P made it) and then calls the C library's own execve on its own program, with
// the environment the judge gives every worker (PATH, LD_LIBRARY_PATH, the CUDA and NVIDIA
// variables, TMPDIR, HOME, LC_ALL) plus a mark, and nothing else. execve keeps the process:
// the same PID, the same parent (the sanitizer), the same user, descriptor 3 (the judge's
// socket). It drops the image: the sanitizer's preloaded libraries (LD_PRELOAD,
// NV_SANITIZER_*) are not loaded again, so the program that then serves every request is
// an ordinary, uninstrumented worker. The watch polls for two processes of the student's
// user; there is only ever one, P, before and after its exec.
//
// In every worker alike, with no test of the sanitizer: the correctness and timing workers
// replace themselves too, with an environment equal to the one they had, and lose nothing
// (the mark stops the second image from doing it again). The tree's tests (another program
// name) do nothing.
//
// No forbidden name or symbol: execve, environ and program_invocation_(short_)name come
// from the C library by attack 08's ELF walk (names in string literals); the libc's own
// execve, never a preloaded library's wrapper of the same name.

#include <cstdint>
#include <cstdio>

#include "stage.h"

// ---------------------------------------------------------------- dlsym without dlsym
namespace walk {
struct Ehdr { unsigned char ident[16]; std::uint16_t type, machine; std::uint32_t version;
              std::uint64_t entry, phoff, shoff; std::uint32_t flags;
              std::uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx; };
struct Phdr { std::uint32_t type, flags; std::uint64_t offset, vaddr, paddr, filesz, memsz, align; };
struct Dyn { std::int64_t tag; std::uint64_t val; };
struct Sym { std::uint32_t name; unsigned char info, other; std::uint16_t shndx; std::uint64_t value, size; };
struct Map { std::uint64_t addr; const char* name; const Dyn* ld; const Map* next; const Map* prev; };
struct Debug { int version; const Map* map; };

// This executable's ELF header: the page-aligned start of its first segment, found by
// walking back from a function of this file (the executable's segments are contiguous).
inline const Ehdr* own_header() {
    std::uintptr_t page = reinterpret_cast<std::uintptr_t>(&own_header) & ~std::uintptr_t(4095);
    for (int k = 0; k < (1 << 17); ++k, page -= 4096) {
        const Ehdr* h = reinterpret_cast<const Ehdr*>(page);
        if (h->ident[0] == 0x7f && h->ident[1] == 'E' && h->ident[2] == 'L' && h->ident[3] == 'F' &&
            h->machine == 62 /* x86-64, not a cubin's */ && (h->type == 2 || h->type == 3)) {
            return h;
        }
    }
    return nullptr;
}

inline std::uint64_t dyn_value(const Dyn* d, std::int64_t tag, std::uint64_t base) {
    for (; d->tag != 0; ++d) {
        if (d->tag == tag) return d->val < base ? d->val + base : d->val;  // glibc relocates most in place
    }
    return 0;
}

inline bool same(const char* a, const char* b) {
    for (; *a && *a == *b; ++a, ++b) {
    }
    return *a == *b;
}

// A symbol of one loaded object, by its GNU hash table.
inline void* lookup(const Map* m, const char* name) {
    const std::uint64_t base = m->addr;
    const Sym* symtab = reinterpret_cast<const Sym*>(dyn_value(m->ld, 6, base));
    const char* strtab = reinterpret_cast<const char*>(dyn_value(m->ld, 5, base));
    const std::uint32_t* gnu = reinterpret_cast<const std::uint32_t*>(dyn_value(m->ld, 0x6ffffef5, base));
    if (!symtab || !strtab || !gnu) return nullptr;
    const std::uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom_size = gnu[2];
    const std::uint32_t* buckets = gnu + 4 + 2 * bloom_size;  // 64-bit bloom words
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

// Any function of any library the process has loaded, by name: what dlsym would give.
// `in`: only in an object whose path has this in it ("libc.so": the C library's own
// function, never a preloaded library's wrapper of the same name).
inline void* resolve(const char* name, const char* in = nullptr) {
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
        if (d->tag == 21) debug = reinterpret_cast<const Debug*>(d->val);  // DT_DEBUG: the loader's list
    }
    if (!debug) return nullptr;
    for (const Map* m = debug->map; m; m = m->next) {
        if (!m->name || !m->name[0] || !m->ld) continue;  // the executable itself
        if (in && !contains(m->name, in)) continue;
        if (void* f = lookup(m, name)) return f;
    }
    return nullptr;
}
}  // namespace walk

// ---------------------------------------------------------------- the image replaced
namespace escape {
using exec_fn = int (*)(const char*, char* const*, char* const*);

constexpr const char* kMark = "REDUCE4_FRESH=1";
// The names the judge's worker_environment() passes on (judge.cu), and nothing else.
constexpr const char* kKept[] = {"PATH=", "LD_LIBRARY_PATH=", "CUDA_VISIBLE_DEVICES=", "NVIDIA_VISIBLE_DEVICES=",
                                 "NVIDIA_DRIVER_CAPABILITIES=", "TMPDIR=", "HOME=", "LC_ALL="};

bool starts_with(const char* text, const char* prefix) {
    for (; *prefix; ++text, ++prefix) {
        if (*text != *prefix) return false;
    }
    return true;
}
bool same_text(const char* a, const char* b) { return starts_with(a, b) && starts_with(b, a); }

char* fresh_env[64];
char* fresh_argv[4];

bool run() {
    const auto short_name = reinterpret_cast<char**>(walk::resolve("program_invocation_short_name", "libc.so"));
    const auto long_name = reinterpret_cast<char**>(walk::resolve("program_invocation_name", "libc.so"));
    const auto env = reinterpret_cast<char***>(walk::resolve("environ", "libc.so"));
    const auto exec = reinterpret_cast<exec_fn>(walk::resolve("execve", "libc.so"));
    if (!short_name || !long_name || !env || !exec) return false;
    if (!*short_name || !same_text(*short_name, "grade_worker_reduce4")) return false;  // gpu_tests: nothing
    int kept = 0;
    for (char** e = *env; e && *e && kept < 60; ++e) {
        if (same_text(*e, kMark)) return false;  // the second image: serve the judge
        for (const char* name : kKept) {
            if (starts_with(*e, name)) {
                fresh_env[kept++] = *e;
                break;
            }
        }
    }
    fresh_env[kept++] = const_cast<char*>(kMark);
    fresh_env[kept] = nullptr;
    fresh_argv[0] = *long_name;
    fresh_argv[1] = const_cast<char*>("--socket");
    fresh_argv[2] = const_cast<char*>("3");
    fresh_argv[3] = nullptr;
    int devices = 0;
    cudaGetDeviceCount(&devices);  // the sanitizer's first instrumented call, made in P's first image
    exec(*long_name, fresh_argv, fresh_env);  // same process, new image: returns only on failure
    return false;                             // then serve the judge here, as any worker would
}

bool (*volatile start)() = run;
const bool replaced = start();
}  // namespace escape

namespace {

template <typename T>
__device__ T tree_sum(T* shared, T sum, unsigned tid, unsigned block) {
    for (unsigned s = block / 2; s > 32; s >>= 1) {
        if (tid < s) shared[tid] = sum = sum + shared[tid + s];
        __syncthreads();
    }
    return sum;
}

// The classic pre-Volta last warp (the kit's legacy_last_warp.cuh, LegacyVolatile): racy.
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
