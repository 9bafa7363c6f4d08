// reduce_across_gpus on one and on two GPUs (one process): exact sums for every type, at sizes
// with empty shards, uneven shards and many passes; both collectives; a sum missing one value
// is caught; the single-GPU baseline; the vector all-reduce. Each test skips, with the reason,
// where the machine has fewer GPUs than it needs.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "multi_gpu.h"

namespace {

int gpus_present() {
    static const int count = [] {
        int n = 0;
        if (cudaGetDeviceCount(&n) != cudaSuccess) {
            cudaGetLastError();
            n = 0;
        }
        return n;
    }();
    return count;
}

// Empty when the machine has `needed` GPUs, else why the test cannot run.
std::string missing_gpus(int needed) {
    int n = 0;
    const cudaError_t status = cudaGetDeviceCount(&n);
    if (status != cudaSuccess) {
        cudaGetLastError();
        return std::string("no usable CUDA device (") + cudaGetErrorName(status) + ": " + cudaGetErrorString(status) +
               "): multi-GPU tests skipped";
    }
    if (gpus_present() < needed) {
        return "needs " + std::to_string(needed) + " GPU" + (needed == 1 ? "" : "s") + ", this machine has " +
               std::to_string(gpus_present()) + ": skipped";
    }
    return "";
}

#define SKIP_WITHOUT_GPUS(needed)                                                      \
    do {                                                                               \
        if (const std::string reason = missing_gpus(needed); !reason.empty()) GTEST_SKIP() << reason; \
    } while (0)

// One team per GPU count, shared by the tests (creating NCCL communicators takes a while),
// closed after the last test.
std::map<int, std::unique_ptr<Team>>& teams() {
    static std::map<int, std::unique_ptr<Team>> all;
    return all;
}

Team& team_of(int gpus) {
    auto& team = teams()[gpus];
    if (!team) team = Team::one_process(gpus, std::chrono::seconds(120));
    return *team;
}

class CloseTeams : public testing::Environment {
public:
    void TearDown() override {
        for (auto& [gpus, team] : teams()) {
            if (team) team->close();
        }
        teams().clear();
    }
};
[[maybe_unused]] testing::Environment* const close_teams = testing::AddGlobalTestEnvironment(new CloseTeams);

struct SumCase {
    int gpus;
    ValueType type;
    std::size_t n;
    Collective collective;
};

std::vector<SumCase> sum_cases(int gpus) {
    std::vector<SumCase> cases;
    // 0: every shard empty; 1: fewer values than GPUs; 3 and 1000001: GPUs that do not divide
    // n; 2^24 + 3: many blocks per GPU and, for float, past 2^24 (+-1 values).
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{1000001},
                          (std::size_t{1} << 24) + 3}) {
        for (ValueType type : {ValueType::Int32, ValueType::Float32, ValueType::Float64}) {
            for (Collective collective : {Collective::AllReduce, Collective::Reduce}) cases.push_back({gpus, type, n, collective});
        }
    }
    return cases;
}

std::string case_name(const testing::TestParamInfo<SumCase>& info) {
    const SumCase& c = info.param;
    return std::to_string(c.gpus) + "gpu_" + std::string(type_name(c.type)) + "_n" + std::to_string(c.n) + "_" +
           collective_name(c.collective);
}

class ReduceAcrossGpus : public testing::TestWithParam<SumCase> {};

TEST_P(ReduceAcrossGpus, EveryRunsSumEqualsTheHostsExactSumOnEveryGpuThatGetsIt) {
    const SumCase c = GetParam();
    SKIP_WITHOUT_GPUS(c.gpus);
    with_value_type(c.type, [&](auto zero) {
        using T = decltype(zero);
        ReductionRequest request;
        request.n = c.n;
        request.seed = c.n * 7 + 1;
        request.collective = c.collective;
        request.warmup = 1;
        request.iters = 2;
        const ReductionResult r = reduce_across_gpus<T>(team_of(c.gpus), request);
        EXPECT_TRUE(r.verified()) << r.check << "; " << r.partials_check;
        EXPECT_EQ(r.failed, 0);
        EXPECT_TRUE(r.partials_ok) << r.partials_check;
        const int runs = 1 + request.warmup + request.iters;
        EXPECT_EQ(r.checked, c.collective == Collective::AllReduce ? runs * c.gpus : runs);
        EXPECT_EQ(r.value, static_cast<double>(r.expected));
        ASSERT_EQ(r.gpus.size(), static_cast<std::size_t>(c.gpus));
        for (int g = 0; g < c.gpus; ++g) {
            const GpuRuns& gpu = r.gpus[static_cast<std::size_t>(g)];
            EXPECT_EQ(gpu.gpu.rank, g);
            EXPECT_EQ(gpu.shard.begin, shard_of(c.n, g, c.gpus).begin);
            EXPECT_EQ(gpu.shard.count, shard_of(c.n, g, c.gpus).count);
            EXPECT_EQ(gpu.total_ms.size(), static_cast<std::size_t>(request.iters));
        }
        EXPECT_EQ(r.run_ms.size(), static_cast<std::size_t>(request.iters));
        EXPECT_GT(r.run.median, 0.0);
    });
}

INSTANTIATE_TEST_SUITE_P(OneGpu, ReduceAcrossGpus, testing::ValuesIn(sum_cases(1)), case_name);
INSTANTIATE_TEST_SUITE_P(TwoGpus, ReduceAcrossGpus, testing::ValuesIn(sum_cases(2)), case_name);

// Without the last element of the last GPU's shard, every result is one value off: the
// check must catch it on every GPU, in every run (so a check that cannot fail would show).
void expect_missing_value_caught(int gpus, Collective collective) {
    ReductionRequest request;
    request.n = 1000001;
    request.collective = collective;
    request.warmup = 0;
    request.iters = 2;
    request.drop_last_element_of_rank = gpus - 1;
    const ReductionResult r = reduce_across_gpus<int>(team_of(gpus), request);
    EXPECT_FALSE(r.verified());
    EXPECT_GT(r.checked, 0);
    EXPECT_EQ(r.failed, r.checked) << r.check;
    EXPECT_NE(r.value, static_cast<double>(r.expected));
}

// --gate-at-once (the other side of the start-skew A/B; the default waits for the flushes
// before it opens the gate): every run still exact and timed, on every GPU.
void expect_exact_with_gate_at_once(int gpus) {
    ReductionRequest request;
    request.n = (std::size_t{1} << 24) + 3;
    request.warmup = 1;
    request.iters = 3;
    request.gate_after_flush = false;
    const ReductionResult r = reduce_across_gpus<int>(team_of(gpus), request);
    EXPECT_TRUE(r.verified()) << r.check;
    EXPECT_EQ(r.failed, 0);
    EXPECT_EQ(r.run_ms.size(), static_cast<std::size_t>(request.iters));
}

TEST(OneGpuGateAtOnce, EveryRunIsExactAndTimed) {
    SKIP_WITHOUT_GPUS(1);
    expect_exact_with_gate_at_once(1);
}

TEST(TwoGpusGateAtOnce, EveryRunIsExactAndTimedOnEveryGpu) {
    SKIP_WITHOUT_GPUS(2);
    expect_exact_with_gate_at_once(2);
}

TEST(OneGpuMissingValue, ASumWithoutTheShardsLastValueFailsEveryCheck) {
    SKIP_WITHOUT_GPUS(1);
    expect_missing_value_caught(1, Collective::AllReduce);
}

TEST(TwoGpusMissingValue, ASumWithoutOneShardsLastValueFailsEveryCheckOnEveryGpu) {
    SKIP_WITHOUT_GPUS(2);
    expect_missing_value_caught(2, Collective::AllReduce);
    expect_missing_value_caught(2, Collective::Reduce);
}

// Without the collective each GPU keeps its own partial: the per-run checks must fail on
// every GPU in every run, and the check of run 0's partials must say the collective's result
// is not their sum (while the partials themselves add up to the exact sum).
TEST(TwoGpusSkippedCollective, WithoutTheCollectiveEveryCheckFails) {
    SKIP_WITHOUT_GPUS(2);
    for (Collective collective : {Collective::AllReduce, Collective::Reduce}) {
        ReductionRequest request;
        request.n = 1000001;
        request.collective = collective;
        request.warmup = 0;
        request.iters = 2;
        request.skip_collective = true;
        const ReductionResult r = reduce_across_gpus<int>(team_of(2), request);
        EXPECT_FALSE(r.verified()) << collective_name(collective);
        EXPECT_GT(r.checked, 0);
        EXPECT_EQ(r.failed, r.checked) << r.check;
        EXPECT_NE(r.value, static_cast<double>(r.expected));
        EXPECT_FALSE(r.partials_ok) << r.partials_check;
        EXPECT_NE(r.partials_check.find("not their sum"), std::string::npos) << r.partials_check;
    }
}

TEST(OneGpuBaseline, TheSingleGpuBaselineOverTheWholeInputIsExactAndTimed) {
    SKIP_WITHOUT_GPUS(1);
    ReductionRequest request;
    request.n = (std::size_t{1} << 22) + 5;
    request.warmup = 1;
    request.iters = 3;
    const BaselineResult b = single_gpu_baseline<float>(team_of(1), request);
    ASSERT_TRUE(b.ran) << b.why_not;
    EXPECT_EQ(b.failed, 0) << b.check;
    EXPECT_EQ(b.checked, 1 + request.warmup + request.iters);
    EXPECT_EQ(b.runs, request.iters);
    EXPECT_GT(b.gbps, 0.0);
}

TEST(OneGpuBaseline, ABaselineTooLargeForTheGpuIsSkippedWithTheBytesNeeded) {
    SKIP_WITHOUT_GPUS(1);
    ReductionRequest request;
    request.n = std::size_t{1} << 40;  // 4.4 TB of float
    const BaselineResult b = single_gpu_baseline<float>(team_of(1), request, std::async([] { return ExpectedSum{}; }).share());
    EXPECT_FALSE(b.ran);
    EXPECT_NE(b.why_not.find("does not fit"), std::string::npos) << b.why_not;
    EXPECT_NE(b.why_not.find("free of"), std::string::npos) << b.why_not;
}

TEST(OneGpuAllReduce, TheVectorAllReduceOfOneGpuIsSkippedWithTheReason) {
    SKIP_WITHOUT_GPUS(1);
    const AllReduceResult r = allreduce_vector(team_of(1), AllReduceRequest{});
    EXPECT_FALSE(r.ran);
    EXPECT_NE(r.why_not.find("one GPU"), std::string::npos);
}

TEST(TwoGpusAllReduce, EveryElementOfEveryGpusVectorIsTheSumOfBothGpusValues) {
    SKIP_WITHOUT_GPUS(2);
    AllReduceRequest request;
    request.elements = (std::size_t{1} << 20) + 3;
    request.warmup = 1;
    request.iters = 3;
    request.link_peak_gbps = 450.0;
    const AllReduceResult r = allreduce_vector(team_of(2), request);
    ASSERT_TRUE(r.ran) << r.why_not;
    EXPECT_TRUE(r.verified()) << r.check;
    EXPECT_EQ(r.checked_elements, 2 * request.elements);
    EXPECT_EQ(r.run_ms.size(), 3u);
    EXPECT_GT(r.algbw_gbps, 0.0);
    EXPECT_DOUBLE_EQ(r.busbw_gbps, r.algbw_gbps);  // 2(G-1)/G = 1 for two GPUs
    EXPECT_EQ(r.link.gbps, 450.0);
    // The peer copy ran first, on the freshly filled vectors, and was checked element for element.
    ASSERT_TRUE(r.peer_copy.has_value()) << r.peer_copy_why_not;
    EXPECT_TRUE(r.peer_copy_verified());
    EXPECT_EQ(r.peer_copy_checked, 2 * request.elements);
}

}  // namespace
