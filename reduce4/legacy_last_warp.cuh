// The pre-Volta last-warp unroll, kept to show what independent thread scheduling breaks.
// Do not copy this code: it is a data race on every GPU since Volta (docs/04-sync-removal.md).
//
// The classic version assumed that the 32 threads of a warp execute each instruction
// together, so that every lane's `+=` lands before any lane reads for the next line.
#pragma once

#include "stage.h"  // Variant (common/variant.h)

// How warp 0 sums the block's last 64 values (reduce4's --last-warp).
enum class LastWarp {
    SyncWarp,        // correct on every GPU: __syncwarp() orders each step (kernel.cu)
    LegacyVolatile,  // pre-Volta code: volatile, no __syncwarp(); a data race since Volta
    LegacyPlain,     // pre-Volta code without even volatile: the compiler caches values
};

template <LastWarp MODE, typename T>
__device__ T legacy_last_warp_sum(T* shared, unsigned tid) {
    if constexpr (MODE == LastWarp::LegacyVolatile) {
        // volatile makes every access a real load or store, in program order, so the code
        // works as long as the lanes happen to run in step. Nothing guarantees they do.
        volatile T* v = shared;
        // C++20 deprecates `+=` on a volatile; this is the classic code as it was written.
#pragma nv_diag_suppress 3012
        v[tid] += v[tid + 32];
        v[tid] += v[tid + 16];
        v[tid] += v[tid + 8];
        v[tid] += v[tid + 4];
        v[tid] += v[tid + 2];
        v[tid] += v[tid + 1];
#pragma nv_diag_default 3012
        return v[tid];
    } else {
        // Without volatile the compiler may keep shared[tid] in a register and load the
        // neighbors' slots before they were written: a wrong sum even in lockstep.
        shared[tid] += shared[tid + 32];
        shared[tid] += shared[tid + 16];
        shared[tid] += shared[tid + 8];
        shared[tid] += shared[tid + 4];
        shared[tid] += shared[tid + 2];
        shared[tid] += shared[tid + 1];
        return shared[tid];
    }
}

// --last-warp, reduce4's labelled variant (common/variant.h), read by kernel.cu's
// launcher: a result is labelled "last-warp=legacy-plain". --variants leaves it at the
// choice given: the legacy modes are races, whose wrong sums would fail the run.
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
