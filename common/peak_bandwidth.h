// The theoretical peak DRAM bandwidth every GB/s figure is compared with.
#pragma once

#include <optional>
#include <string>
#include <string_view>

struct PeakBandwidth {
    std::optional<double> gbps;  // nullopt when nothing is known: pass --peak-gbps
    std::string source;          // how it was obtained, printed under the device line
};

// DDR memory moves data on both clock edges: peak = clock x 2 x bus width in bytes.
// Returns nullopt when the device reports no clock or bus width (some virtual GPUs).
std::optional<double> peak_from_memory_clock(int memory_clock_khz, int bus_width_bits);

// Datasheet figures for GPUs whose attributes may be missing; matched on the device name.
std::optional<double> peak_from_known_gpus(std::string_view device_name);

// --peak-gbps first, then the memory attributes, then the table.
PeakBandwidth choose_peak(std::optional<double> override_gbps, int memory_clock_khz, int bus_width_bits,
                          std::string_view device_name);
