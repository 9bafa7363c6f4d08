// Sizes past 2^31 and 2^32: the arithmetic that must not overflow or truncate, and the
// memory check that turns a request too large for the GPU into one clear line.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "input.h"
#include "memory_plan.h"
#include "stage.h"

namespace {

constexpr std::size_t k2to31plus3 = (std::size_t{1} << 31) + 3;
constexpr std::size_t k2to32plus5 = (std::size_t{1} << 32) + 5;

TEST(Sizes, IndicesAreSixtyFourBitInTheInputFormula) {
    // Element i and element i + 2^32 must be independent values: a generator that
    // truncated i to 32 bits would repeat the first 2^32 elements.
    int same = 0;
    for (std::uint64_t i = 0; i < 4096; ++i) same += input_value(9, i, 8) == input_value(9, i + (std::uint64_t{1} << 32), 8);
    EXPECT_LT(same, 4096 / 8 + 200);  // chance agreement: 1 in 16 for magnitude 8
}

TEST(Sizes, MagnitudeIsOneAndSumsStayInRangePastTwoToThe31) {
    for (std::size_t n : {k2to31plus3, k2to32plus5, std::size_t{1} << 36, kMaxElements}) {
        EXPECT_EQ(value_magnitude(n, ValueType::Int32), 1) << n;
        EXPECT_EQ(value_magnitude(n, ValueType::Float32), 1) << n;
        EXPECT_GE(value_magnitude(n, ValueType::Float64), 1) << n;
    }
    EXPECT_EQ(value_magnitude(std::size_t{1} << 40, ValueType::Float64), 8);  // 8 x 2^40 < 2^53
}

TEST(Sizes, ExpectedSumFromTheFormulaEqualsTheSumOfTheArray) {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{5000}, (std::size_t{1} << 20) + 7}) {
        const HostInput<int> host = make_input<int>(n, 77);
        long long sum = 0;
        for (int v : host.values) sum += v;
        EXPECT_EQ(expected_sum<int>(n, 77).exact, sum) << n;
        EXPECT_EQ(expected_sum<float>(n, 77).exact, sum) << n;  // the same integers, as float
    }
}

TEST(Sizes, WorkspacesAndPassesAtTwoToThe32AndBeyond) {
    // reduce0 ... reduce5's passes at 2^32 + 5 values: 64-bit counts all the way down.
    std::vector<std::pair<std::size_t, unsigned>> passes;  // (count, blocks) of each launch
    float out = 0;
    std::vector<float> workspace(1);
    run_passes<float>(nullptr, k2to32plus5, &out, workspace.data(), 256, nullptr,
                      [&](const float*, std::size_t count, float*, unsigned blocks) { passes.emplace_back(count, blocks); });
    ASSERT_EQ(passes.size(), 5u);
    EXPECT_EQ(passes[0].first, k2to32plus5);
    EXPECT_EQ(passes[0].second, 16777217u);  // ceil((2^32 + 5) / 256)
    EXPECT_EQ(passes[1].second, 65537u);
    EXPECT_EQ(passes[2].second, 257u);
    EXPECT_EQ(passes[3].second, 2u);
    EXPECT_EQ(passes[4].second, 1u);  // the last pass writes the result
    EXPECT_EQ(passes_workspace_bytes(k2to32plus5, 256, 4), (16777217u + 65537u) * std::size_t{4});
    // A pass that would need more than 2^31 - 1 blocks is refused with the reason, not
    // launched with a truncated grid.
    try {
        run_passes<int>(nullptr, std::size_t{1} << 37, nullptr, nullptr, 32, nullptr,
                        [](const int*, std::size_t, int*, unsigned) { FAIL() << "launched"; });
        FAIL() << "no error";
    } catch (const std::length_error& e) {
        EXPECT_NE(std::string(e.what()).find("more than a grid's 2^31 - 1"), std::string::npos) << e.what();
    }
}

TEST(Sizes, AMemoryPlanThatDoesNotFitNamesBytesNeededAndFree) {
    MemoryPlan plan;
    plan.add("input", k2to32plus5 * 4);
    plan.add("workspace", 1 << 20);
    plan.add("L2 flush buffer", 100 << 20);
    const std::size_t needed = plan.total();
    EXPECT_EQ(needed, k2to32plus5 * 4 + (1 << 20) + (100 << 20));
    // Fits with the headroom to spare: no message.
    EXPECT_FALSE(memory_shortfall(plan, "n", needed + kAllocationHeadroom, std::size_t{80} << 30).has_value());
    // One byte short of the headroom: refused.
    const auto message = memory_shortfall(plan, "n = 4294967301 float values", needed + kAllocationHeadroom - 1,
                                          std::size_t{80} << 30);
    ASSERT_TRUE(message.has_value());
    for (const char* part : {"n = 4294967301 float values need 17.3 GB on the GPU", "input 17.2 GB",
                             "L2 flush buffer 104.9 MB", "headroom", "free of 85.9 GB"}) {
        EXPECT_NE(message->find(part), std::string::npos) << part << " in: " << *message;
    }
    EXPECT_EQ(message->find('\n'), std::string::npos);  // one line
    // Less free than needed at all, and sums that would wrap 64 bits, are refused too.
    EXPECT_TRUE(memory_shortfall(plan, "n", 0, 0).has_value());
    plan.add("huge", std::numeric_limits<std::size_t>::max());
    EXPECT_EQ(plan.total(), std::numeric_limits<std::size_t>::max());
    EXPECT_TRUE(memory_shortfall(plan, "n", std::numeric_limits<std::size_t>::max(), 0).has_value());
}

}  // namespace
