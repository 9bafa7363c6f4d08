#include "peak_bandwidth.h"

#include <cstdio>

namespace {

struct KnownGpu {
    std::string_view name_part;  // matched as a substring; more specific names come first
    double gbps;                 // vendor datasheet
};

constexpr KnownGpu kKnownGpus[] = {
    {"H100 PCIe", 2039}, {"H100 NVL", 3938},     {"H100", 3352},       {"H200", 4800},
    {"A100-PCIE-40GB", 1555}, {"A100 80GB PCIe", 1935}, {"A100-SXM4-40GB", 1555}, {"A100", 2039},
    {"L40S", 864},       {"L40", 864},          {"L4", 300},            {"V100", 900},        {"T4", 320},
    {"RTX 5090", 1792},  {"RTX 4090", 1008},     {"RTX 4080", 717},    {"RTX 3090", 936},
    {"RTX A6000", 768},
};

}  // namespace

std::optional<double> peak_from_memory_clock(int memory_clock_khz, int bus_width_bits) {
    if (memory_clock_khz <= 0 || bus_width_bits <= 0) return std::nullopt;
    return memory_clock_khz * 1e3 * 2.0 * (bus_width_bits / 8.0) / 1e9;
}

std::optional<double> peak_from_known_gpus(std::string_view device_name) {
    for (const KnownGpu& gpu : kKnownGpus) {
        if (device_name.find(gpu.name_part) != std::string_view::npos) return gpu.gbps;
    }
    return std::nullopt;
}

PeakBandwidth choose_peak(std::optional<double> override_gbps, int memory_clock_khz, int bus_width_bits,
                          std::string_view device_name) {
    if (override_gbps) return {override_gbps, "given with --peak-gbps"};
    if (const auto peak = peak_from_memory_clock(memory_clock_khz, bus_width_bits)) {
        char source[128];
        std::snprintf(source, sizeof source, "memory clock %.0f MHz x 2 (DDR) x %d-bit bus", memory_clock_khz / 1e3,
                      bus_width_bits);
        return {peak, source};
    }
    if (const auto peak = peak_from_known_gpus(device_name)) {
        return {peak, "datasheet figure (the device reports no memory clock)"};
    }
    return {std::nullopt, "unknown: pass --peak-gbps to get percentages"};
}
