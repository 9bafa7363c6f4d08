// grade_reduceN: the grader's program for one graded stage (GRADED_STAGE), built inside
// the tree being graded (classroom/grading/CMakeLists.txt). Never handed to students.
//
//   grade_reduce4 --device                  the GPU, in one line; exit 3 without one
//   grade_reduce4 --hidden int --seed S --min-block 64
//                                           one hidden group: exit 0 every sum exact, 1 not
//   grade_reduce4 --perf --seed S           the student's stage, the reference solution and
//                                           the previous stage's solution, timed in turn
//
// The hidden cases compute their inputs and exact sums with this file's own code, not the
// harness's, and compare bits here: a submission that redefines a harness function can
// fool its own tree's tests, not these.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "benchmark.h"
#include "stages.h"
#include "stats.h"

const Stage& reference_solution();  // the instructor's GRADED_STAGE (solution_stage.cu.in)
const Stage& previous_solution();   // the instructor's stage before it

namespace {

// ---------------------------------------------------------------- the hidden cases
struct Case {
    ValueType type;
    std::size_t n;
    int block;
    std::size_t offset;  // elements past a 256-byte aligned address
};

// The block sizes the assignment asks for: from --min-block (the handout's) to the
// reference's largest.
int g_min_block = 32;

std::vector<int> blocks_of(const Stage& stage) {
    std::vector<int> blocks;
    for (int b = std::max(stage.min_block, g_min_block); b <= stage.max_block; b *= 2) blocks.push_back(b);
    return blocks;
}

// None of these sizes is in the public tests (tests/gpu/gpu_test.cu): around warp and
// block edges, odd sizes that need three and four passes, and a few million.
std::vector<Case> hidden_cases(const std::string& group, const Stage& reference) {
    const std::vector<std::size_t> sizes = {3,    63,   64,   65,     127,    129,    511,
                                            513,  2047, 2049, 4097,   100003, 999999, (std::size_t{1} << 21) + 7,
                                            (std::size_t{1} << 23) - 1};
    std::vector<Case> cases;
    if (group == "int" || group == "float" || group == "double") {
        const ValueType type = group == "int" ? ValueType::Int32 : group == "float" ? ValueType::Float32 : ValueType::Float64;
        for (std::size_t n : sizes) {
            for (int block : blocks_of(reference)) cases.push_back({type, n, block, 0});
        }
    } else if (group == "misaligned") {
        const std::vector<int> all = blocks_of(reference);
        for (ValueType type : {ValueType::Int32, ValueType::Float32, ValueType::Float64}) {
            for (std::size_t n : {std::size_t{4099}, std::size_t{1000001}}) {
                for (int block : {all.front(), 256, all.back()}) {
                    for (std::size_t offset : {1, 2, 3}) cases.push_back({type, n, block, offset});
                }
            }
        }
    }
    return cases;
}

std::uint64_t mix(std::uint64_t seed, std::uint64_t i) {
    std::uint64_t z = seed * 0xD1B54A32D192ED03ULL + (i + 1) * 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 29)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 32);
}

// Nonzero integers with random signs, as small as needed to keep every partial sum exact
// in the type (the same reasoning as common/input.h).
template <typename T>
std::vector<T> case_values(std::size_t n, std::uint64_t seed, long long& exact) {
    const long long limit = std::is_same_v<T, int> ? 2147483647LL : std::is_same_v<T, float> ? (1LL << 24) : (1LL << 53);
    const long long magnitude = std::max(1LL, std::min(8LL, limit / static_cast<long long>(n)));
    std::vector<T> values(n);
    exact = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t z = mix(seed, i);
        const long long v = (1 + static_cast<long long>((z >> 1) % magnitude)) * ((z & 1) ? 1 : -1);
        values[i] = static_cast<T>(v);
        exact += v;
    }
    return values;
}

std::string case_text(const Case& c) {
    return "n=" + std::to_string(c.n) + " type=" + std::string(type_name(c.type)) + " block=" + std::to_string(c.block) +
           (c.offset ? " offset=" + std::to_string(c.offset) + " elements" : "");
}

// Runs the student's stage twice on one case (the second run reuses the workspace, as a
// caller would); "" when both sums are exact, else what went wrong.
template <typename T>
std::string run_case(const Stage& student, const Case& c, std::uint64_t seed) {
    long long exact = 0;
    const std::vector<T> values = case_values<T>(c.n, seed, exact);
    DeviceBuffer<T> buffer(c.n + c.offset + 1);
    CUDA_CHECK(cudaMemcpy(buffer.get() + c.offset, values.data(), c.n * sizeof(T), cudaMemcpyHostToDevice));
    RunConfig config;
    config.block = c.block;
    config.vec = static_cast<int>(16 / sizeof(T));
    config.finish = default_finish(c.type);
    const SumFn<T> sum = student.sum<T>();
    if (!sum || !student.workspace_bytes) return "the stage registers no launcher for " + std::string(type_name(c.type));
    DeviceBuffer<unsigned char> workspace(student.workspace_bytes(c.n, sizeof(T), config));
    if (workspace.bytes()) CUDA_CHECK(cudaMemset(workspace.get(), 0, workspace.bytes()));
    DeviceBuffer<T> result(1);
    for (int run = 1; run <= 2; ++run) {
        CUDA_CHECK(cudaMemset(result.get(), 0x7F, sizeof(T)));  // a value no sum here takes
        sum(buffer.get() + c.offset, c.n, result.get(), workspace.get(), config, nullptr);
        CUDA_CHECK(cudaDeviceSynchronize());
        T got{};
        CUDA_CHECK(cudaMemcpy(&got, result.get(), sizeof(T), cudaMemcpyDeviceToHost));
        const long double value = static_cast<long double>(got);
        if (!(std::isfinite(value) && value == static_cast<long double>(exact))) {
            char text[160];
            std::snprintf(text, sizeof text, "expected %lld, got %.17g (run %d of 2)", exact, static_cast<double>(got), run);
            return text;
        }
    }
    return "";
}

int run_hidden(const Stage& student, const std::string& group, std::uint64_t seed) {
    const std::vector<Case> cases = hidden_cases(group, reference_solution());
    if (cases.empty()) {
        std::fprintf(stderr, "grade: no hidden group '%s' (int, float, double, misaligned)\n", group.c_str());
        return 2;
    }
    int failed = 0;
    for (std::size_t k = 0; k < cases.size(); ++k) {
        const Case& c = cases[k];
        std::printf("CASE %s\n", case_text(c).c_str());
        std::fflush(stdout);  // if the case hangs, the grader names it
        std::string failure;
        try {
            failure = with_value_type(c.type, [&](auto zero) { return run_case<decltype(zero)>(student, c, mix(seed, k)); });
        } catch (const std::exception& e) {
            failure = std::string("CUDA error: ") + e.what();
        }
        if (!failure.empty()) {
            ++failed;
            std::printf("FAIL %s: %s\n", case_text(c).c_str(), failure.c_str());
        }
    }
    std::printf("SUMMARY %s: %d of %zu cases wrong\n", group.c_str(), failed, cases.size());
    return failed ? 1 : 0;
}

// ---------------------------------------------------------------- the timing
// The three stages in turn, round after round, each round in another order, on one input:
// a GPU shared with other work, or a slower GPU, changes all three alike.
int run_perf(const Stage& student, std::uint64_t seed) {
    constexpr std::size_t kN = std::size_t{1} << 24;  // 67 MB of int: DRAM, not L2, on every GPU
    constexpr int kRounds = 7;
    const DeviceInfo device = open_device(0, std::nullopt);
    L2Flusher flusher(device.l2_bytes);
    CudaStream stream;
    Options options;
    options.iters = 10;
    options.warmup = 2;
    options.type = ValueType::Int32;
    BenchContext context{device, options, flusher, stream};
    const DeviceInput<int> input = make_device_input<int>(kN, seed % 1000000007ULL);
    const Stage* stages[3] = {&student, &reference_solution(), &previous_solution()};
    const char* roles[3] = {"submission", "reference", "previous"};
    std::vector<double> medians[3];
    bool verified[3] = {true, true, true};
    for (int round = 0; round < kRounds; ++round) {
        for (int k = 0; k < 3; ++k) {
            const int which = (k + round) % 3;
            const Record r = bench_stage(*stages[which], run_config(options), input, context);
            medians[which].push_back(r.median_ms);
            verified[which] = verified[which] && r.verified;
        }
    }
    std::printf("n = %zu int, block 256, %d rounds of %d timed runs each, L2 flushed before each run, on %s\n", kN,
                kRounds, options.iters, device.name.c_str());
    for (int k = 0; k < 3; ++k) {
        const TimingStats stats = summarize(medians[k]);
        std::printf("PERF %s median_ms=%.6f min_ms=%.6f max_ms=%.6f %s\n", roles[k], stats.median, stats.min, stats.max,
                    verified[k] ? "verified" : "FAILED");
    }
    return verified[0] ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    std::string mode, group;
    std::uint64_t seed = 1;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--device" || a == "--perf") {
            mode = a;
        } else if (a == "--hidden" && i + 1 < argc) {
            mode = a;
            group = argv[++i];
        } else if (a == "--seed" && i + 1 < argc) {
            seed = std::strtoull(argv[++i], nullptr, 10);
        } else if (a == "--min-block" && i + 1 < argc) {
            g_min_block = std::atoi(argv[++i]);
        } else {
            std::fprintf(stderr, "grade: unknown argument '%s' (--device | --hidden GROUP | --perf, --seed S, --min-block B)\n", a.c_str());
            return 2;
        }
    }
    const Stage* student = find_stage(GRADED_STAGE);
    if (!student) {
        std::fprintf(stderr, "grade: the tree has no stage %s\n", GRADED_STAGE);
        return 3;
    }
    try {
        if (mode == "--device") {
            std::printf("%s\n", describe_device(open_device(0, std::nullopt)).c_str());
            return 0;
        }
        if (mode == "--hidden") return run_hidden(*student, group, seed);
        if (mode == "--perf") return run_perf(*student, seed);
        std::fprintf(stderr, "grade: give --device, --hidden GROUP or --perf\n");
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "grade: %s\n", e.what());
        return 3;
    }
}
