// The harness itself: the benchmark path must catch a wrong result (never report a
// figure for a kernel that dropped an element or wrote nothing), and the yardsticks
// (CUB, the copy) must verify too.
#include <cuda_runtime.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "benchmark.h"
#include "fixed_costs.h"
#include "gpu_test.h"
#include "stages.h"
#include "timing.h"

namespace {

// A broken stage: reduce0 run on all but the last element.
template <typename T>
void drop_last_element(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config,
                       cudaStream_t stream) {
    reduce0_stage.sum<T>()(in, n - 1, out, workspace, config, stream);
}

// A broken stage: reduce0, then the first element added once more.
template <typename T>
__global__ void add_first_again(const T* in, T* out) { *out += in[0]; }

template <typename T>
void count_first_twice(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config,
                       cudaStream_t stream) {
    reduce0_stage.sum<T>()(in, n, out, workspace, config, stream);
    add_first_again<<<1, 1, 0, stream>>>(in, out);
    CUDA_CHECK_LAUNCH();
}

// A broken stage: launches nothing and writes nothing.
template <typename T>
void write_nothing(const T*, std::size_t, T*, void*, const RunConfig&, cudaStream_t) {}

std::size_t reduce0_workspace(std::size_t n, std::size_t value_size, const RunConfig& config) {
    return reduce0_stage.workspace_bytes(n, value_size, config);
}

Stage broken_stage(const char* name, SumFn<float> sum) {
    return Stage{.name = name,
                 .kernel = name,
                 .idea = "broken on purpose",
                 .workspace_bytes = reduce0_workspace,
                 .sum_float = sum};
}

struct HarnessFixture : testing::Test {
    void SetUp() override {
        SKIP_WITHOUT_GPU();
        device = std::make_unique<DeviceInfo>(open_device(0, std::nullopt));
        flusher = std::make_unique<L2Flusher>(device->l2_bytes);
        options.iters = 3;
        options.warmup = 1;
    }
    BenchContext context() { return BenchContext{*device, options, *flusher, nullptr}; }

    std::unique_ptr<DeviceInfo> device;
    std::unique_ptr<L2Flusher> flusher;
    Options options;
};

using Harness = HarnessFixture;

// The "x reduce0" column divides by the stage marked as the baseline: exactly one, reduce0
// (no GPU needed: the records of the stages only).
TEST(StageList, OneStageIsTheBaseline) {
    int baselines = 0;
    for (const Stage* stage : all_stages()) {
        if (stage->baseline) {
            ++baselines;
            EXPECT_STREQ(stage->name, "reduce0");
        }
    }
    EXPECT_EQ(baselines, 1);
}

TEST_F(Harness, OpenDeviceReadsTheGpu) {
    EXPECT_FALSE(device->name.empty());
    EXPECT_GT(device->sms, 0);
    EXPECT_GT(device->l2_bytes, 0u);
    ASSERT_TRUE(device->peak.gbps.has_value()) << device->peak.source;
    EXPECT_GT(*device->peak.gbps, 100.0);
}

TEST_F(Harness, EveryBrokenStageFailsEveryRun) {
    const Stage broken[] = {broken_stage("drop_last", drop_last_element<float>),
                            broken_stage("count_first_twice", count_first_twice<float>),
                            broken_stage("write_nothing", write_nothing<float>)};
    for (const TimingMethod timing : {TimingMethod::Flushed, TimingMethod::BackToBack}) {
        options.timing = timing;
        options.batch = 5;
        SCOPED_TRACE(std::string(timing_name(timing)));
        for (std::size_t n : {std::size_t{2}, std::size_t{1000}, std::size_t{1} << 20, (std::size_t{1} << 24) + 3}) {
            const DeviceInput<float> input = make_device_input<float>(n, 7);
            for (const Stage& stage : broken) {
                BenchContext ctx = context();
                const Record r = bench_stage(stage, run_config(stage, options), input, ctx);
                EXPECT_FALSE(r.verified) << stage.name << " n=" << n;
                EXPECT_EQ(r.failed_runs, r.checked_runs) << stage.name << " n=" << n;
                EXPECT_EQ(r.checked_runs, 1 + options.warmup + options.iters);
            }
        }
    }
}

TEST_F(Harness, StagesCubAndCopyVerifyAndCompare) {
    for (const TimingMethod timing : {TimingMethod::Flushed, TimingMethod::BackToBack}) {
        options.timing = timing;
        options.batch = 5;
        SCOPED_TRACE(std::string(timing_name(timing)));
        const DeviceInput<int> input = make_device_input<int>((std::size_t{1} << 22) + 5, 11);
        BenchContext ctx = context();
        std::vector<Record> records = {bench_stage(reduce0_stage, run_config(reduce0_stage, options), input, ctx),
                                       bench_stage(*all_stages().back(), run_config(*all_stages().back(), options), input, ctx),
                                       bench_cub(input, ctx), bench_copy(input, ctx)};
        compare_records(records);
        for (const Record& r : records) {
            EXPECT_TRUE(r.verified) << r.stage << ": " << r.check;
            EXPECT_EQ(r.distinct_results, 1) << r.stage;  // integer data: the same exact sum every run
            EXPECT_EQ(r.result, static_cast<double>(input.expected.exact)) << r.stage;
            EXPECT_EQ(r.runs, options.iters);
            EXPECT_GT(r.median_ms, 0);
            EXPECT_LE(r.min_ms, r.median_ms);
            EXPECT_GE(r.max_ms, r.median_ms);
            EXPECT_GT(r.gbps, 0);
            ASSERT_TRUE(r.vs_cub.has_value() || r.stage == "copy");
            ASSERT_TRUE(r.pct_copy.has_value());
        }
        EXPECT_DOUBLE_EQ(*records[0].vs_reduce0, 1.0);
        EXPECT_TRUE(records[1].vs_reduce0.has_value());  // a stage: compared with the baseline
        EXPECT_FALSE(records[2].vs_reduce0.has_value());  // CUB: not a stage
        EXPECT_EQ(records[3].bytes, 2 * input.n * sizeof(int));
    }
}

// The GPU generates the input, the host computes its sum from the formula: the two must
// agree on every element, at the start, in a shard far from the start (indices past 2^32,
// where a 32-bit index would wrap), and for every type and kind of data.
template <typename T>
void expect_device_values_equal_the_formula(std::size_t n, std::size_t begin, std::size_t count, InputData data) {
    DeviceBuffer<T> values(count);
    generate_input_on_device(values.get(), begin, count, n, 123, data, nullptr);
    std::vector<T> got(count);
    CUDA_CHECK(cudaMemcpy(got.data(), values.get(), count * sizeof(T), cudaMemcpyDeviceToHost));
    const int magnitude = value_magnitude(n, value_type_of<T>());
    for (std::size_t k = 0; k < count; ++k) {
        const T want = input_element<T>(123, begin + k, magnitude, data);
        ASSERT_EQ(std::memcmp(&got[k], &want, sizeof(T)), 0)
            << type_name(value_type_of<T>()) << " element " << begin + k << ": GPU " << got[k] << ", host " << want;
    }
}

TEST_F(Harness, TheGpuGeneratesTheInputTheHostSums) {
    const std::size_t big = (std::size_t{1} << 33) + 9;  // only indices are used: nothing this large is allocated
    for (InputData data : {InputData::Integers, InputData::Uniform}) {
        expect_device_values_equal_the_formula<int>(70001, 0, 70001, InputData::Integers);
        expect_device_values_equal_the_formula<float>(70001, 0, 70001, data);
        expect_device_values_equal_the_formula<double>(1000, 0, 1000, data);
        expect_device_values_equal_the_formula<float>(big, (std::size_t{1} << 32) - 1000, 5000, data);
        expect_device_values_equal_the_formula<int>(big, big - 4096, 4096, InputData::Integers);
    }
    // And the whole path: the expected sum of a device input is the sum of its values.
    const DeviceInput<int> input = make_device_input<int>(1000003, 5);
    std::vector<int> values(input.n);
    CUDA_CHECK(cudaMemcpy(values.data(), input.values.get(), input.n * sizeof(int), cudaMemcpyDeviceToHost));
    long long sum = 0;
    for (int v : values) sum += v;
    EXPECT_EQ(sum, input.expected.exact);
}

TEST_F(Harness, ARequestTooLargeForTheGpuIsRefusedWithTheBytes) {
    MemoryPlan plan;
    plan.add("input", kMaxElements * sizeof(double));
    try {
        require_device_memory(plan, "n = 2^40 double values");
        FAIL() << "no error";
    } catch (const TooLargeError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("need 8.8 TB on the GPU"), std::string::npos) << what;
        EXPECT_NE(what.find("free of"), std::string::npos) << what;
    }
}

TEST_F(Harness, ZeroElementsSumToZero) {
    const DeviceInput<double> input = make_device_input<double>(0, 1);
    BenchContext ctx = context();
    for (const Stage* stage : all_stages()) {
        const Record r = bench_stage(*stage, run_config(*stage, options), input, ctx);
        EXPECT_TRUE(r.verified) << stage->name << ": " << r.check;
    }
}

// docs/11's floors, the one-tile reduction and the batches are checked like a stage: each
// verifies at one value, at sizes with a partial vector and a partial block, and at one
// whole tile; a stage that drops, repeats or skips an element fails in a batch too, in a
// stream and in a graph. A stream of its own: a graph cannot be captured from the legacy
// default stream.
TEST_F(Harness, FixedCostFloorsAndBatchesVerify) {
    CudaStream stream;
    BenchContext ctx{*device, options, *flusher, stream};
    for (std::size_t n : {std::size_t{1}, std::size_t{1003}, one_tile_capacity<float>(), (std::size_t{1} << 20) + 3}) {
        const DeviceInput<float> input = make_device_input<float>(n, 5);
        std::vector<Record> records = {bench_launch_floor(input, ctx), bench_launch_after_query(input, ctx),
                                       bench_read_floor(input, ctx)};
        if (n <= one_tile_capacity<float>()) records.push_back(bench_one_tile(input, ctx));
        const BatchInputs<float> batch = make_batch_inputs(input, 3, device->l2_bytes, stream);
        for (Submission how : {Submission::Stream, Submission::Graph}) {
            records.push_back(bench_floor_batch(batch, how, ctx));
            records.push_back(bench_read_floor_batch(batch, how, ctx));
            records.push_back(bench_stage_batch(*all_stages().back(), run_config(*all_stages().back(), options), batch, how, ctx));
        }
        if (n > one_tile_capacity<float>()) EXPECT_THROW(bench_one_tile(input, ctx), std::invalid_argument);
        for (const Record& r : records) {
            EXPECT_TRUE(r.verified) << r.kernel << " [" << r.variant << "] n=" << n << ": " << r.check;
            EXPECT_EQ(r.failed_runs, 0) << r.kernel << " [" << r.variant << "] n=" << n;
        }
    }
}

TEST_F(Harness, EveryBrokenStageFailsInABatch) {
    CudaStream stream;
    BenchContext ctx{*device, options, *flusher, stream};
    const Stage broken[] = {broken_stage("drop_last", drop_last_element<float>),
                            broken_stage("count_first_twice", count_first_twice<float>),
                            broken_stage("write_nothing", write_nothing<float>)};
    const DeviceInput<float> input = make_device_input<float>((std::size_t{1} << 16) + 1, 9);
    const BatchInputs<float> batch = make_batch_inputs(input, 2, device->l2_bytes, stream);
    for (const Stage& stage : broken) {
        for (Submission how : {Submission::Stream, Submission::Graph}) {
            const Record r = bench_stage_batch(stage, run_config(stage, options), batch, how, ctx);
            EXPECT_FALSE(r.verified) << stage.name << " in a " << submission_name(how);
            EXPECT_EQ(r.failed_runs, r.checked_runs) << stage.name << " in a " << submission_name(how);
        }
    }
}

}  // namespace
