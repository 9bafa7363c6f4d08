// reduce7's labelled variants, the experiments of docs/07-shuffles-vectors.md that show
// what each of its ideas is worth, kept apart from the lesson: --vec (the load's width),
// --finish (how the blocks' sums become one), --loads (how many 16-byte loads each
// thread issues before it adds any) and --grid (the launcher's choice, a resident grid or
// one block per tile).
// Also the finishes' names (enum Finish) and the vector types (Vector, add_lanes).
//
// ops/reduce_op.cuh repeats kernel.cu's tile loop and last-block finish for any operator
// (reduce_ops, reduce7_cg, reduce7_cub); tests/host/test_copies_in_step.cpp keeps the two in step. kernel.cu's launcher reads the choices; the kernel
// sees only kLoadsInFlight.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "stage.h"

// This stage's labelled variants (common/variant.h). Every result is labelled with both,
// "vec=4 finish=atomic"; --variants times every vector width the type allows x every finish.
constexpr std::string_view kVecChoices[] = {"1", "2", "4"};
constexpr Variant kVec = {
    .name = "vec",
    .value_name = "V",
    .choices = kVecChoices,
    .help = "elements per vector load, 1 | 2 | 4 (default: 16 bytes)",
    // The widest load is 16 bytes: 4 ints or floats, 2 doubles.
    .default_for = [](ValueType type) -> std::string_view { return type_size(type) == 8 ? "2" : "4"; },
    .unsupported = [](std::string_view vec, ValueType type) -> std::string {
        const std::size_t bytes = std::stoul(std::string(vec)) * type_size(type);
        if (bytes <= 16) return "";
        return "--vec " + std::string(vec) + " with " + std::string(type_name(type)) + " would be a " +
               std::to_string(bytes) + "-byte load; the widest load is 16 bytes";
    },
    .always_labelled = true,
};
// How the blocks' sums become one value (kernel.cu's finish).
enum class Finish {
    TwoPass,    // a second launch of one block sums the partials (deterministic)
    Atomic,     // every block atomically adds its sum into the result (order varies run to run)
    LastBlock,  // the last block to finish sums the partials, in order (deterministic)
    Pdl,        // two-pass, the second launch scheduled while the first runs (sm_90+, deterministic)
    Packed,     // int: each block adds its sum and a count into one 64-bit word; no memset (below)
};

constexpr std::string_view kFinishChoices[] = {"two-pass", "atomic", "last-block", "pdl", "packed"};  // in the order of enum Finish
constexpr Variant kFinish = {
    .name = "finish",
    .value_name = "F",
    .choices = kFinishChoices,
    .help = "two-pass | atomic | last-block | pdl | packed (default: packed for int,\n"
            "last-block for float and double: the fastest that gives the same bits every run;\n"
            "pdl: two-pass with Programmatic Dependent Launch, compute capability 9.0 and newer;\n"
            "packed: int only, the atomic finish without the result's memset)",
    // The fastest finish that gives the same bits on every run. Integer addition is
    // associative, so atomics are deterministic for int; for float and double the order of
    // the atomic adds varies from run to run, and so would the rounding.
    .default_for = [](ValueType type) -> std::string_view { return type == ValueType::Int32 ? "packed" : "last-block"; },
    .unsupported = [](std::string_view finish, ValueType type) -> std::string {
        if (finish != "packed" || type == ValueType::Int32) return "";
        return "--finish packed adds 32-bit integers in halves of one 64-bit word: int only, not " +
               std::string(type_name(type));
    },
    .needs_compute_capability = [](std::string_view finish) { return finish == "pdl" ? 90 : 0; },
    .always_labelled = true,
};

// --finish packed (int): the blocks' sum and how many blocks have added, in one 64-bit word
// of the workspace (zero between launches): high half the sum modulo 2^32, low half the
// count. Each block adds (its sum << 32) + 1 with one atomic, which also returns the word
// before it; the block whose add brings the count to the grid's size read every other
// block's sum in that word, so it writes the result and zeroes the word for the next
// launch. The atomic finish needs the result zeroed before the launch (a memset node, about
// 0.7 us a launch: docs/results/grid_layout_95866ca/); this one does not, and needs no
// fence, since one word carries both (a count in a word of its own, with an acquire-release
// per block, cost more than the memset: docs/results/grid_layout_fcb7c24/).
// No fence before the add. A fence's release half (MEMBAR.ALL.GPU) in each block of a
// one-shot grid cost an H200 about a tenth of its bandwidth at 2^28 and 2^30; on an H100 the
// probe read within 0.4% with and without a fence (docs/results/reduce7_h200_edges/).
// Thread 0 of each block holds the block's sum; the other threads return.
template <typename T>
__device__ void packed_finish(T sum, T* out, unsigned* workspace_word) {
    if (threadIdx.x != 0) return;
    if constexpr (std::is_integral_v<T> && sizeof(T) == 4) {
        auto* word = reinterpret_cast<unsigned long long*>(workspace_word);  // 256-byte aligned
        const unsigned long long mine = (static_cast<unsigned long long>(static_cast<unsigned>(sum)) << 32) + 1ull;
        const unsigned long long before = atomicAdd(word, mine);
        if (static_cast<unsigned>(before) == gridDim.x - 1) {
            *out = static_cast<T>(static_cast<unsigned>(before >> 32) + static_cast<unsigned>(sum));
            *word = 0;  // ready for the next launch
        }
    }
}


// The last-block finish (kernel.cu) adds the partials of a grid of up to group_size(BLOCK),
// 2^19 / BLOCK, blocks as one group: a resident grid's (2,048 threads an SM / BLOCK x the SMs,
// 32 blocks an SM at most: 528 at block 512 on the H100, 1,056 at 256, 4,224 at 64 and 32) at
// every block size, on a GPU of up to 256 SMs. A longer grid (--grid one-shot, one block per
// tile: 131,072 at 2^30 floats, block 512) adds in groups of BLOCK, one partial a thread, and then the groups'
// sums. Groups of 512 that left a resident grid two groups read 1.5-4% slower at 2^24-2^26
// (docs/results/reduce7_groups_8541399/); after a one-shot grid, groups of BLOCK read faster than
// groups of 1,024 at 2^30, and at 2^28 in one of two calls (docs/results/reduce7_gap_74ba1af/).
__host__ __device__ constexpr unsigned group_size(unsigned block) { return (1u << 19) / block; }

// VEC values of T loaded by one instruction: int4, float4, double2, ...
template <typename T, int VEC> struct Vector { using type = T; };
template <> struct Vector<int, 2> { using type = int2; };
template <> struct Vector<int, 4> { using type = int4; };
template <> struct Vector<float, 2> { using type = float2; };
template <> struct Vector<float, 4> { using type = float4; };
template <> struct Vector<double, 2> { using type = double2; };

template <int VEC, typename T, typename V>
__device__ T add_lanes(T sum, const V& vector) {
    const T* lanes = reinterpret_cast<const T*>(&vector);
#pragma unroll
    for (int k = 0; k < VEC; ++k) sum += lanes[k];
    return sum;
}

// Call f(std::integral_constant<int, VEC>) for the run-time vector width: 1, 2 or 4
// elements, at most 16 bytes (the option parser has rejected the rest).
template <typename T, typename F>
void dispatch_vector_width(int vec, F&& f) {
    if (vec == 1) return f(std::integral_constant<int, 1>{});
    if (vec == 2) return f(std::integral_constant<int, 2>{});
    if constexpr (sizeof(T) <= 4) {
        if (vec == 4) return f(std::integral_constant<int, 4>{});
    }
    throw std::invalid_argument("unsupported vector width " + std::to_string(vec));
}

constexpr int kDefaultLoadsInFlight = 4;  // independent vector loads each thread issues before adding

// --loads (kLoads below) reaches the kernel as LOADS...: empty for the
// default, so that the kernel that runs by default keeps its name,
// shuffle_vector_single_pass<512u, 4, int> (<256u, 4, int> at --block 256), which scripts/sass.sh and the profiles look for.
template <int... LOADS>
__host__ __device__ constexpr int loads_in_flight() {
    return sizeof...(LOADS) == 0 ? kDefaultLoadsInFlight : (0 + ... + LOADS);
}

// --loads: how many vector loads each thread issues before it adds any (a tile is that
// many x BLOCK vectors). More loads keep more bytes in flight per thread, at the price of
// registers; docs/07-shuffles-vectors.md asks what each is worth. Labelled "loads=8" when
// not the default; --variants leaves it at the choice given. The choices other than 4 are
// built for one shape only, block 256 and the 16-byte vector, the experiment's fixed point:
// every block and width as well made 240 kernels to compile instead of 60; with the 240,
// the README's first command took 54.4 s on the H100 (scripts/build_times.sh at 074a57a),
// and 42.9 s at 661bd8c with the 60 (other changes between the two runs as well).
// What the compiler makes of it is another matter. Told nothing of the occupancy wanted,
// ptxas kept registers low and issued only 4 of the 8 or 16 loads before the first add
// (at most 5 outstanding, 32 registers:
// docs/results/grid_layout/sass_loads.txt). The variants are therefore compiled with
// __launch_bounds__(256, 1) (min_blocks below), which lets ptxas spend the registers: all
// N loads go out before the first add (48 registers at 8, 80 at 16, so fewer resident
// blocks), as the test loads_in_flight_sass checks in the SASS
// (scripts/count_loads_before_use.sh).
constexpr std::string_view kLoadsChoices[] = {"1", "2", "4", "8", "16"};
constexpr Variant kLoads = {
    .name = "loads",
    .value_name = "L",
    .choices = kLoadsChoices,
    .help = "vector loads in flight per thread, 1 | 2 | 4 | 8 | 16 (default 4;\n"
            "the others with --block 256 and 16-byte vectors only)",
    .default_choice = "4",  // kDefaultLoadsInFlight
    .timed_by_variants = false,
};

// The threads one SM holds on the architecture being compiled: a minimum of blocks per SM
// beyond it is ignored by ptxas, with a warning. The host pass has no __CUDA_ARCH__ and
// takes 2,048; only the device code's bounds matter.
__host__ __device__ constexpr unsigned threads_per_sm() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
    return 1024;  // Turing
#elif defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 890)
    return 1536;  // GA10x, Orin, Ada
#else
    return 2048;  // sm_80, sm_90 and the host pass
#endif
}

// The kernel's __launch_bounds__(BLOCK, min_blocks). The default (no LOADS): 0, no minimum,
// which leaves the code of the int and float kernels at block 256 the one the figures
// measured (their SASS did not change when the bounds came in). The --loads variants (block
// 256 only): at least one resident block per SM, which lets ptxas spend up to 255 registers
// a thread and keep all their loads in flight (see kLoads). --grid auto's large tile (block
// 512 only, below): every thread slot of an SM (threads_per_sm() / BLOCK blocks), which on
// sm_80 and sm_90 (2,048 threads) holds ptxas to 32 registers; on sm_90 it then issues the
// 8 loads as a rolling window (5 before the first add, the next issued as an earlier one is
// added: tests/loads_in_flight.sh) rather than all before the first add.
template <unsigned BLOCK, int... LOADS>
constexpr unsigned min_blocks() {
    if constexpr (sizeof...(LOADS) == 0) return 0u;
    else return BLOCK == 256 ? 1u : threads_per_sm() / BLOCK;
}

// Call f(std::integer_sequence<int, LOADS...>) for the run-time --loads: no LOADS for the
// default (see the kernel), one for the others, which exist only at block 256 and the
// 16-byte vector (see kLoads).
template <unsigned BLOCK, int VEC, typename T, typename F>
void dispatch_loads_in_flight(int loads, F&& f) {
    if (loads == kDefaultLoadsInFlight) return f(std::integer_sequence<int>{});
    if constexpr (BLOCK == 256 && VEC * sizeof(T) == 16) {
        if (loads == 1) return f(std::integer_sequence<int, 1>{});
        if (loads == 2) return f(std::integer_sequence<int, 2>{});
        if (loads == 8) return f(std::integer_sequence<int, 8>{});
        if (loads == 16) return f(std::integer_sequence<int, 16>{});
    }
    throw std::invalid_argument("--loads " + std::to_string(loads) + " runs with --block 256 and 16-byte vectors only (" +
                                "--block " + std::to_string(BLOCK) + ", " + std::to_string(VEC * sizeof(T)) +
                                "-byte vectors given)");
}

// --grid: how many blocks, and how the tiles are shared among them. resident (reduce6's
// grid): no more blocks than fit on the GPU at once, each striding over the tiles. one-shot:
// one block per tile, each reading its tile once, the hardware's block scheduler starting
// the next block wherever a slot frees. auto (the default): resident, except int or float with
// an order-free finish (packed, int only; atomic) at block 512 and 16-byte loads on an input of at least
// eight waves of 64 KiB tiles: there one block per 64 KiB tile (8 loads a thread, the large
// tile below). Labelled "grid=resident" or "grid=one-shot" when chosen; --variants leaves it
// at the choice given. Why (docs/07-shuffles-vectors.md, Going deeper; H200s,
// docs/results/reduce7_h200_loads/ and reduce7_auto_4022ebb/): with packed at int 2^30, one
// block per 16 or 32 KiB tile read 12 and 5% below the resident grid, per 64 KiB tile of
// 1,024 x 4 level with it on two H200s and 0.7% above on two others, and per 64 KiB tile of this 512 x 8 build 0.45-0.9% above it
// (part of the small tiles' loss is packed's returning atomic: with --finish atomic 32 KiB
// read above the resident grid). Float's deterministic last-block makes a release (a fence)
// in every block, 7% slower than atomic at float 2^30 on this 512 x 8 one-shot grid. At 2^25
// the resident grid read faster, at 2^27 the large tile did, at 2^26 they were level or split
// by method: eight waves (2^27 and up on 132 SMs) is a choice between them. With atomic
// (one H200, three rounds, back to back) the large tile read 0.8% above the resident grid at
// int 2^30 and 0.4% at 2^28, level at 2^27, and a little below packed on it
// (docs/results/reduce7_atomic_ac135d7/); at float 2^30 and 2^28 0.5 and 0.3% above it, while
// float's two-pass and pdl on it read level or a little below at 2^30 and 0.2-0.3% below at
// 2^28, and int's pdl 0.06% below at 2^30 (int's two-pass not timed; another H200, both
// methods, docs/results/reduce7_float_large_54de28d/).
enum class Grid { Auto, Resident, OneShot };
constexpr std::string_view kGridChoices[] = {"auto", "resident", "one-shot"};  // in the order of enum Grid
constexpr Variant kGrid = {
    .name = "grid",
    .value_name = "G",
    .choices = kGridChoices,
    .help = "auto | resident | one-shot (resident: no more blocks than fit at once, each\n"
            "striding over the tiles, as reduce6; one-shot: one block per tile; default auto:\n"
            "resident, but for the packed (int) and atomic (int, float) finishes at block 512\n"
            "with 16-byte loads, from eight waves of 64 KiB tiles, one block per 64 KiB tile\n"
            "of 8 loads a thread; --loads 4, the only value at block 512, does not prevent\n"
            "it; --grid resident does)",
    .default_choice = "auto",
    .timed_by_variants = false,
};

// --grid auto's large tile: 8 loads a thread at block 512 (64 KiB), for int and float (the
// types it was timed with; double was not) and 16-byte loads.
constexpr int kLargeTileLoads = 8;
template <typename T, unsigned BLOCK, int VEC, int... LOADS>
constexpr bool has_large_tile() {
    return (std::is_same_v<T, int> || std::is_same_v<T, float>) && BLOCK == 512 && VEC * sizeof(T) == 16 &&
           sizeof...(LOADS) == 0;
}
// Whether --grid auto takes the large tile: the finish is packed or atomic (one add a block;
// last-block releases in every block; float's two-pass and pdl and int's pdl read level with
// or below the resident grid on it, int's two-pass was not timed:
// docs/results/reduce7_float_large_54de28d/), and
// the one-shot grid of large tiles is at least eight waves of the blocks that fit at once
// (`resident_large()` counts them; asked only when the rest holds).
template <typename ResidentLarge>
bool large_tile_pays(Finish finish, std::size_t large_tiles, ResidentLarge&& resident_large) {
    const bool order_free = finish == Finish::Packed || finish == Finish::Atomic;
    return order_free && large_tiles >= 8 && large_tiles >= 8ull * resident_large();
}

// The run's --finish, refused here when the type cannot run it (--finish packed: int only).
template <typename T>
Finish supported_finish(const RunConfig& config) {
    const Finish finish = chosen_as<Finish, T>(kFinish, config);
    if (const std::string why = kFinish.unsupported(kFinishChoices[static_cast<int>(finish)], value_type_of<T>());
        !why.empty()) {
        throw std::invalid_argument(why);
    }
    return finish;
}

// The elements one tile holds: LOADS vectors of VEC for each of BLOCK threads.
template <unsigned BLOCK, int VEC, int... LOADS>
constexpr std::size_t tile_elements() {
    return std::size_t(VEC) * loads_in_flight<LOADS...>() * BLOCK;
}

// The grid (its number of blocks) for `tiles` tiles: never more blocks than tiles of work (the last one partial),
// and on the resident grid no more than fit on the GPU at once (`resident()` counts them). A
// one-shot grid's last-block finish adds its partials in groups of BLOCK (group_size).
template <typename Resident>
unsigned choose_grid(Grid grid, std::size_t tiles, Resident&& resident) {
    if (grid == Grid::OneShot) {
        if (tiles > 0x7fffffffu) throw std::invalid_argument("a one-shot grid of more than 2^31 - 1 blocks");
        return static_cast<unsigned>(tiles);
    }
    return static_cast<unsigned>(std::min<std::size_t>(tiles, resident()));
}

// A kernel's shape, as the launcher's lambda receives it from dispatch_shape below.
template <unsigned BLOCK> using Block = std::integral_constant<unsigned, BLOCK>;
template <int VEC> using Vec = std::integral_constant<int, VEC>;
template <int... LOADS> using Loads = std::integer_sequence<int, LOADS...>;

// Call f(Block<BLOCK>, Vec<VEC>, Loads<LOADS...>) for the run's --block, --vec and --loads:
// one kernel per shape, chosen at run time.
template <typename T, typename F>
void dispatch_shape(const RunConfig& config, F&& f) {
    dispatch_block_size<32, 1024>(config.block, [&](auto block) {
        dispatch_vector_width<T>(chosen_number<T>(kVec, config), [&](auto vec) {
            dispatch_loads_in_flight<decltype(block)::value, decltype(vec)::value, T>(
                chosen_number<T>(kLoads, config), [&](auto loads) { f(block, vec, loads); });
        });
    });
}

constexpr Variant kVariants[] = {kVec, kFinish, kLoads, kGrid};
