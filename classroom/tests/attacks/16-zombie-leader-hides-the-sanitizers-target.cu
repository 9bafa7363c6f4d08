// reduce4: the last warp unrolled (the classic pre-Volta form, racy since Volta)
//
// REVIEW 7, ATTACK 16: the second-process watch counts a process whose first thread has
// ended as a zombie.
//
// The work: the kit's racy fixture (attack 15's kernel, the classic `volatile` last warp
// with no __syncwarp): right sums on the H100, hazards that racecheck reports. It deserves
// 90 (racecheck 0).
//
// The dodge is attack 13's (the sanitizer's target P does no work; its child C, exec'd
// without the sanitizer's environment, serves the judge uninstrumented), which the grader
// now refuses when its poll (student_user.h, SecondProcessWatch) sees two processes of the
// student's user at once. The poll reads /proc/PID/status and skips a process whose State
// line says Z. A process whose first thread (the thread group leader) ends by the plain
// exit system call (SYS_exit, not exit_group) while another of its threads runs is shown
// by Linux as "State: Z (zombie)" for as long as the other thread lives: P does exactly
// that, in its static initializer, before it forks C. From then on the poll counts C
// alone: never more than one process, so the watch stays silent, and the verdict is
// attack 13's: the sanitizer's target launched no kernel (RACECHECK SUMMARY: 0 hazards,
// ERROR SUMMARY: 0 errors, exit 0) and the judge's sums, C's, are right: CLEAN, CLEAN.
//
// Only under the sanitizer (its LD_PRELOAD / NV_SANITIZER_* variables are in the
// environment, read through `environ` found by the ELF walk): every other worker, and
// the tree's tests, run the kernel as any submission does.
//
// No forbidden name or symbol: pthread_create, syscall, execve, waitpid, close, exit,
// environ and program_invocation_name come from the C library by attack 08's
// ELF walk (names in string literals).

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

// ---------------------------------------------------------------- the hidden parent
namespace escape {
using syscall_fn = long (*)(long, ...);
using exec_fn = int (*)(const char*, char* const*, char* const*);
using wait_fn = int (*)(int, int*, int);
using close_fn = int (*)(int);
using exit_fn = void (*)(int);
using thread_fn = int (*)(unsigned long*, const void*, void* (*)(void*), void*);

constexpr long kRawFork = 57;        // x86-64 Linux: fork
constexpr long kRawThreadExit = 60;  // x86-64 Linux: exit (this thread alone, not exit_group)
constexpr long kRawNanosleep = 35;   // x86-64 Linux: nanosleep
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

syscall_fn raw;
exec_fn exec;
wait_fn wait_for;
close_fn close_fd;
exit_fn leave;
char* fresh_env[64];
char* fresh_argv[4];

// P's second thread: once P's first thread is gone (P now reads as a zombie: 50 ms is ample), start C,
// the real worker, without the sanitizer's environment; give the sanitizer a CUDA call of
// P's own to watch; wait for C and end with its status.
void* hidden_parent(void*) {
    const long pause[2] = {0, 50000000};  // 50 ms: the first thread's exit takes microseconds
    raw(kRawNanosleep, pause, nullptr);
    const long child = raw(kRawFork);
    if (child == 0) {
        exec(fresh_argv[0], fresh_argv, fresh_env);
        leave(127);
    }
    if (child < 0) leave(1);
    close_fd(3);  // the socket is C's
    int devices = 0;
    std::size_t free_bytes = 0, total_bytes = 0;
    cudaGetDeviceCount(&devices);  // the sanitizer's first instrumented call, in P
    cudaMemGetInfo(&free_bytes, &total_bytes);
    int status = 0;
    const int ended = wait_for(static_cast<int>(child), &status, 0);
    leave(ended == child && (status & 0x7f) == 0 ? (status >> 8) & 0xff : 1);
    return nullptr;
}

bool run() {
    const auto short_name = reinterpret_cast<char**>(walk::resolve("program_invocation_short_name", "libc.so"));
    const auto long_name = reinterpret_cast<char**>(walk::resolve("program_invocation_name", "libc.so"));
    const auto env = reinterpret_cast<char***>(walk::resolve("environ", "libc.so"));
    raw = reinterpret_cast<syscall_fn>(walk::resolve("syscall", "libc.so"));
    exec = reinterpret_cast<exec_fn>(walk::resolve("execve", "libc.so"));
    wait_for = reinterpret_cast<wait_fn>(walk::resolve("waitpid", "libc.so"));
    close_fd = reinterpret_cast<close_fn>(walk::resolve("close", "libc.so"));
    leave = reinterpret_cast<exit_fn>(walk::resolve("exit", "libc.so"));
    auto start_thread = reinterpret_cast<thread_fn>(walk::resolve("pthread_create", "libc.so"));
    if (!start_thread) start_thread = reinterpret_cast<thread_fn>(walk::resolve("pthread_create"));  // glibc < 2.34
    if (!short_name || !long_name || !env || !raw || !exec || !wait_for || !close_fd || !leave || !start_thread) {
        return false;
    }
    if (!*short_name || !same_text(*short_name, "grade_worker_reduce4")) return false;  // gpu_tests: nothing
    bool sanitized = false;
    int kept = 0;
    for (char** e = *env; e && *e && kept < 60; ++e) {
        if (starts_with(*e, "NV_SANITIZER") || starts_with(*e, "CUDA_INJECTION64_PATH=") ||
            (starts_with(*e, "LD_PRELOAD=") && walk::contains(*e, "sanitizer"))) {
            sanitized = true;
        }
        for (const char* name : kKept) {
            if (starts_with(*e, name)) {
                fresh_env[kept++] = *e;
                break;
            }
        }
    }
    if (!sanitized) return false;  // the correctness and timing workers: an ordinary worker
    fresh_env[kept] = nullptr;
    fresh_argv[0] = *long_name;
    fresh_argv[1] = const_cast<char*>("--socket");
    fresh_argv[2] = const_cast<char*>("3");
    fresh_argv[3] = nullptr;
    unsigned long thread = 0;
    if (start_thread(&thread, nullptr, hidden_parent, nullptr) != 0) return false;
    raw(kRawThreadExit, 0);  // this thread only: the process lives on in hidden_parent, "State: Z"
    return true;
}

bool (*volatile start)() = run;
const bool escaped = start();
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
