#include "benchmark.h"

#include "bench_record.h"

using namespace bench_detail;

RunConfig run_config(const Stage& stage, const Options& options) {
    RunConfig config;
    config.block = options.block != 0 ? options.block : stage.default_block;
    config.variants = options.variant_choices;  // each stage reads its own, the rest run their defaults
    return config;
}

template <typename T>
Record bench_stage(const Stage& stage, const RunConfig& config, const DeviceInput<T>& input, BenchContext& context) {
    const std::string variant = variant_label(stage.variants, config.variants, value_type_of<T>());
    Record r = new_record(stage.name, stage.kernel, variant, input, input.n * sizeof(T), config.block, context);
    r.from_stage = true;
    r.baseline = stage.baseline;
    DeviceBuffer<unsigned char> workspace(stage.workspace_bytes(input.n, sizeof(T), config));
    if (workspace.bytes()) CUDA_CHECK(cudaMemsetAsync(workspace.get(), 0, workspace.bytes(), context.stream));
    DeviceBuffer<T> result(1);
    const SumFn<T> sum = stage.sum<T>();
    const TimedRuns runs = time_by_method(
        r, context,
        [&] { CUDA_CHECK(cudaMemsetAsync(result.get(), kPoisonByte, sizeof(T), context.stream)); },
        [&] { sum(input.values.get(), input.n, result.get(), workspace.get(), config, context.stream); },
        [&] { return read_and_check(result.get(), input.expected, context.stream); });
    finish_record(r, runs, input);
    return r;
}

void compare_records(std::vector<Record>& records) {
    const auto find = [&](auto&& wanted) -> const Record* {
        for (const Record& r : records) {
            if (wanted(r)) return &r;
        }
        return nullptr;
    };
    // The baseline stage's first record (its default, where --variants times others too).
    const Record* baseline = find([](const Record& r) { return r.baseline; });
    const Record* cub = find([](const Record& r) { return r.stage == "cub"; });
    const Record* copy = find([](const Record& r) { return r.stage == "copy"; });
    for (Record& r : records) {
        if (r.median_ms <= 0) continue;
        if (baseline && r.from_stage) r.vs_reduce0 = baseline->median_ms / r.median_ms;
        if (cub && r.stage != "copy") r.vs_cub = cub->median_ms / r.median_ms;
        if (copy && copy->gbps > 0) r.pct_copy = 100.0 * r.gbps / copy->gbps;
    }
}

#define INSTANTIATE(T) \
    template Record bench_stage<T>(const Stage&, const RunConfig&, const DeviceInput<T>&, BenchContext&);
INSTANTIATE(int)
INSTANTIATE(float)
INSTANTIATE(double)
