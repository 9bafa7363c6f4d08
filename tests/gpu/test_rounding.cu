// Real-valued floats (--data uniform): every deterministic summation order gives the same
// bits on every run, and stays within the rounding bound of the correctly rounded sum.
// reduce7's atomic finish adds the blocks' sums in whatever order they finish: its
// distinct results are printed, not asserted, because nothing guarantees either answer.
#include <cuda_runtime.h>

#include <cstdio>
#include <set>

#include "gpu_test.h"
#include "stages.h"

namespace {

constexpr std::size_t kN = (std::size_t{1} << 22) + 3;
constexpr int kRuns = 20;

struct Outcome {
    std::set<std::uint64_t> bits;  // the distinct results
    int failed = 0;                // runs outside the rounding bound
    std::string first_failure;
};

template <typename T>
Outcome run_many(const Stage& stage, const RunConfig& config, const HostInput<T>& host, const DeviceBuffer<T>& in) {
    DeviceBuffer<unsigned char> workspace(stage.workspace_bytes(kN, sizeof(T), config));
    if (workspace.bytes()) CUDA_CHECK(cudaMemset(workspace.get(), 0, workspace.bytes()));
    DeviceBuffer<T> result(1);
    Outcome outcome;
    for (int run = 0; run < kRuns; ++run) {
        CUDA_CHECK(cudaMemset(result.get(), 0x7F, sizeof(T)));
        stage.sum<T>()(in.get(), kN, result.get(), workspace.get(), config, nullptr);
        CUDA_CHECK(cudaDeviceSynchronize());
        T got{};
        CUDA_CHECK(cudaMemcpy(&got, result.get(), sizeof(T), cudaMemcpyDeviceToHost));
        const SumCheck check = check_sum(got, host.expected);
        outcome.bits.insert(check.bits);
        if (!check.ok && outcome.failed++ == 0) outcome.first_failure = check.detail;
    }
    return outcome;
}

template <typename T>
void expect_deterministic_stages() {
    const HostInput<T> host = make_input<T>(kN, 2027, InputData::Uniform);
    DeviceBuffer<T> in(kN);
    CUDA_CHECK(cudaMemcpy(in.get(), host.values.data(), kN * sizeof(T), cudaMemcpyHostToDevice));
    for (const Stage* stage : all_stages()) {
        // Every stage as it ships; a stage with --finish (reduce7) with each deterministic finish.
        std::vector<std::string> finishes = {""};
        for (const Variant& variant : stage->variants) {
            if (variant.name == "finish") finishes = {"last-block", "two-pass"};
        }
        for (const std::string& finish : finishes) {
            RunConfig config;
            if (!finish.empty()) config.variants["finish"] = finish;
            const Outcome outcome = run_many(*stage, config, host, in);
            EXPECT_EQ(outcome.failed, 0) << stage->name << ": " << outcome.first_failure;
            EXPECT_EQ(outcome.bits.size(), 1u) << stage->name << " finish " << finish << ": " << outcome.bits.size()
                                               << " different results in " << kRuns << " runs";
        }
    }
    const Stage* reduce7 = find_stage("reduce7");
    if (reduce7) {  // shown, not asserted
        RunConfig config;
        config.variants["finish"] = "atomic";
        const Outcome outcome = run_many(*reduce7, config, host, in);
        EXPECT_EQ(outcome.failed, 0) << outcome.first_failure;
        std::printf("reduce7 --finish atomic, %s, n = %zu uniform: %zu distinct results in %d runs\n",
                    std::string(type_name(value_type_of<T>())).c_str(), kN, outcome.bits.size(), kRuns);
    }
}

TEST(Rounding, DeterministicOrdersGiveTheSameFloatBitsEveryRun) {
    SKIP_WITHOUT_GPU();
    expect_deterministic_stages<float>();
}

TEST(Rounding, DeterministicOrdersGiveTheSameDoubleBitsEveryRun) {
    SKIP_WITHOUT_GPU();
    expect_deterministic_stages<double>();
}

}  // namespace
