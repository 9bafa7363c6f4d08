#include "results.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

void finish_reduction(ReductionResult& result) {
    result.run_ms.assign(static_cast<std::size_t>(result.iters), 0.0);
    result.checked = result.failed = 0;
    result.check.clear();
    for (const GpuRuns& gpu : result.gpus) {
        for (std::size_t i = 0; i < result.run_ms.size() && i < gpu.total_ms.size(); ++i) {
            result.run_ms[i] = std::max(result.run_ms[i], gpu.total_ms[i]);
        }
        result.checked += gpu.checked;
        result.failed += gpu.failed;
        if (gpu.failed && result.check.empty()) {
            result.check = "rank " + std::to_string(gpu.gpu.rank) + ": " + gpu.first_failure;
        }
    }
    result.run = summarize(result.run_ms);
    if (result.check.empty()) result.check = result.checked ? "exact" : "not checked";
}

// ---------------------------------------------------------------- the ranks' exchange

namespace {

// The fixed part of one rank's GpuRuns; the per-run times follow it as doubles.
struct PackedHeader {
    std::int32_t rank, device, checked, failed, has_peak;
    double peak_gbps;
    std::uint64_t shard_begin, shard_count;
    char device_name[96];
    char host[64];
    char first_failure[256];
};

template <std::size_t N>
void copy_text(char (&to)[N], const std::string& from) {
    const std::size_t count = std::min(from.size(), N - 1);
    std::memcpy(to, from.data(), count);
    to[count] = '\0';
}

}  // namespace

std::size_t packed_gpu_runs_bytes(int iters) {
    return sizeof(PackedHeader) + 3 * static_cast<std::size_t>(iters) * sizeof(double);
}

std::string pack_gpu_runs(const GpuRuns& runs, int iters) {
    PackedHeader header{};
    header.rank = runs.gpu.rank;
    header.device = runs.gpu.device;
    header.checked = runs.checked;
    header.failed = runs.failed;
    header.has_peak = runs.gpu.peak_gbps.has_value();
    header.peak_gbps = runs.gpu.peak_gbps.value_or(0);
    header.shard_begin = runs.shard.begin;
    header.shard_count = runs.shard.count;
    copy_text(header.device_name, runs.gpu.device_name);
    copy_text(header.host, runs.gpu.host);
    copy_text(header.first_failure, runs.first_failure);
    std::string bytes(packed_gpu_runs_bytes(iters), '\0');
    std::memcpy(bytes.data(), &header, sizeof header);
    char* times = bytes.data() + sizeof header;
    for (const std::vector<double>* series : {&runs.local_ms, &runs.collective_ms, &runs.total_ms}) {
        std::vector<double> padded(*series);
        padded.resize(static_cast<std::size_t>(iters), 0.0);
        std::memcpy(times, padded.data(), padded.size() * sizeof(double));
        times += padded.size() * sizeof(double);
    }
    return bytes;
}

GpuRuns unpack_gpu_runs(const char* bytes, int iters) {
    PackedHeader header{};
    std::memcpy(&header, bytes, sizeof header);
    GpuRuns runs;
    runs.gpu.rank = header.rank;
    runs.gpu.device = header.device;
    runs.checked = header.checked;
    runs.failed = header.failed;
    if (header.has_peak) runs.gpu.peak_gbps = header.peak_gbps;
    runs.shard = {static_cast<std::size_t>(header.shard_begin), static_cast<std::size_t>(header.shard_count)};
    // The packer wrote the terminating zeros; strnlen guards against a damaged record all the same.
    runs.gpu.device_name.assign(header.device_name, strnlen(header.device_name, sizeof header.device_name));
    runs.gpu.host.assign(header.host, strnlen(header.host, sizeof header.host));
    runs.first_failure.assign(header.first_failure, strnlen(header.first_failure, sizeof header.first_failure));
    const char* times = bytes + sizeof header;
    for (std::vector<double>* series : {&runs.local_ms, &runs.collective_ms, &runs.total_ms}) {
        series->resize(static_cast<std::size_t>(iters));
        std::memcpy(series->data(), times, series->size() * sizeof(double));
        times += series->size() * sizeof(double);
    }
    return runs;
}
