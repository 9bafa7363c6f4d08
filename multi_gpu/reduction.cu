// The sum across the GPUs (each its shard with reduce7, then an NCCL reduce or all-reduce of
// the partial sums), and the same sum on one GPU for the speedup.
#include <cstring>

#include "bandwidth.h"
#include "benchmark.h"
#include "device_input.h"
#include "nvlink.h"
#include "report.h"
#include "stages.h"
#include "stats.h"

#include "multi_gpu_internal.h"

// ---------------------------------------------------------------- the reduction

namespace {

// One GPU's part of the reduction: its shard, generated where it is summed, and its events.
template <typename T>
struct ShardOnGpu {
    TeamGpu& gpu;
    Shard shard;
    DeviceBuffer<T> values;
    DeviceBuffer<unsigned char> workspace;
    DeviceBuffer<T> result;  // the shard's sum, then (in place) the collective's
    CudaEvent flushed, start, local_done, stop;
    GpuRuns runs;

    // Allocates on the current device, which must be gpu's.
    ShardOnGpu(TeamGpu& gpu_, const Shard& shard_, const RunConfig& config)
        : gpu(gpu_),
          shard(shard_),
          values(shard_.count),
          workspace(reduce7_stage.workspace_bytes(shard_.count, sizeof(T), config)),
          result(1) {}
    ~ShardOnGpu() { cudaSetDevice(gpu.device); }  // the members are freed after this, on their GPU
};

// Run 0's partials, in rank order: they must add up to the exact sum, and the collective's
// result (where this process has one) must equal their sum. Fills result.partials_*.
template <typename T>
void check_partials(const std::vector<T>& partials, std::optional<double> collective_value, const ExpectedSum& want,
                    ReductionResult& result) {
    long double sum = 0;
    for (T partial : partials) sum += static_cast<long double>(partial);
    const long double exact = static_cast<long double>(want.exact);
    const std::string g = std::to_string(partials.size());
    if (sum != exact) {
        result.partials_ok = false;
        result.partials_check = "FAIL: the " + g + " partials (each GPU's sum of its shard, run 0) add up to " +
                                fixed(static_cast<double>(sum), 0) + ", not the exact sum " + std::to_string(want.exact);
        return;
    }
    std::string text = "the " + g + " partials (each GPU's sum of its shard, run 0) add up to the exact sum";
    if (collective_value) {
        if (static_cast<long double>(*collective_value) != sum) {
            result.partials_ok = false;
            result.partials_check = "FAIL: " + text + ", but the collective's result " + fixed(*collective_value, 0) +
                                    " is not their sum: did the collective combine them?";
            return;
        }
        text += ", and the collective's result equals it";
    } else {
        text += "; the collective's result is on rank 0's process";
    }
    if (partials.size() > 1) {
        for (std::size_t r = 0; r < partials.size(); ++r) {
            if (static_cast<long double>(partials[r]) == exact) {
                text += "; inconclusive for this input: rank " + std::to_string(r) +
                        "'s partial alone equals the total (the other shards sum to 0), so on that GPU a collective "
                        "that did nothing would pass";
                break;
            }
        }
    }
    result.partials_check = text;
}

}  // namespace

template <typename T>
ReductionResult reduce_across_gpus(Team& team, const ReductionRequest& request, std::shared_future<ExpectedSum> expected) {
    const std::size_t n = request.n;
    if (!expected.valid()) expected = std::async(std::launch::async, expected_sum<T>, n, request.seed, InputData::Integers);
    const RunConfig config = reduce7_config(value_type_of<T>());
    const SumFn<T> sum = reduce7_stage.sum<T>();

    // Each GPU generates its own shard: no input crosses a link, and the values are the
    // whole input's elements [begin, begin + count), the same as one GPU would sum.
    std::vector<std::unique_ptr<ShardOnGpu<T>>> parts;
    for (TeamGpu& gpu : team.gpus()) {
        CUDA_CHECK(cudaSetDevice(gpu.device));
        const Shard shard = shard_of(n, gpu.rank, team.ranks());
        MemoryPlan plan;  // NCCL's buffers and the flush buffer are allocated already
        plan.add("shard", shard.count * sizeof(T));
        plan.add("workspace", reduce7_stage.workspace_bytes(shard.count, sizeof(T), config));
        require_device_memory(plan, "GPU " + std::to_string(gpu.device) + ": its shard of " +
                                        values_text(n, value_type_of<T>()));
        auto part = std::make_unique<ShardOnGpu<T>>(gpu, shard, config);
        if (part->workspace.bytes()) {
            CUDA_CHECK(cudaMemsetAsync(part->workspace.get(), 0, part->workspace.bytes(), *gpu.stream));
        }
        generate_input_on_device(part->values.get(), shard.begin, shard.count, n, request.seed, InputData::Integers,
                                 *gpu.stream);
        part->runs.gpu = team.members()[static_cast<std::size_t>(gpu.rank)];
        part->runs.shard = shard;
        parts.push_back(std::move(part));
    }
    const ExpectedSum& want = expected.get();  // the host's sum ran while the GPUs generated
    ReductionResult result;
    result.n = n;
    result.type = value_type_of<T>();
    result.collective = request.collective;
    result.gate_after_flush = request.gate_after_flush;
    result.warmup = request.warmup;
    result.iters = request.iters;
    result.expected = want.exact;

    // Run 0 and the warm-ups are not timed; every run is checked.
    StartGate gate(team.gpus());
    // Run 0 copies each GPU's partial (its shard's sum) here before the collective.
    T* partials = nullptr;
    CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&partials), parts.size() * sizeof(T), cudaHostAllocPortable));
    const std::unique_ptr<T, cudaError_t (*)(void*)> free_partials(partials, cudaFreeHost);
    std::optional<double> collective_value;  // run 0's result on the first GPU here that gets it
    const int runs = 1 + request.warmup + request.iters;
    for (int run = 0; run < runs; ++run) {
        // With one process per GPU the processes meet first, then each opens its own gate:
        // the skew between processes is that of the barrier's return. (The barrier is an
        // NCCL all-reduce: enqueued behind the closed gate it would wait for the collective
        // of this run, which waits for the gate.)
        if (team.one_process_per_gpu()) team.barrier();
        // Run 0 (checked, not timed) runs with the gate open: the first launch of a kernel
        // loads its module (CUDA's lazy loading), which waits for the device, and so would
        // wait for a closed gate (seen on the H200s: run 0 waited for the gate's 2 s limit).
        if (run > 0) gate.close();
        // Each GPU: flush its L2 and poison its result (outside the timed region), the gate,
        // then the timed region: it sums its shard to one value...
        for (std::size_t i = 0; i < parts.size(); ++i) {
            ShardOnGpu<T>& part = *parts[i];
            TeamGpu& gpu = part.gpu;
            CUDA_CHECK(cudaSetDevice(gpu.device));
            gpu.flusher->flush(*gpu.stream);
            CUDA_CHECK(cudaMemsetAsync(part.result.get(), kPoisonByte, sizeof(T), *gpu.stream));
            CUDA_CHECK(cudaEventRecord(part.flushed, *gpu.stream));
            gate.enqueue(i, *gpu.stream);
            CUDA_CHECK(cudaEventRecord(part.start, *gpu.stream));
            std::size_t count = part.shard.count;
            if (gpu.rank == request.drop_last_element_of_rank && count > 0) --count;
            sum(part.values.get(), count, part.result.get(), part.workspace.get(), config, *gpu.stream);
            CUDA_CHECK(cudaEventRecord(part.local_done, *gpu.stream));
            if (run == 0) {
                CUDA_CHECK(cudaMemcpyAsync(&partials[i], part.result.get(), sizeof(T), cudaMemcpyDeviceToHost, *gpu.stream));
            }
        }
        // Every GPU's sum is enqueued: open the gate, so the GPUs start together, and only
        // then issue the collective. An NCCL call may wait for work already queued on its
        // stream (on the H200s the first gated run's ncclGroupEnd waited for the closed gate
        // until the gate's 2 s limit), so it must not be issued behind a closed gate. The
        // GPUs are summing their shards while the host issues it, so its launch stays hidden
        // unless a shard's sum is shorter than a launch (a few microseconds).
        if (request.gate_after_flush) {  // every GPU done flushing, waiting at its gate
            for (auto& part : parts) CUDA_CHECK(cudaEventSynchronize(part->flushed));
        }
        gate.open();
        // ... then one collective combines the G values, in place in each result.
        if (!request.skip_collective) {
            team.group([&](std::size_t i, TeamGpu& gpu) {
                T* value = parts[i]->result.get();
                if (request.collective == Collective::AllReduce) {
                    NCCL_CHECK(ncclAllReduce(value, value, 1, nccl_type<T>(), ncclSum, gpu.comm, *gpu.stream));
                } else {
                    NCCL_CHECK(ncclReduce(value, value, 1, nccl_type<T>(), ncclSum, /*root=*/0, gpu.comm, *gpu.stream));
                }
            });
        }
        std::vector<cudaEvent_t> stops;
        for (auto& part : parts) {
            CUDA_CHECK(cudaSetDevice(part->gpu.device));
            CUDA_CHECK(cudaEventRecord(part->stop, *part->gpu.stream));
            stops.push_back(part->stop);
        }
        team.wait(stops, "a timed run");

        // After the timed region: each GPU's times from its own events, and the checks.
        for (std::size_t i = 0; i < parts.size(); ++i) {
            ShardOnGpu<T>& part = *parts[i];
            CUDA_CHECK(cudaSetDevice(part.gpu.device));
            GpuRuns& mine = part.runs;
            const bool gave_up = gate.timed_out(i);
            if (run >= 1 + request.warmup) {
                mine.local_ms.push_back(elapsed_ms(part.start, part.local_done));
                mine.collective_ms.push_back(elapsed_ms(part.local_done, part.stop));
                mine.total_ms.push_back(elapsed_ms(part.start, part.stop));
            }
            // ncclReduce leaves the sum on the root only; the others keep their partial.
            if (request.collective == Collective::Reduce && part.gpu.rank != 0) {
                if (gave_up) {
                    ++mine.checked;
                    if (mine.failed++ == 0) mine.first_failure = kGateTimeoutText;
                }
                continue;
            }
            T got{};
            CUDA_CHECK(cudaMemcpy(&got, part.result.get(), sizeof(T), cudaMemcpyDeviceToHost));
            const SumCheck verdict = check_sum(got, want);
            if (run == 0 && part.gpu.rank == 0) result.value = verdict.value;
            if (run == 0 && !collective_value) collective_value = verdict.value;
            ++mine.checked;
            if (!verdict.ok && mine.failed++ == 0) mine.first_failure = verdict.detail;
            if (verdict.ok && gave_up && mine.failed++ == 0) mine.first_failure = kGateTimeoutText;
        }
    }

    // Run 0's partials: every rank's, in rank order (one process per GPU: an all-gather).
    std::vector<T> all_partials(partials, partials + parts.size());
    if (team.one_process_per_gpu()) {
        all_partials.clear();
        for (const std::string& bytes : team.all_gather(std::string(reinterpret_cast<const char*>(partials), sizeof(T)))) {
            T value{};
            std::memcpy(&value, bytes.data(), sizeof(T));
            all_partials.push_back(value);
        }
    }
    check_partials(all_partials, collective_value, want, result);

    // Every rank's runs, in rank order: here already, or from the other processes. One
    // ncclAllGather of each rank's packed runs (a few hundred bytes and 3 doubles per run),
    // rather than an ncclAllReduce(max) of the totals alone: then every rank has every GPU's
    // row, rank 0 prints the same table as one process does, and the run's time is the same
    // largest total per run (finish_reduction), whoever drives the GPUs.
    if (team.one_process_per_gpu()) {
        const std::string mine = pack_gpu_runs(parts.front()->runs, request.iters);
        for (const std::string& bytes : team.all_gather(mine)) {
            result.gpus.push_back(unpack_gpu_runs(bytes.data(), request.iters));
        }
    } else {
        for (auto& part : parts) result.gpus.push_back(part->runs);
    }
    for (auto& part : parts) part.reset();  // free each GPU's shard while it is current
    finish_reduction(result);
    return result;
}

template <typename T>
BaselineResult single_gpu_baseline(Team& team, const ReductionRequest& request, std::shared_future<ExpectedSum> expected) {
    BaselineResult baseline;
    TeamGpu* gpu = team.rank0();
    if (!gpu) {
        baseline.why_not = "timed by rank 0's process";
        return baseline;
    }
    baseline.device = gpu->device;
    baseline.device_name = gpu->info.name;
    const std::size_t n = request.n;
    if (!expected.valid()) expected = std::async(std::launch::async, expected_sum<T>, n, request.seed, InputData::Integers);
    CUDA_CHECK(cudaSetDevice(gpu->device));
    const RunConfig config = reduce7_config(value_type_of<T>());
    MemoryPlan plan;  // the flush buffer and NCCL's buffers are allocated already
    plan.add("input", n * sizeof(T));
    plan.add("workspace", reduce7_stage.workspace_bytes(n, sizeof(T), config));
    const DeviceMemory memory = device_memory();
    if (const auto shortfall = memory_shortfall(plan, "the whole input, " + values_text(n, value_type_of<T>()) + ",",
                                                memory.free_bytes, memory.total_bytes)) {
        baseline.why_not = "does not fit on GPU " + std::to_string(gpu->device) + ": " + *shortfall;
        return baseline;
    }
    DeviceInput<T> input{n, DeviceBuffer<T>(n), {}};
    generate_input_on_device(input.values.get(), 0, n, n, request.seed, InputData::Integers, *gpu->stream);
    input.expected = expected.get();
    CUDA_CHECK(cudaStreamSynchronize(*gpu->stream));

    Options options;  // bench_stage reads the run counts from the common options
    options.type = value_type_of<T>();
    options.warmup = request.warmup;
    options.iters = request.iters;
    BenchContext context{gpu->info, options, *gpu->flusher, *gpu->stream};
    const Record record = bench_stage(reduce7_stage, config, input, context);
    baseline.ran = true;
    baseline.runs = record.runs;
    baseline.median_ms = record.median_ms;
    baseline.min_ms = record.min_ms;
    baseline.max_ms = record.max_ms;
    baseline.gbps = record.gbps;
    baseline.pct_peak = record.pct_peak;
    baseline.peak_gbps = gpu->info.peak.gbps;
    baseline.checked = record.checked_runs;
    baseline.failed = record.failed_runs;
    baseline.check = record.check;
    return baseline;
}

#define INSTANTIATE(T)                                                                                       \
    template ReductionResult reduce_across_gpus<T>(Team&, const ReductionRequest&, std::shared_future<ExpectedSum>); \
    template BaselineResult single_gpu_baseline<T>(Team&, const ReductionRequest&, std::shared_future<ExpectedSum>);
INSTANTIATE(int)
INSTANTIATE(float)
INSTANTIATE(double)
