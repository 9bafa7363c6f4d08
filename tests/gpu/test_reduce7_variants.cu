// reduce7's variants (--vec 1|2|4, --finish two-pass|atomic|last-block|pdl|packed, packed for int
// only) at every size and
// block, and its scalar head and tail: input pointers 1, 2 and 3 elements past a 16-byte
// boundary; --loads 1|2|4|8|16 at the default width and finish; --grid resident|one-shot
// under every finish; and --grid auto's large tile (int and float, block 512) around where it starts.
#include <cuda_runtime.h>

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cuda_check.h"
#include "gpu_test.h"
#include "stages.h"

extern const Stage reduce7_stage;  // defined in reduce7/kernel.cu

namespace {

// reduce7's declaration of a labelled variant (reduce7/kernel.cu), for its choices and defaults.
const Variant& reduce7_variant(std::string_view name) {
    for (const Variant& variant : reduce7_stage.variants) {
        if (variant.name == name) return variant;
    }
    throw std::logic_error("reduce7 declares no variant " + std::string(name));
}

// Whether reduce7 runs `finish` on `type` at all (--finish packed: int only).
bool finish_runs_on(std::string_view finish, ValueType type) {
    const Variant& v = reduce7_variant("finish");
    return !v.unsupported || v.unsupported(finish, type).empty();
}

struct VariantCase {
    ValueType type;
    int vec;
    std::string finish;  // two-pass, atomic, last-block, pdl (skipped below compute capability 9.0), packed
    int block;
    std::size_t n;
    std::size_t offset;  // elements past a 16-byte aligned address
    std::string loads = "4";  // vector loads in flight per thread
    // --grid; "": the default, auto: resident at these sizes unless 8 x SMs x the large tile's
    // blocks an SM is at most 1,025 (on sm_80/90, 32 SMs or fewer)
    std::string grid = "";
};

std::vector<VariantCase> variant_cases(bool misaligned) {
    std::vector<VariantCase> cases;
    for (ValueType type : {ValueType::Int32, ValueType::Float32, ValueType::Float64}) {
        for (int vec : {1, 2, 4}) {
            if (vec * type_size(type) > 16) continue;
            for (std::string_view choice : reduce7_variant("finish").choices) {
                if (!finish_runs_on(choice, type)) continue;
                const std::string finish(choice);
                for (int block = reduce7_stage.min_block; block <= reduce7_stage.max_block; block *= 2) {
                    for (std::size_t n : test_sizes()) {
                        if (!misaligned) {
                            cases.push_back({type, vec, finish, block, n, 0});
                        } else if (block == 32 || block == 256 ||
                                   (vec * type_size(type) == 16 && finish == default_choice(reduce7_variant("finish"), type))) {
                            for (std::size_t offset : {1, 2, 3}) cases.push_back({type, vec, finish, block, n, offset});
                        }
                    }
                }
            }
        }
    }
    return cases;
}

std::string case_name(const testing::TestParamInfo<VariantCase>& info) {
    const VariantCase& c = info.param;
    const std::string finish = name_part(c.finish), grid = name_part(c.grid);
    return std::string(type_name(c.type)) + "_vec" + std::to_string(c.vec) + "_" + finish + "_block" +
           std::to_string(c.block) + "_n" + std::to_string(c.n) + "_offset" + std::to_string(c.offset) +
           (c.loads == "4" ? "" : "_loads" + c.loads) + (grid.empty() ? "" : "_grid_" + grid);
}

template <typename T>
void expect_exact(const VariantCase& c) {
    RunConfig config;
    config.block = c.block;
    config.variants = {{"vec", std::to_string(c.vec)}, {"finish", c.finish}, {"loads", c.loads}};
    if (!c.grid.empty()) config.variants["grid"] = c.grid;
    const TestInput<T> input = test_input<T>(c.n, c.offset);
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(input.values) % 16, c.offset * sizeof(T) % 16);
    for (const SumCheck& check : run_stage_twice(reduce7_stage, config, input, c.n)) {
        EXPECT_TRUE(check.ok) << check.detail;
    }
}

class Reduce7Variant : public testing::TestWithParam<VariantCase> {};

TEST_P(Reduce7Variant, SumIsExact) {
    SKIP_WITHOUT_GPU();
    const VariantCase& c = GetParam();
    if (c.finish == "pdl" && !pdl_unavailable_reason().empty()) GTEST_SKIP() << pdl_unavailable_reason();
    with_value_type(c.type, [&](auto zero) { expect_exact<decltype(zero)>(c); });
}

INSTANTIATE_TEST_SUITE_P(Reduce7Aligned, Reduce7Variant, testing::ValuesIn(variant_cases(false)), case_name);
INSTANTIATE_TEST_SUITE_P(Reduce7Misaligned, Reduce7Variant, testing::ValuesIn(variant_cases(true)), case_name);

// --loads at the default width and finish, at block 256, the one block its choices other
// than 4 are built for: every tile shape (loads x 256 vectors), the last tile whole,
// partial or absent.
std::vector<VariantCase> loads_cases() {
    std::vector<VariantCase> cases;
    for (ValueType type : {ValueType::Int32, ValueType::Float32, ValueType::Float64}) {
        const int vec = static_cast<int>(16 / type_size(type));
        const std::string finish(default_choice(reduce7_variant("finish"), type));
        for (std::string_view loads : reduce7_variant("loads").choices) {
            if (loads == "4") continue;  // the default: Reduce7Aligned and Reduce7Misaligned run it
            for (std::size_t n : test_sizes()) {
                for (std::size_t offset : {0, 3}) cases.push_back({type, vec, finish, 256, n, offset, std::string(loads)});
            }
        }
    }
    return cases;
}

INSTANTIATE_TEST_SUITE_P(Reduce7Loads, Reduce7Variant, testing::ValuesIn(loads_cases()), case_name);

// --grid resident and one-shot named, under every finish, at the default width, at blocks
// 32 and 256: the two grids differ from (1 << 24) + 3 up, where the tiles outnumber the
// blocks that fit at once (a resident grid strides; a one-shot one has a block per tile).
std::vector<VariantCase> grid_cases() {
    std::vector<VariantCase> cases;
    for (ValueType type : {ValueType::Int32, ValueType::Float32, ValueType::Float64}) {
        const int vec = static_cast<int>(16 / type_size(type));
        for (std::string_view finish : reduce7_variant("finish").choices) {
            if (!finish_runs_on(finish, type)) continue;
            for (std::string_view grid : {"resident", "one-shot"}) {
                for (int block : {32, 256}) {
                    for (std::size_t n : test_sizes()) {
                        cases.push_back({type, vec, std::string(finish), block, n, n % 3, "4", std::string(grid)});
                    }
                }
            }
        }
    }
    return cases;
}

INSTANTIATE_TEST_SUITE_P(Reduce7Grid, Reduce7Variant, testing::ValuesIn(grid_cases()), case_name);

// --grid auto (the default): int and float at block 512 with an order-free finish (packed, int
// only; atomic) take 8 loads a thread and one block per 64 KiB tile from eight waves of those
// tiles (reduce7/variants.cuh).
// The sizes come from this GPU's SMs and threads per SM / 512 blocks an SM, which the
// launcher's occupancy query gives for the large tile when its registers allow (4 on sm_90:
// Nsight's launch__occupancy_limit_registers in docs/results/reduce7_auto_4022ebb/a4/):
// a tile short of the start (the resident grid), one element short (the large tile, the last
// one short by an element), and 512 vectors and one element into a new tile, each aligned and
// with a misaligned head; every sum exact (the inputs are +-1, so float's too), and the
// resident grid named at the same sizes.
// Were the sizes to miss the decision this test could not tell, since both kernels sum
// exactly: tests/host/test_reduce7_grid.cu checks the decision. (test_large_sizes.cu runs
// the large tile at 2^31 + 3 and 2^32 + 5: int's by default, float's with --finish atomic.)
template <typename T>
void check_around_the_large_tile(std::initializer_list<std::string_view> finishes) {
    int device = 0, sms = 0, threads_per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
    const std::size_t tile = 512 * 8 * (16 / sizeof(T));  // 512 threads x 8 loads x 16 bytes
    const std::size_t starts = 8 * std::size_t(sms) * std::size_t(threads_per_sm / 512) * tile;
    for (std::size_t n : {starts - tile, starts - 1, starts + 4 * 512 + 1}) {
        for (std::size_t offset : {0, 3}) {
            const TestInput<T> input = test_input<T>(n, offset);
            for (std::string_view finish : finishes) {
                for (std::string_view grid : {"auto", "resident"}) {
                    RunConfig config;
                    config.block = 512;
                    config.variants = {{"finish", std::string(finish)}, {"grid", std::string(grid)}};
                    for (const SumCheck& check : run_stage_twice(reduce7_stage, config, input, n)) {
                        EXPECT_TRUE(check.ok) << "n=" << n << " offset=" << offset << " --finish " << finish
                                              << " --grid " << grid << ": " << check.detail;
                    }
                }
            }
        }
    }
}

TEST(Reduce7AutoGrid, LargeIntTileIsExactAroundWhereItStarts) {
    SKIP_WITHOUT_GPU();
    check_around_the_large_tile<int>({"packed", "atomic"});
}

TEST(Reduce7AutoGrid, LargeFloatTileIsExactAroundWhereItStarts) {
    SKIP_WITHOUT_GPU();
    check_around_the_large_tile<float>({"atomic"});
}

}  // namespace
