// The GPU the program runs on, and its theoretical peak bandwidth.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "peak_bandwidth.h"

struct DeviceInfo {
    int id = 0;
    std::string name;
    int cc_major = 0, cc_minor = 0;
    int sms = 0;
    std::size_t l2_bytes = 0;
    std::size_t memory_bytes = 0;
    int memory_clock_khz = 0;
    int bus_width_bits = 0;
    PeakBandwidth peak;
    int runtime_version = 0, driver_version = 0;  // 13000 = 13.0
};

// Selects the device and reads its properties. Throws CudaError when there is no usable
// GPU (no driver, no device, an index past the last device).
DeviceInfo open_device(int device, std::optional<double> peak_override_gbps);

// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 50 MiB L2, 79.2 GiB)"
std::string describe_device(const DeviceInfo& device);
// "3352 GB/s theoretical: memory clock 2619 MHz x 2 (DDR) x 5120-bit bus"
std::string describe_peak(const DeviceInfo& device);
// "CUDA runtime 13.0, driver 13.0"
std::string describe_software(const DeviceInfo& device);
