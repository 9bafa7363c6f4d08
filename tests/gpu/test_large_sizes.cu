// Sizes past 2^31 and 2^32: every stage, int and float, summed exactly, at its defaults and
// with each other choice of its --grid and --finish.
//
// 2^31 + 3 is the first size whose element indices do not fit an int; 2^32 + 5 the first
// whose indices do not fit an unsigned either, so a kernel or launcher that computes an
// index or a count in 32 bits reads the wrong elements or too few of them, and the exact
// check fails. The inputs are +-1 with random signs (input.h): every partial sum stays
// far below 2^24, so the float sums are exact too (docs/00-overview.md gives the bound).
// A test is skipped, with the bytes it needs and the bytes free, on a GPU too small for it.
#include <cuda_runtime.h>

#include <algorithm>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cuda_check.h"
#include "device_input.h"
#include "gpu_test.h"
#include "report.h"
#include "stages.h"

namespace {

struct LargeCase {
    std::size_t n;
    ValueType type;
    const Stage* stage;
    const Variant* variant = nullptr;  // a --grid or --finish of the stage's, or nullptr: its defaults (below)
    std::string choice = {};           // the variant's choice, other than its default for the type
};

// The variants whose every choice runs at these sizes, one at a time: the grid decides which
// block reads which indices, and the finish which kernel and grid run (reduce7's default takes
// one block per 64 KiB tile for int at these sizes, and --grid resident keeps the grid-stride
// loop, whose indices past 2^31 the default no longer reaches for int; --finish atomic takes
// the 64 KiB tile for float too, two-pass and pdl the resident grid for both).
constexpr std::string_view kVariantsAtLargeSizes[] = {"grid", "finish"};

// Every stage at its defaults, then once more with each other choice of those variants that
// the type can run.
std::vector<LargeCase> large_cases() {
    std::vector<LargeCase> cases;
    for (std::size_t n : {(std::size_t{1} << 31) + 3, (std::size_t{1} << 32) + 5}) {
        for (ValueType type : {ValueType::Int32, ValueType::Float32}) {
            for (const Stage* stage : all_stages()) {
                cases.push_back({n, type, stage});
                for (const Variant& variant : stage->variants) {
                    if (std::find(std::begin(kVariantsAtLargeSizes), std::end(kVariantsAtLargeSizes), variant.name) ==
                        std::end(kVariantsAtLargeSizes)) {
                        continue;
                    }
                    for (std::string_view choice : variant.choices) {
                        if (choice == default_choice(variant, type)) continue;
                        if (variant.unsupported && !variant.unsupported(choice, type).empty()) continue;
                        cases.push_back({n, type, stage, &variant, std::string(choice)});
                    }
                }
            }
        }
    }
    return cases;  // in this order, so consecutive tests share one input (below)
}

std::string case_name(const testing::TestParamInfo<LargeCase>& info) {
    const LargeCase& c = info.param;
    return std::string(c.stage->name) + "_" + std::string(type_name(c.type)) + "_n" + std::to_string(c.n) +
           (c.variant ? "_" + name_part(c.variant->name) + "_" + name_part(c.choice) : "");
}

// Why this GPU cannot run the case's choice (one line), or "".
std::string unavailable_here(const LargeCase& c) {
    if (!c.variant || !c.variant->needs_compute_capability) return "";
    const int needs = c.variant->needs_compute_capability(c.choice);
    int device = 0, major = 0, minor = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    if (major * 10 + minor >= needs) return "";
    return "--" + std::string(c.variant->name) + " " + c.choice + " needs compute capability " +
           std::to_string(needs / 10) + "." + std::to_string(needs % 10) + ": skipped";
}

// One large input at a time: the tests of one (n, type) share it, and it is freed before
// the next (n, type) is made, so the tests need one input's memory, not four.
struct CachedInput {
    std::size_t n = 0;
    ValueType type = ValueType::Int32;
    std::shared_ptr<void> input;  // a DeviceInput<T>
};
CachedInput cached;

// The input for (n, T), or nullptr with the reason when the GPU has too little memory for
// it and the largest workspace any stage needs at that size.
template <typename T>
const DeviceInput<T>* large_input(std::size_t n, std::string& why) {
    if (cached.input && cached.n == n && cached.type == value_type_of<T>()) {
        return static_cast<const DeviceInput<T>*>(cached.input.get());
    }
    cached.input.reset();  // free the previous input before asking what is free
    MemoryPlan plan;
    plan.add("input", n * sizeof(T));
    std::size_t workspace = 0;
    for (const Stage* stage : all_stages()) {
        workspace = std::max(workspace, stage->workspace_bytes(n, sizeof(T), RunConfig{}));
    }
    plan.add("workspace", workspace);
    const DeviceMemory memory = device_memory();
    if (const auto shortfall = memory_shortfall(plan, "n = " + with_thousands(n) + " " +
                                                          std::string(type_name(value_type_of<T>())) + " values",
                                                memory.free_bytes, memory.total_bytes)) {
        why = "too large for this GPU: " + *shortfall;
        return nullptr;
    }
    cached = {n, value_type_of<T>(), std::make_shared<DeviceInput<T>>(make_device_input<T>(n, /*seed=*/n + 17))};
    return static_cast<const DeviceInput<T>*>(cached.input.get());
}

template <typename T>
void expect_exact_at_large_size(const LargeCase& c) {
    std::string why;
    const DeviceInput<T>* input = large_input<T>(c.n, why);
    if (!input) GTEST_SKIP() << why;
    const TestInput<T> values{input->values.get(), input->expected.exact};
    RunConfig config;  // every labelled variant at its default for the type (reduce7: 16-byte loads, its finish)
    config.block = c.stage->default_block;  // reduce7: 512, where int takes --grid auto's large tile
    if (c.variant) config.variants = {{std::string(c.variant->name), c.choice}};
    for (const SumCheck& check : run_stage_twice(*c.stage, config, values, c.n)) {
        EXPECT_TRUE(check.ok) << c.stage->name << " " << type_name(c.type) << " n=" << c.n
                              << (c.variant ? " --" + std::string(c.variant->name) + " " + c.choice : "") << ": "
                              << check.detail;
    }
    // At this size too, the check sees one element fewer: the same stage over the first
    // n - 1 values must fail it.
    if (c.stage == all_stages().back() && !c.variant) {
        for (const SumCheck& check : run_stage_twice(*c.stage, config, values, c.n - 1)) {
            EXPECT_FALSE(check.ok) << c.stage->name << " n-1=" << c.n - 1 << " passed the check for n";
        }
    }
}

class LargeSizeTest : public testing::TestWithParam<LargeCase> {};

TEST_P(LargeSizeTest, SumIsExact) {
    SKIP_WITHOUT_GPU();
    const LargeCase& c = GetParam();
    if (const std::string why = unavailable_here(c); !why.empty()) GTEST_SKIP() << why;
    with_value_type(c.type, [&](auto zero) { expect_exact_at_large_size<decltype(zero)>(c); });
}

INSTANTIATE_TEST_SUITE_P(LargeSizes, LargeSizeTest, testing::ValuesIn(large_cases()), case_name);

}  // namespace
