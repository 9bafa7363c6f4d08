#include "device_info.h"

#include <cuda_runtime.h>

#include <cstdio>

#include "cuda_check.h"

DeviceInfo open_device(int device, std::optional<double> peak_override_gbps) {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0) {
        throw CudaError(std::string("no CUDA device found: ") +
                        (status != cudaSuccess ? cudaGetErrorString(status) : "the driver reports zero devices") +
                        " (without a GPU, the host tests and the --explain of reduce0 ... reduce3 still run)");
    }
    if (device >= count) {
        throw CudaError("--device " + std::to_string(device) + ": this machine has " + std::to_string(count) +
                        " CUDA device(s), numbered from 0");
    }
    CUDA_CHECK(cudaSetDevice(device));
    DeviceInfo info;
    info.id = device;
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    info.name = prop.name;
    info.cc_major = prop.major;
    info.cc_minor = prop.minor;
    info.sms = prop.multiProcessorCount;
    info.memory_bytes = prop.totalGlobalMem;
    int l2 = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    info.l2_bytes = static_cast<std::size_t>(l2);
    // Some virtualized devices report 0 here: choose_peak then falls back to the table.
    if (cudaDeviceGetAttribute(&info.memory_clock_khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&info.bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess) {
        cudaGetLastError();
        info.memory_clock_khz = info.bus_width_bits = 0;
    }
    info.peak = choose_peak(peak_override_gbps, info.memory_clock_khz, info.bus_width_bits, info.name);
    CUDA_CHECK(cudaRuntimeGetVersion(&info.runtime_version));
    CUDA_CHECK(cudaDriverGetVersion(&info.driver_version));
    return info;
}

std::string describe_device(const DeviceInfo& d) {
    char text[256];
    std::snprintf(text, sizeof text, "%s (sm_%d%d, %d SMs, %.0f MiB L2, %.1f GiB)", d.name.c_str(), d.cc_major,
                  d.cc_minor, d.sms, d.l2_bytes / 1048576.0, d.memory_bytes / 1073741824.0);
    return text;
}

std::string describe_peak(const DeviceInfo& d) {
    if (!d.peak.gbps) return d.peak.source;
    char text[256];
    std::snprintf(text, sizeof text, "%.0f GB/s theoretical: %s", *d.peak.gbps, d.peak.source.c_str());
    return text;
}

std::string describe_software(const DeviceInfo& d) {
    char text[128];
    std::snprintf(text, sizeof text, "CUDA runtime %d.%d, driver supports CUDA %d.%d", d.runtime_version / 1000,
                  d.runtime_version % 1000 / 10, d.driver_version / 1000, d.driver_version % 1000 / 10);
    return text;
}
