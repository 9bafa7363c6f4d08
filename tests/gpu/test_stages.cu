// Every stage of this tree x {int, float, double} x every test size x every block size it supports.
// The data are integers, so the sum must be exact (common/input.h): one element dropped
// or counted twice, anywhere, fails the test.
#include <string>
#include <vector>

#include "gpu_test.h"
#include "report.h"
#include "stages.h"

namespace {

struct StageCase {
    const Stage* stage;
    ValueType type;
    std::size_t n;
    int block;
};

std::vector<StageCase> all_stage_cases() {
    std::vector<StageCase> cases;
    for (const Stage* stage : all_stages()) {
        for (ValueType type : {ValueType::Int32, ValueType::Float32, ValueType::Float64}) {
            for (std::size_t n : test_sizes()) {
                for (int block = stage->min_block; block <= stage->max_block; block *= 2) {
                    cases.push_back({stage, type, n, block});
                }
            }
        }
    }
    return cases;
}

std::string case_name(const testing::TestParamInfo<StageCase>& info) {
    const StageCase& c = info.param;
    return std::string(c.stage->name) + "_" + std::string(type_name(c.type)) + "_n" + std::to_string(c.n) +
           "_block" + std::to_string(c.block);
}

template <typename T>
void expect_exact(const StageCase& c) {
    RunConfig config;  // every labelled variant at its default for T: reduce7's 16-byte loads and finish
    config.block = c.block;
    for (const SumCheck& check : run_stage_twice(*c.stage, config, test_input<T>(c.n), c.n)) {
        EXPECT_TRUE(check.ok) << c.stage->name << " " << type_name(c.type) << " n=" << c.n << " block=" << c.block
                              << ": " << check.detail;
    }
}

class StageTest : public testing::TestWithParam<StageCase> {};

TEST_P(StageTest, SumIsExact) {
    SKIP_WITHOUT_GPU();
    const StageCase& c = GetParam();
    with_value_type(c.type, [&](auto zero) { expect_exact<decltype(zero)>(c); });
}

INSTANTIATE_TEST_SUITE_P(Stages, StageTest, testing::ValuesIn(all_stage_cases()), case_name);

}  // namespace
