// What benchmark.cu (the stages) and yardsticks.cu (CUB and the copy) share: a record's
// fields, its label, and the check of a result read back. Internal to the harness.
#pragma once

#include <string>
#include <utility>

#include "benchmark.h"

namespace bench_detail {

// Before each run the result is overwritten with bytes 0x7F, a value no sum of these
// inputs can take, so a kernel that writes nothing cannot pass the check.
inline constexpr int kPoisonByte = 0x7F;

inline std::string label_of(const Record& r) {
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

// Times a run by the options' method (--timing): flushed (time_runs) or back-to-back.
template <typename Prepare, typename Run, typename Check>
TimedRuns time_by_method(const Record& r, BenchContext& context, Prepare&& prepare, Run&& run, Check&& check) {
    const Options& o = context.options;
    if (o.timing == TimingMethod::BackToBack) {
        return time_back_to_back(label_of(r), o.warmup, o.iters, o.batch, context.stream, prepare, run, check);
    }
    return time_runs(label_of(r), o.warmup, o.iters, context.flusher, context.stream, prepare, run, check);
}

template <typename T>
SumCheck read_and_check(const T* device_result, const ExpectedSum& expected, cudaStream_t stream) {
    T got{};
    CUDA_CHECK(cudaMemcpyAsync(&got, device_result, sizeof(T), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return check_sum(got, expected);
}

}  // namespace bench_detail
