// reduce7's labelled variants, the experiments of docs/07-shuffles-vectors.md that show
// what each of its ideas is worth, kept apart from the lesson: --vec (the load's width),
// --finish (how the blocks' sums become one) and --loads (how many 16-byte loads each
// thread issues before it adds any). kernel.cu's launcher reads the choices; the kernel
// sees only kLoadsInFlight.
#pragma once

#include <stdexcept>
#include <string>
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
constexpr std::string_view kFinishChoices[] = {"two-pass", "atomic", "last-block", "pdl"};  // in the order of enum Finish
constexpr Variant kFinish = {
    .name = "finish",
    .value_name = "F",
    .choices = kFinishChoices,
    .help = "two-pass | atomic | last-block | pdl (default: atomic for int,\n"
            "last-block for float and double: the fastest that gives the same bits every run;\n"
            "pdl: two-pass with Programmatic Dependent Launch, compute capability 9.0 and newer)",
    // The fastest finish that gives the same bits on every run. Integer addition is
    // associative, so atomics are deterministic for int; for float and double the order of
    // the atomic adds varies from run to run, and so would the rounding.
    .default_for = [](ValueType type) -> std::string_view { return type == ValueType::Int32 ? "atomic" : "last-block"; },
    .needs_compute_capability = [](std::string_view finish) { return finish == "pdl" ? 90 : 0; },
    .always_labelled = true,
};


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
// shuffle_vector_single_pass<256u, 4, int>, which scripts/sass.sh and the profiles look for.
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
// What the compiler makes of it is another matter: ptxas issues only 4 of the 8 or 16
// loads before the first add (at most 5 outstanding; docs/results/grid_layout/sass_loads.txt),
// keeping registers low for occupancy, so past 4 the choice does not vary what it names.
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

constexpr Variant kVariants[] = {kVec, kFinish, kLoads};
