// The paths of docs/11-fixed-costs.md give the exact sum at every test size: every stage
// captured in a CUDA Graph and replayed (twice, on one workspace, as a batch would), and
// reduce7's --finish pdl (Programmatic Dependent Launch, compute capability 9.0 and newer)
// in a stream of its own. Integer data: one element dropped or counted twice fails.
#include <string>
#include <vector>

#include "cuda_graph.h"
#include "gpu_test.h"
#include "stages.h"
#include "timing.h"

namespace {

struct GraphCase {
    const Stage* stage;
    ValueType type;
    std::size_t n;
};

std::vector<GraphCase> graph_cases() {
    std::vector<GraphCase> cases;
    for (const Stage* stage : all_stages()) {
        for (ValueType type : {ValueType::Int32, ValueType::Float32, ValueType::Float64}) {
            for (std::size_t n : test_sizes()) cases.push_back({stage, type, n});
        }
    }
    return cases;
}

std::string graph_case_name(const testing::TestParamInfo<GraphCase>& info) {
    return std::string(info.param.stage->name) + "_" + std::string(type_name(info.param.type)) + "_n" +
           std::to_string(info.param.n);
}

// Two reductions into two results, captured once, replayed twice: both results exact
// after each replay (the second reduction of a replay, and the first of the next, find
// the workspace the one before left).
template <typename T>
void expect_graph_exact(const Stage& stage, const RunConfig& config, std::size_t n) {
    const TestInput<T> input = test_input<T>(n);
    CudaStream stream;
    DeviceBuffer<unsigned char> workspace(stage.workspace_bytes(n, sizeof(T), config));
    if (workspace.bytes()) CUDA_CHECK(cudaMemset(workspace.get(), 0, workspace.bytes()));
    DeviceBuffer<T> results(2);
    CUDA_CHECK(cudaDeviceSynchronize());
    const CudaGraph graph(stream, [&] {
        for (int k = 0; k < 2; ++k) stage.sum<T>()(input.values, n, results.get() + k, workspace.get(), config, stream);
    });
    for (int replay = 0; replay < 2; ++replay) {
        CUDA_CHECK(cudaMemsetAsync(results.get(), 0x7F, results.bytes(), stream));  // a value no sum here takes
        graph.launch(stream);
        T got[2] = {};
        CUDA_CHECK(cudaMemcpyAsync(got, results.get(), results.bytes(), cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        for (int k = 0; k < 2; ++k) {
            const SumCheck check = check_sum(got[k], input.exact_sum);
            EXPECT_TRUE(check.ok) << stage.name << " n=" << n << " replay " << replay << " reduction " << k << ": "
                                  << check.detail;
        }
    }
}

class GraphTest : public testing::TestWithParam<GraphCase> {};

TEST_P(GraphTest, CapturedSumIsExact) {
    SKIP_WITHOUT_GPU();
    const GraphCase& c = GetParam();
    RunConfig config;  // every labelled variant at its default
    with_value_type(c.type, [&](auto zero) { expect_graph_exact<decltype(zero)>(*c.stage, config, c.n); });
}

INSTANTIATE_TEST_SUITE_P(Graphs, GraphTest, testing::ValuesIn(graph_cases()), graph_case_name);

// reduce7 --finish pdl where the GPU has it: in a stream of its own and captured in a graph.
class PdlTest : public testing::TestWithParam<ValueType> {};

TEST_P(PdlTest, SumIsExactInAStreamAndInAGraph) {
    if (!pdl_unavailable_reason().empty()) GTEST_SKIP() << pdl_unavailable_reason();
    const Stage* reduce7 = find_stage("reduce7");
    if (!reduce7) GTEST_SKIP() << "no reduce7 in this tree";
    for (int block : {32, 256, 1024}) {
        RunConfig config;
        config.block = block;
        config.variants = {{"finish", "pdl"}};
        for (std::size_t n : test_sizes()) {
            with_value_type(GetParam(), [&](auto zero) {
                using T = decltype(zero);
                CudaStream stream;
                for (const SumCheck& check : run_stage_twice(*reduce7, config, test_input<T>(n), n, stream)) {
                    EXPECT_TRUE(check.ok) << "block " << block << " n=" << n << ": " << check.detail;
                }
                expect_graph_exact<T>(*reduce7, config, n);
            });
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Pdl, PdlTest, testing::Values(ValueType::Int32, ValueType::Float32, ValueType::Float64),
                         [](const testing::TestParamInfo<ValueType>& info) { return std::string(type_name(info.param)); });

}  // namespace
