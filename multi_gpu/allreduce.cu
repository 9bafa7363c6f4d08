// The all-reduce of a float vector across the GPUs: NCCL's own bandwidth, beside the sum.
#include <algorithm>
#include <cstring>
#include <set>

#include "bandwidth.h"
#include "benchmark.h"
#include "device_input.h"
#include "nvlink.h"
#include "report.h"
#include "stages.h"
#include "stats.h"

#include "multi_gpu_internal.h"

// ---------------------------------------------------------------- the all-reduce of a vector

namespace {

__global__ void fill_allreduce_vector(float* values, std::size_t count, int rank) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x) {
        values[i] = allreduce_test_value(rank, i);
    }
}

// Counts the elements that are not the sum over the G ranks' values.
__global__ void count_allreduce_mismatches(const float* values, std::size_t count, int ranks,
                                           unsigned long long* mismatches) {
    unsigned long long mine = 0;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x) {
        float want = 0;
        for (int rank = 0; rank < ranks; ++rank) want += allreduce_test_value(rank, i);
        if (values[i] != want) ++mine;
    }
    if (mine) atomicAdd(mismatches, mine);
}

float allreduce_expected_value(int ranks, std::size_t i) {
    float want = 0;
    for (int rank = 0; rank < ranks; ++rank) want += allreduce_test_value(rank, i);
    return want;
}

struct VectorOnGpu {
    TeamGpu& gpu;
    DeviceBuffer<float> values;
    DeviceBuffer<unsigned long long> mismatches;  // counted by the check kernel
    CudaEvent start, stop;
    unsigned long long wrong = 0;  // elements found wrong, on the GPU or by the host
    std::vector<double> ms;        // per timed run

    VectorOnGpu(TeamGpu& gpu_, std::size_t elements) : gpu(gpu_), values(elements), mismatches(1) {}
    ~VectorOnGpu() { cudaSetDevice(gpu.device); }
};

// Counts the received elements that are not the sender's values.
__global__ void count_copy_mismatches(const float* received, std::size_t count, int sender,
                                      unsigned long long* mismatches) {
    unsigned long long mine = 0;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x) {
        if (received[i] != allreduce_test_value(sender, i)) ++mine;
    }
    if (mine) atomicAdd(mismatches, mine);
}

// Every GPU copies its S-byte vector to the next GPU's receive buffer while the previous
// GPU copies into its own: each link carries S bytes in each direction at once, as a ring
// all-reduce of G = 2 does (2(G-1)/G x S = S), but with no reduction and no protocol. Run
// before the all-reduce, on the freshly filled vectors, so that every received element can
// be checked against the sender's value. The receive buffers are not in the plan checked at
// start: where one does not fit, the copy is skipped with the reason.
void measure_peer_copy(Team& team, std::vector<std::unique_ptr<VectorOnGpu>>& parts, const AllReduceRequest& request,
                       StartGate& gate, unsigned blocks, AllReduceResult& result) {
    const std::size_t count = request.elements;
    const std::size_t g = parts.size();
    std::vector<DeviceBuffer<float>> received;
    const auto free_received = [&] {
        for (std::size_t i = 0; i < received.size(); ++i) {
            CUDA_CHECK(cudaSetDevice(parts[i]->gpu.device));
            received[i] = DeviceBuffer<float>();
        }
    };
    for (auto& part : parts) {
        CUDA_CHECK(cudaSetDevice(part->gpu.device));
        MemoryPlan plan;
        plan.add("peer copy receive buffer", result.bytes);
        const DeviceMemory memory = device_memory();
        if (const auto shortfall = memory_shortfall(plan, "GPU " + std::to_string(part->gpu.device) + ": the peer copy of " +
                                                              with_thousands(count) + " floats",
                                                    memory.free_bytes, memory.total_bytes)) {
            free_received();
            result.peer_copy_why_not = "its receive buffer does not fit beside the all-reduce's vector: " + *shortfall;
            return;
        }
        received.emplace_back(count);
        // Direct copies over NVLink need peer access (NCCL may have enabled it already).
        for (auto& other : parts) {
            if (other.get() == part.get()) continue;
            int can = 0;
            CUDA_CHECK(cudaDeviceCanAccessPeer(&can, part->gpu.device, other->gpu.device));
            if (!can) continue;
            const cudaError_t status = cudaDeviceEnablePeerAccess(other->gpu.device, 0);
            if (status == cudaErrorPeerAccessAlreadyEnabled) {
                cudaGetLastError();
            } else {
                CUDA_CHECK(status);
            }
        }
    }
    std::vector<cudaEvent_t> stops;
    for (auto& part : parts) stops.push_back(part->stop);
    std::vector<double> run_ms(static_cast<std::size_t>(request.iters), 0.0);
    for (int run = 0; run < request.warmup + request.iters; ++run) {
        if (run > 0) gate.close();  // run 0 (a warm-up) ungated, as for the reduction
        for (std::size_t i = 0; i < g; ++i) {
            VectorOnGpu& from = *parts[i];
            VectorOnGpu& to = *parts[(i + 1) % g];
            CUDA_CHECK(cudaSetDevice(from.gpu.device));
            gate.enqueue(i, *from.gpu.stream);
            CUDA_CHECK(cudaEventRecord(from.start, *from.gpu.stream));
            CUDA_CHECK(cudaMemcpyPeerAsync(received[(i + 1) % g].get(), to.gpu.device, from.values.get(),
                                           from.gpu.device, result.bytes, *from.gpu.stream));
            CUDA_CHECK(cudaEventRecord(from.stop, *from.gpu.stream));
        }
        gate.open();
        team.wait(stops, "a timed peer copy");
        for (std::size_t i = 0; i < g; ++i) {
            if (gate.timed_out(i) && run >= request.warmup) ++result.peer_copy_gate_timeouts;
        }
        if (run < request.warmup) continue;
        for (auto& part : parts) {
            run_ms[static_cast<std::size_t>(run - request.warmup)] =
                std::max<double>(run_ms[static_cast<std::size_t>(run - request.warmup)], elapsed_ms(part->start, part->stop));
        }
    }
    // The copy is checked too: every GPU received the previous GPU's vector, every element
    // compared on the receiving GPU with the sender's value.
    std::vector<cudaEvent_t> checked;
    for (std::size_t i = 0; i < g; ++i) {
        VectorOnGpu& to = *parts[(i + 1) % g];
        CUDA_CHECK(cudaSetDevice(to.gpu.device));
        CUDA_CHECK(cudaMemsetAsync(to.mismatches.get(), 0, sizeof(unsigned long long), *to.gpu.stream));
        count_copy_mismatches<<<blocks, 256, 0, *to.gpu.stream>>>(received[(i + 1) % g].get(), count,
                                                                  parts[i]->gpu.rank, to.mismatches.get());
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaEventRecord(to.stop, *to.gpu.stream));
    }
    team.wait(stops, "the check of the peer copy");
    for (auto& part : parts) {
        CUDA_CHECK(cudaSetDevice(part->gpu.device));
        unsigned long long wrong = 0;
        CUDA_CHECK(cudaMemcpy(&wrong, part->mismatches.get(), sizeof wrong, cudaMemcpyDeviceToHost));
        result.peer_copy_mismatches += wrong;
        result.peer_copy_checked += count;
        // Clean for the all-reduce's check.
        CUDA_CHECK(cudaMemsetAsync(part->mismatches.get(), 0, sizeof(unsigned long long), *part->gpu.stream));
    }
    free_received();
    result.peer_copy = summarize(run_ms);
    result.peer_copy_gbps = allreduce_algbw_gbps(result.bytes, result.peer_copy->median);
}

}  // namespace

AllReduceResult allreduce_vector(Team& team, const AllReduceRequest& request) {
    AllReduceResult result;
    result.gpus = team.ranks();
    result.elements = request.elements;
    result.bytes = request.elements * sizeof(float);
    if (team.ranks() < 2) {
        result.why_not = "one GPU: an all-reduce over one GPU moves nothing (busbw = algbw x 2(G-1)/G = 0)";
        return result;
    }
    const std::size_t count = request.elements;
    if (count == 0) throw std::invalid_argument("the all-reduce needs a vector of at least one float");
    const auto blocks = static_cast<unsigned>(std::min<std::size_t>((count + 255) / 256, 4096));
    std::vector<std::unique_ptr<VectorOnGpu>> parts;
    for (TeamGpu& gpu : team.gpus()) {
        CUDA_CHECK(cudaSetDevice(gpu.device));
        MemoryPlan plan;
        plan.add("all-reduce vector", result.bytes);
        require_device_memory(plan, "GPU " + std::to_string(gpu.device) + ": the all-reduce of " +
                                        with_thousands(count) + " floats");
        parts.push_back(std::make_unique<VectorOnGpu>(gpu, count));
        fill_allreduce_vector<<<blocks, 256, 0, *gpu.stream>>>(parts.back()->values.get(), count, gpu.rank);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaMemsetAsync(parts.back()->mismatches.get(), 0, sizeof(unsigned long long), *gpu.stream));
    }
    StartGate gate(team.gpus());

    // A reference for the links first, while the vectors hold each rank's own values: the
    // same bytes over the same links by the copy engines alone.
    if (team.one_process_per_gpu()) {
        result.peer_copy_why_not = "one process per GPU: no process sees two GPUs to copy between";
    } else {
        measure_peer_copy(team, parts, request, gate, blocks, result);
    }

    auto all_reduce = [&] {
        team.group([&](std::size_t i, TeamGpu& gpu) {
            float* values = parts[i]->values.get();
            NCCL_CHECK(ncclAllReduce(values, values, count, ncclFloat32, ncclSum, gpu.comm, *gpu.stream));
        });
    };

    // Correctness next: one all-reduce (not gated: NCCL's first call sets up its connections),
    // then every element of every GPU's vector compared with the sum over the G ranks'
    // values, on the GPU; and the first and last element on the host, in case the check
    // kernel itself is wrong.
    all_reduce();
    std::vector<cudaEvent_t> stops;
    for (auto& part : parts) {
        CUDA_CHECK(cudaSetDevice(part->gpu.device));
        count_allreduce_mismatches<<<blocks, 256, 0, *part->gpu.stream>>>(part->values.get(), count, team.ranks(),
                                                                            part->mismatches.get());
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaEventRecord(part->stop, *part->gpu.stream));
        stops.push_back(part->stop);
    }
    team.wait(stops, "the checked all-reduce");
    for (auto& part : parts) {
        CUDA_CHECK(cudaSetDevice(part->gpu.device));
        CUDA_CHECK(cudaMemcpy(&part->wrong, part->mismatches.get(), sizeof part->wrong, cudaMemcpyDeviceToHost));
        for (std::size_t i : {std::size_t{0}, count - 1}) {
            float got = 0;
            CUDA_CHECK(cudaMemcpy(&got, part->values.get() + i, sizeof got, cudaMemcpyDeviceToHost));
            if (got != allreduce_expected_value(team.ranks(), i) && part->wrong == 0) part->wrong = 1;
        }
    }

    // Then the timed runs, each enqueued whole behind the start gate (as for the reduction).
    // The vector is not refilled: each run sums the previous run's results, so the values
    // grow (positive, they can reach +inf but never NaN), and an all-reduce takes the same
    // time whatever the values. No L2 flush either: a 1 GiB vector is 20 times an H100's L2,
    // and NCCL's own benchmarks (nccl-tests) do not flush.
    std::vector<int> gate_timeouts(parts.size(), 0);
    for (int run = 0; run < request.warmup + request.iters; ++run) {
        if (team.one_process_per_gpu()) team.barrier();  // then each process opens its own gate
        if (run > 0) gate.close();  // run 0 (a warm-up) ungated, as for the reduction
        for (std::size_t i = 0; i < parts.size(); ++i) {
            CUDA_CHECK(cudaSetDevice(parts[i]->gpu.device));
            gate.enqueue(i, *parts[i]->gpu.stream);
            CUDA_CHECK(cudaEventRecord(parts[i]->start, *parts[i]->gpu.stream));
        }
        // Open before the collective is issued (see the reduction above): the gate aligns the
        // GPUs' start events, and the collective's launch is part of the timed region.
        gate.open();
        all_reduce();
        for (auto& part : parts) {
            CUDA_CHECK(cudaSetDevice(part->gpu.device));
            CUDA_CHECK(cudaEventRecord(part->stop, *part->gpu.stream));
        }
        team.wait(stops, "a timed all-reduce");
        for (std::size_t i = 0; i < parts.size(); ++i) {
            if (gate.timed_out(i) && run >= request.warmup) ++gate_timeouts[i];
        }
        if (run < request.warmup) continue;
        for (auto& part : parts) part->ms.push_back(elapsed_ms(part->start, part->stop));
    }

    // The run's time is the slowest GPU's, as for the reduction. Every rank packs its times,
    // its mismatch count and its gate timeouts; one process has them all already.
    std::vector<std::vector<double>> per_gpu;  // [elements wrong, elements checked, gate timeouts, times ...]
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const VectorOnGpu& part = *parts[i];
        std::vector<double> mine = {static_cast<double>(part.wrong), static_cast<double>(count),
                                    static_cast<double>(gate_timeouts[i])};
        mine.insert(mine.end(), part.ms.begin(), part.ms.end());
        per_gpu.push_back(mine);
    }
    if (team.one_process_per_gpu()) {
        const std::vector<double>& mine = per_gpu.front();
        std::string bytes(mine.size() * sizeof(double), '\0');
        std::memcpy(bytes.data(), mine.data(), bytes.size());
        per_gpu.clear();
        for (const std::string& theirs : team.all_gather(bytes)) {
            std::vector<double> values(theirs.size() / sizeof(double));
            std::memcpy(values.data(), theirs.data(), values.size() * sizeof(double));
            per_gpu.push_back(values);
        }
    }
    result.run_ms.assign(static_cast<std::size_t>(request.iters), 0.0);
    for (const std::vector<double>& gpu : per_gpu) {
        result.mismatches += static_cast<unsigned long long>(gpu[0]);
        result.checked_elements += static_cast<std::size_t>(gpu[1]);
        result.gate_timeouts += static_cast<int>(gpu[2]);
        for (std::size_t i = 0; i < result.run_ms.size(); ++i) result.run_ms[i] = std::max(result.run_ms[i], gpu[3 + i]);
    }
    result.run = summarize(result.run_ms);
    result.algbw_gbps = allreduce_algbw_gbps(result.bytes, result.run.median);
    result.busbw_gbps = allreduce_busbw_gbps(result.bytes, result.run.median, team.ranks());
    result.check = result.mismatches == 0 ? "exact" : with_thousands(result.mismatches) + " elements wrong";
    if (result.gate_timeouts) {
        result.check += "; " + std::to_string(result.gate_timeouts) + " timed GPU runs failed: " + kGateTimeoutText;
    }

    // The links: the slowest of this process's GPUs bounds the bus bandwidth.
    std::vector<int> devices;
    for (TeamGpu& gpu : team.gpus()) {
        devices.push_back(gpu.device);
        const LinkPeak link = nvlink_peak(gpu.device, request.link_peak_gbps);
        if (devices.size() == 1 || (link.gbps && (!result.link.gbps || *link.gbps < *result.link.gbps))) result.link = link;
    }
    if (!team.one_process_per_gpu()) result.peer_access = peer_access_text(devices);
    std::set<std::string> hosts;
    for (const RankInfo& member : team.members()) hosts.insert(member.host);
    result.across_machines = hosts.size() > 1;
    for (auto& part : parts) part.reset();
    result.ran = true;
    return result;
}
