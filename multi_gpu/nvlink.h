// What the links between the GPUs can carry: the yardstick of the all-reduce's bus bandwidth.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "results.h"

// One GPU's NVLink bandwidth per direction: its active links (NVML) x one link's rate for
// its NVLink generation (bandwidth.h). `override_gbps` (--link-peak-gbps) wins. Unknown,
// with the reason, when the build has no NVML, NVML fails, or the GPU has no active link
// (then its peers are reached over PCIe or the network).
LinkPeak nvlink_peak(int device, std::optional<double> override_gbps);

// Whether the GPUs can read each other's memory directly, for every pair ("every pair of the
// 8 GPUs ...", or the pairs that cannot): NVLink or PCIe peer-to-peer. NCCL uses it where it can.
std::string peer_access_text(const std::vector<int>& devices);
