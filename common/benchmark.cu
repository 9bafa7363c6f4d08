#include "benchmark.h"

#include <cub/device/device_reduce.cuh>

namespace {

// Before each run the result is overwritten with bytes 0x7F, a value no sum of these
// inputs can take, so a kernel that writes nothing cannot pass the check.
constexpr int kPoisonByte = 0x7F;

std::string label_of(const Record& r) {
    return r.stage + " " + r.kernel + (r.variant.empty() ? "" : " [" + r.variant + "]") + " " + r.type +
           " n=" + count_text(r.n);
}

template <typename T>
Record new_record(std::string stage, std::string kernel, std::string variant, const DeviceInput<T>& input,
                  std::size_t bytes, int block, const BenchContext& context) {
    Record r;
    r.stage = std::move(stage);
    r.kernel = std::move(kernel);
    r.variant = std::move(variant);
    r.type = std::string(type_name(value_type_of<T>()));
    r.n = input.n;
    r.bytes = bytes;
    r.block = block;
    r.device = context.device.name;
    r.peak_gbps = context.device.peak.gbps;
    return r;
}

template <typename T>
void finish_record(Record& r, const TimedRuns& runs, const DeviceInput<T>& input) {
    // GB/s = bytes moved / median time. A reduction reads each input once and writes one
    // value, so bytes = n x sizeof(T); the copy reads and writes, so 2 n x sizeof(T).
    set_timing_fields(r, runs);
    r.check = runs.failed == 0 ? (input.expected.data == InputData::Integers ? "exact" : "within bound")
                               : runs.first_failure;
    r.data = std::string(data_name(input.expected.data));
    r.result = runs.first_value;
    r.reference = static_cast<double>(input.expected.reference);
    if (input.expected.data == InputData::Uniform) {
        r.error_ulps = error_in_ulps(static_cast<T>(runs.first_value), input.expected.reference);
    }
    r.distinct_results = static_cast<int>(runs.results.size());
}

template <typename T>
SumCheck read_and_check(const T* device_result, const ExpectedSum& expected, cudaStream_t stream) {
    T got{};
    CUDA_CHECK(cudaMemcpyAsync(&got, device_result, sizeof(T), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return check_sum(got, expected);
}

}  // namespace

RunConfig run_config(const Options& options) {
    RunConfig config;
    config.block = options.block;
    config.variants = options.variant_choices;  // each stage reads its own, the rest run their defaults
    return config;
}

template <typename T>
Record bench_stage(const Stage& stage, const RunConfig& config, const DeviceInput<T>& input, BenchContext& context) {
    Record r = new_record(stage.name, stage.kernel, variant_label(stage.variants, config.variants, value_type_of<T>()), input, input.n * sizeof(T),
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

template <typename T>
Record bench_cub(const DeviceInput<T>& input, BenchContext& context) {
    Record r = new_record("cub", "DeviceReduce::Sum", "", input, input.n * sizeof(T), 0, context);
    DeviceBuffer<T> result(1);
    // CUB's two-phase API: ask for the temporary storage size, allocate it outside the
    // timed region, then time only the reduction itself.
    std::size_t temp_bytes = 0;
    CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, input.values.get(), result.get(),
                                      static_cast<long long>(input.n), context.stream));
    DeviceBuffer<unsigned char> temp(temp_bytes);
    const TimedRuns runs = time_runs(
        label_of(r), context.options.warmup, context.options.iters, context.flusher, context.stream,
        [&] { CUDA_CHECK(cudaMemsetAsync(result.get(), kPoisonByte, sizeof(T), context.stream)); },
        [&] {
            CUDA_CHECK(cub::DeviceReduce::Sum(temp.get(), temp_bytes, input.values.get(), result.get(),
                                              static_cast<long long>(input.n), context.stream));
        },
        [&] { return read_and_check(result.get(), input.expected, context.stream); });
    finish_record(r, runs, input);
    return r;
}

template <typename T>
Record bench_copy(const DeviceInput<T>& input, BenchContext& context) {
    Record r = new_record("copy", "cudaMemcpyAsync", "device to device, read + write", input,
                          2 * input.n * sizeof(T), 0, context);
    DeviceBuffer<T> copy(input.n);
    DeviceBuffer<T> copy_sum(1);
    std::size_t temp_bytes = 0;
    CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, copy.get(), copy_sum.get(),
                                      static_cast<long long>(input.n), context.stream));
    DeviceBuffer<unsigned char> temp(temp_bytes);
    const std::size_t bytes = input.n * sizeof(T);
    const TimedRuns runs = time_runs(
        label_of(r), context.options.warmup, context.options.iters, context.flusher, context.stream,
        [&] {
            if (bytes) CUDA_CHECK(cudaMemsetAsync(copy.get(), kPoisonByte, bytes, context.stream));
        },
        [&] {
            if (bytes) {
                CUDA_CHECK(cudaMemcpyAsync(copy.get(), input.values.get(), bytes, cudaMemcpyDeviceToDevice,
                                           context.stream));
            }
        },
        [&] {
            // The copy is checked by summing it (after the timed region): every element
            // that was not copied still holds poison and spoils the exact sum.
            CUDA_CHECK(cub::DeviceReduce::Sum(temp.get(), temp_bytes, copy.get(), copy_sum.get(),
                                              static_cast<long long>(input.n), context.stream));
            return read_and_check(copy_sum.get(), input.expected, context.stream);
        });
    finish_record(r, runs, input);
    r.error_ulps.reset();  // that would be CUB's error in summing the copy, not the copy's
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

#define INSTANTIATE(T)                                                                 \
    template Record bench_stage<T>(const Stage&, const RunConfig&, const DeviceInput<T>&, BenchContext&); \
    template Record bench_cub<T>(const DeviceInput<T>&, BenchContext&);                \
    template Record bench_copy<T>(const DeviceInput<T>&, BenchContext&);
INSTANTIATE(int)
INSTANTIATE(float)
INSTANTIATE(double)

