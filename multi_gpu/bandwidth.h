// What an all-reduce moves, and what the links between GPUs can move. Pure host arithmetic.
//
// NCCL reports two bandwidths for a collective (nccl-tests, doc/PERFORMANCE.md):
//
//   algbw = S / t            S = the bytes of one GPU's vector, t = the collective's time
//   busbw = algbw x 2(G-1)/G for an all-reduce
//
// A ring all-reduce over G GPUs is a reduce-scatter then an all-gather: each GPU sends
// (G-1)/G of its vector in each half, 2(G-1)/G x S bytes in all, over its link. busbw is
// therefore what each GPU's link carried per second, comparable with the link's peak for
// any G, where algbw falls as G grows even on a perfect fabric.
#pragma once

#include <cstddef>
#include <optional>

// bytes / ms, in GB/s (10^9 bytes per second, as every GB/s of this project).
inline double gbps(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e-3) / 1e9 : 0; }

// The all-reduce's bus-bandwidth factor 2(G-1)/G: 0 for one GPU (nothing crosses a link),
// 1 for two, approaching 2 for many.
inline double allreduce_bus_factor(int gpus) { return gpus > 0 ? 2.0 * (gpus - 1) / gpus : 0; }

inline double allreduce_algbw_gbps(std::size_t bytes, double ms) { return gbps(static_cast<double>(bytes), ms); }
inline double allreduce_busbw_gbps(std::size_t bytes, double ms, int gpus) {
    return allreduce_algbw_gbps(bytes, ms) * allreduce_bus_factor(gpus);
}

// ---------------------------------------------------------------- NVLink peaks
// NVML's nvmlDeviceGetNvLinkVersion returns a number whose meaning changed: older drivers
// return the NVLink generation itself (Hopper: 4), newer ones nvmlNvlinkVersion_t
// (NVML_NVLINK_VERSION_4_0 = 6). The two readings differ only where the GPU's compute
// capability tells them apart, so the generation is decided with it: 0 when unknown.
inline int nvlink_generation(unsigned nvml_version, int cc_major) {
    switch (nvml_version) {
        case 1: return 1;                          // Pascal (P100)
        case 2: return 2;                          // Volta (V100)
        case 3: return cc_major >= 8 ? 3 : 2;      // generation 3, or enum 2.2
        case 4: return cc_major >= 9 ? 4 : 3;      // generation 4 (Hopper), or enum 3.0 (Ampere)
        case 5: return cc_major >= 10 ? 5 : 3;     // generation 5 (Blackwell), or enum 3.1
        case 6: return 4;                          // NVML_NVLINK_VERSION_4_0
        case 7: return 5;                          // NVML_NVLINK_VERSION_5_0
        default: return 0;
    }
}

// One link's data rate in each direction, GB/s: NVLink 1 moves 20 GB/s per direction per
// link (P100: 4 links), NVLink 2, 3 and 4 move 25 (V100: 6 links, A100: 12, H100: 18,
// 450 GB/s per direction, the "900 GB/s" of the datasheet counting both), NVLink 5 moves
// 50 (B200: 18 links, 900 GB/s per direction).
inline std::optional<double> nvlink_gbps_per_link(int generation) {
    if (generation == 1) return 20.0;
    if (generation >= 2 && generation <= 4) return 25.0;
    if (generation == 5) return 50.0;
    return std::nullopt;
}
