#include "nvlink.h"

#include <cuda_runtime_api.h>

#include <cstdio>

#include "bandwidth.h"
#include "cuda_check.h"

#ifdef REDUCTION_HAVE_NVML
#include <nvml.h>
#endif

namespace {

#ifdef REDUCTION_HAVE_NVML
std::string number(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.0f", value);
    return text;
}

LinkPeak nvlink_peak_from_nvml(int device) {
    // NVML numbers GPUs its own way (all of them, in PCI order); CUDA numbers the visible
    // ones (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER). The PCI bus id names the same GPU in both.
    char bus_id[32] = {};
    CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
    int cc_major = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, device));
    nvmlReturn_t status = nvmlInit_v2();
    if (status != NVML_SUCCESS) return {std::nullopt, std::string("NVLink peak unknown: NVML: ") + nvmlErrorString(status)};
    nvmlDevice_t handle{};
    status = nvmlDeviceGetHandleByPciBusId_v2(bus_id, &handle);
    int links = 0;
    unsigned version = 0;
    if (status == NVML_SUCCESS) {
        for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
            nvmlEnableState_t active = NVML_FEATURE_DISABLED;
            if (nvmlDeviceGetNvLinkState(handle, link, &active) != NVML_SUCCESS || active != NVML_FEATURE_ENABLED) continue;
            if (links++ == 0 && nvmlDeviceGetNvLinkVersion(handle, link, &version) != NVML_SUCCESS) version = 0;
        }
    }
    nvmlShutdown();
    if (status != NVML_SUCCESS) {
        return {std::nullopt, std::string("NVLink peak unknown: NVML finds no GPU at ") + bus_id + ": " +
                                  nvmlErrorString(status)};
    }
    if (links == 0) return {std::nullopt, "NVLink peak unknown: NVML finds no active NVLink on this GPU"};
    const int generation = nvlink_generation(version, cc_major);
    const auto per_link = nvlink_gbps_per_link(generation);
    if (!per_link) {
        return {std::nullopt, "NVLink peak unknown: " + std::to_string(links) + " active links of NVML version " +
                                  std::to_string(version) + ", whose rate this program does not know (--link-peak-gbps)"};
    }
    return {links * *per_link, std::to_string(links) + " active NVLink " + std::to_string(generation) + " links x " +
                                   number(*per_link) + " GB/s (NVML, version value " + std::to_string(version) + ")"};
}
#endif

}  // namespace

LinkPeak nvlink_peak(int device, std::optional<double> override_gbps) {
    if (override_gbps) return {override_gbps, "--link-peak-gbps"};
#ifdef REDUCTION_HAVE_NVML
    return nvlink_peak_from_nvml(device);
#else
    (void)device;
    return {std::nullopt, "NVLink peak unknown: built without NVML (the CUDA Toolkit's nvml.h and CUDA::nvml)"};
#endif
}

std::string peer_access_text(const std::vector<int>& devices) {
    int pairs = 0, both_ways = 0;
    std::string without;  // the pairs that lack it
    for (std::size_t a = 0; a < devices.size(); ++a) {
        for (std::size_t b = a + 1; b < devices.size(); ++b) {
            int ab = 0, ba = 0;
            CUDA_CHECK(cudaDeviceCanAccessPeer(&ab, devices[a], devices[b]));
            CUDA_CHECK(cudaDeviceCanAccessPeer(&ba, devices[b], devices[a]));
            ++pairs;
            if (ab && ba) {
                ++both_ways;
            } else {
                without += std::string(without.empty() ? "" : ", ") + std::to_string(devices[a]) + "<->" +
                           std::to_string(devices[b]) + (ab || ba ? " (one way)" : "");
            }
        }
    }
    if (pairs == 0) return "";
    if (both_ways == pairs) {
        return pairs == 1 ? "the two GPUs can access each other's memory as peers"
                          : "every pair of the " + std::to_string(devices.size()) + " GPUs can access each other's memory as peers";
    }
    return "peer access between " + std::to_string(both_ways) + " of " + std::to_string(pairs) +
           " pairs of GPUs; not between " + without;
}
