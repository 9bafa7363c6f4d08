// What every stage's kernel.cu needs from the harness, and what it gives back: a Stage.
//
// A stage is a kernel plus a small host launcher, `sum(in, n, out, workspace, config,
// stream)`, that reduces n values at `in` to one value at `out`, on the device, with
// kernel launches only (no copies to the host, no synchronization), so that the harness
// can time it with CUDA events.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda_check.h"
#include "explain.h"
#include "value_type.h"
#include "variant.h"

// What a launcher reads: the block size, and the choices of its stage's labelled variants
// (variant.h), which it reads with chosen_as / chosen_number below. Most stages have none.
struct RunConfig {
    int block = 256;
    VariantChoices variants;  // by variant name (NAME -> CHOICE); a variant not named runs its default
};

template <typename T>
using SumFn = void (*)(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config,
                       cudaStream_t stream);

// A stage's record, defined at the bottom of its kernel.cu with every field named
// (`.min_block = 64`), so that it reads on its own.
struct Stage {
    const char* name;     // "reduce2"
    const char* kernel;   // "sequential_addressing": the kernel's name says the idea
    const char* idea;     // one line: what this stage adds
    const char* chapter = nullptr;  // "docs/02-bank-conflicts.md": the chapter that teaches it
    int min_block = 32;   // supported blocks: powers of two from min_block to max_block
    int max_block = 1024;
    int default_block = 256;  // the block a run takes when --block is not given
    // The stage every other is compared with (the "x reduce0" column): true for one stage only.
    bool baseline = false;
    // Scratch memory the launcher needs for partial sums. The harness allocates it once,
    // outside the timed region, and zeroes it once.
    std::size_t (*workspace_bytes)(std::size_t n, std::size_t value_size, const RunConfig& config) = nullptr;
    SumFn<int> sum_int = nullptr;  // a stage may leave a type out (the harness tests' broken stages do)
    SumFn<float> sum_float = nullptr;
    SumFn<double> sum_double = nullptr;
    // reduce0 ... reduce3: replay the block's tree on the host for --explain; else nullptr.
    TreeTrace (*trace)(unsigned block) = nullptr;
    // The stage's labelled variants, declared in its kernel.cu (variant.h); most have none.
    std::span<const Variant> variants = {};

    template <typename T>
    SumFn<T> sum() const {
        if constexpr (std::is_same_v<T, int>) return sum_int;
        else if constexpr (std::is_same_v<T, float>) return sum_float;
        else return sum_double;
    }
};

// The labelled variants of these stages, for the option parser (ProgramSpec::stage_variants):
// the options a program takes beyond the harness's own.
inline std::vector<StageVariants> stage_variants(const std::vector<const Stage*>& stages) {
    std::vector<StageVariants> variants;
    for (const Stage* stage : stages) {
        if (!stage->variants.empty()) variants.push_back({stage->name, stage->variants});
    }
    return variants;
}

// ---------------------------------------------------------------- helpers for kernels

inline std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// The most blocks a grid may have in x: 2^31 - 1 (every GPU since compute capability 3.0).
constexpr std::size_t kMaxGridBlocks = 2147483647;

// Dynamic shared memory as an array of T. (A templated `extern __shared__ T x[]` would
// declare one symbol with several types, which C++ forbids; raw bytes cast once do not.)
template <typename T>
__device__ T* dynamic_shared() {
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    return reinterpret_cast<T*>(shared_bytes);
}

// The barrier the tree functions call between steps (see reduce0/kernel.cu).
struct SyncThreads {
    __device__ void operator()() const { __syncthreads(); }
};

// ---------------------------------------------------------------- assignment stubs
// In a classroom assignment (docs/classroom.md) the lines a student writes are replaced
// by a stub that calls not_implemented(): it prints the message once (per message on the
// host, per stage file on the GPU), and hands back `value` unchanged, so the stub compiles, runs and
// fails verification with a line that says why. The reference stages never call it.
namespace assignment_stub {
[[maybe_unused]] static __device__ int reported_on_device = 0;  // one per stage file: `static` in a header
}  // namespace assignment_stub

__host__ __device__ inline void not_implemented(const char* message) {
#ifdef __CUDA_ARCH__
    if (atomicExch(&assignment_stub::reported_on_device, 1) == 0) printf("%s\n", message);
#else
    static std::set<std::string> reported;
    if (reported.insert(message).second) std::fprintf(stderr, "%s\n", message);
#endif
}

template <typename T>
__host__ __device__ T not_implemented(T value, const char* message) {
    not_implemented(message);
    return value;
}

// ---------------------------------------------------------------- helpers for launchers

// The choice of one of the stage's variants that this run takes (the config's, or the
// default for T), as the stage's enum whose values are listed in the order of
// variant.choices: `chosen_as<Mode, T>(kMode, config)`.
template <typename Choice, typename T>
Choice chosen_as(const Variant& variant, const RunConfig& config) {
    return static_cast<Choice>(chosen_index(variant, config.variants, value_type_of<T>()));
}

// The kernel for the choice this run takes, from one instantiation per choice listed in
// the order of variant.choices: `chosen_kernel<T>(kMode, config, k<T, Mode::A>, k<T, Mode::B>)`.
template <typename T, typename Kernel, typename... More>
Kernel chosen_kernel(const Variant& variant, const RunConfig& config, Kernel first, More... more) {
    const Kernel kernels[] = {first, more...};
    if (1 + sizeof...(More) != variant.choices.size()) {
        throw std::logic_error("--" + std::string(variant.name) + " has " + std::to_string(variant.choices.size()) +
                               " choices but its launcher lists " + std::to_string(1 + sizeof...(More)) + " kernels");
    }
    return kernels[chosen_index(variant, config.variants, value_type_of<T>())];
}

// The same for a variant whose choices are numbers ("1", "2", "4"): the chosen number.
template <typename T>
int chosen_number(const Variant& variant, const RunConfig& config) {
    return std::stoi(std::string(chosen(variant, config.variants, value_type_of<T>())));
}

// The sum of no values is 0: write it without launching an empty grid.
template <typename T>
void write_zero(T* out, cudaStream_t stream) {
    CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(T), stream));
}

// Reduce in passes, as reduce0 ... reduce5 do: each pass launches one block per
// `per_block` values and leaves one partial sum per block; the partials are reduced the
// same way until one block is left, and that last pass writes straight into `out`.
// `launch(src, count, dst, blocks)` launches the stage's kernel for one pass.
template <typename T, typename LaunchPass>
void run_passes(const T* in, std::size_t n, T* out, void* workspace, std::size_t per_block, cudaStream_t stream,
                LaunchPass&& launch) {
    if (n == 0) return write_zero(out, stream);
    // Two partial arrays used in turn: pass k reads one and writes the other.
    T* partials[2] = {static_cast<T*>(workspace), static_cast<T*>(workspace) + ceil_div(n, per_block)};
    const T* src = in;
    std::size_t count = n;
    for (int pass = 0;; ++pass) {
        const std::size_t blocks = ceil_div(count, per_block);
        if (blocks > kMaxGridBlocks) {
            throw std::length_error("a pass over " + std::to_string(count) + " values would launch " +
                                    std::to_string(blocks) + " blocks, more than a grid's 2^31 - 1: use a larger --block");
        }
        T* dst = blocks == 1 ? out : partials[pass % 2];
        launch(src, count, dst, static_cast<unsigned>(blocks));
        if (blocks == 1) return;
        src = dst;
        count = blocks;
    }
}

// Workspace for run_passes: the first pass's partials plus the second's.
inline std::size_t passes_workspace_bytes(std::size_t n, std::size_t per_block, std::size_t value_size) {
    const std::size_t first = ceil_div(n, per_block);
    return (first + ceil_div(first, per_block)) * value_size;
}

// Call f(std::integral_constant<unsigned, B>) for the run-time block size B, so a kernel can
// take its block size as a template parameter (reduce5 on). MIN and MAX bound what the
// stage instantiates; the option parser has already rejected anything else.
template <unsigned MIN, unsigned MAX, typename F>
void dispatch_block_size(unsigned block, F&& f) {
    if constexpr (MIN <= MAX) {
        if (block == MIN) return f(std::integral_constant<unsigned, MIN>{});
        return dispatch_block_size<MIN * 2, MAX>(block, std::forward<F>(f));
    } else {
        throw std::invalid_argument("unsupported block size " + std::to_string(block));
    }
}

// resident_blocks without the memory: three runtime queries, asked every time.
template <typename Kernel>
unsigned query_resident_blocks(Kernel kernel, unsigned block, std::size_t shared_bytes) {
    int device = 0, sms = 0, per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, static_cast<int>(block), shared_bytes));
    return static_cast<unsigned>(std::max(1, sms * per_sm));
}

// How many blocks of `kernel` fit on the whole GPU at once: SMs x blocks per SM, the
// largest grid that runs in a single wave (reduce6, reduce7).
//
// Asked once per kernel, block size and device, then remembered: the queries are host work
// that every call would repeat for the same answer. In a single timed launch their time does
// not show: docs/11-fixed-costs.md's "after an occupancy query" floor, three queries and a
// launch, takes as long as the launch alone on the H100 we measured.
template <typename Kernel>
unsigned resident_blocks(Kernel kernel, unsigned block, std::size_t shared_bytes) {
    struct Key {
        const void* kernel;
        unsigned block;
        std::size_t shared_bytes;
        int device;
        auto operator<=>(const Key&) const = default;
    };
    static std::mutex mutex;  // launchers may be called from more than one host thread
    static std::map<Key, unsigned> known;
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    const Key key{reinterpret_cast<const void*>(kernel), block, shared_bytes, device};
    const std::lock_guard lock(mutex);
    if (const auto found = known.find(key); found != known.end()) return found->second;
    return known[key] = query_resident_blocks(kernel, block, shared_bytes);
}
