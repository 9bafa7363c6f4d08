#include "benchmark.h"

#include "bench_record.h"

using namespace bench_detail;

namespace {

// The label of a stage's labelled variant; empty for a stage at its defaults.
std::string variant_of(const Stage& stage, const RunConfig& config) {
    if (stage.takes_vec_and_finish) {
        return "vec=" + std::to_string(config.vec) + " finish=" + std::string(finish_name(config.finish));
    }
    if (stage.takes_last_warp && config.last_warp != LastWarp::SyncWarp) {
        return "last-warp=" + std::string(last_warp_name(config.last_warp));
    }
    if (stage.takes_select && config.select != Select::Modulo) {
        return "select=" + std::string(select_name(config.select));
    }
    if (stage.takes_running_sum && config.running_sum != RunningSum::Register) {
        return "running-sum=" + std::string(running_sum_name(config.running_sum));
    }
    return "";
}

}  // namespace

RunConfig run_config(const Options& options) {
    RunConfig config;
    config.block = options.block;
    config.vec = effective_vec(options);
    config.finish = effective_finish(options);
    config.last_warp = options.last_warp;
    config.select = options.select;
    config.running_sum = options.running_sum;
    return config;
}

template <typename T>
Record bench_stage(const Stage& stage, const RunConfig& config, const DeviceInput<T>& input, BenchContext& context) {
    Record r = new_record(stage.name, stage.kernel, variant_of(stage, config), input, input.n * sizeof(T),
                          config.block, context);
    DeviceBuffer<unsigned char> workspace(stage.workspace_bytes(input.n, sizeof(T), config));
    if (workspace.bytes()) CUDA_CHECK(cudaMemsetAsync(workspace.get(), 0, workspace.bytes(), context.stream));
    DeviceBuffer<T> result(1);
    const SumFn<T> sum = stage.sum<T>();
    const TimedRuns runs = time_runs(
        label_of(r), context.options.warmup, context.options.iters, context.flusher, context.stream,
        [&] { CUDA_CHECK(cudaMemsetAsync(result.get(), kPoisonByte, sizeof(T), context.stream)); },
        [&] { sum(input.values.get(), input.n, result.get(), workspace.get(), config, context.stream); },
        [&] { return read_and_check(result.get(), input.expected, context.stream); });
    finish_record(r, runs, input);
    return r;
}

void compare_records(std::vector<Record>& records) {
    const auto find = [&](const std::string& stage) -> const Record* {
        for (const Record& r : records) {
            if (r.stage == stage) return &r;
        }
        return nullptr;
    };
    const Record* reduce0 = find("reduce0");
    const Record* cub = find("cub");
    const Record* copy = find("copy");
    for (Record& r : records) {
        if (r.median_ms <= 0) continue;
        if (reduce0 && r.stage.rfind("reduce", 0) == 0) r.vs_reduce0 = reduce0->median_ms / r.median_ms;
        if (cub && r.stage != "copy") r.vs_cub = cub->median_ms / r.median_ms;
        if (copy && copy->gbps > 0) r.pct_copy = 100.0 * r.gbps / copy->gbps;
    }
}

#define INSTANTIATE(T) \
    template Record bench_stage<T>(const Stage&, const RunConfig&, const DeviceInput<T>&, BenchContext&);
INSTANTIATE(int)
INSTANTIATE(float)
INSTANTIATE(double)
