// The grader on a GPU, for every assignment: the reference gets full marks; the stub gets
// nothing; the previous stage's code in the stage's place is correct but earns no
// performance points; a submission that hard-codes the sums of the public tests' inputs
// passes them and fails every hidden group; for reduce4, the pre-Volta last warp (correct
// sums, racy) loses the racecheck points. Skipped, with the reason, without a GPU.
//
//   ctest --preset grading            (builds and grades seven trees: allow half an hour)
//
// Each grading's report and results.json are written to <build>/classroom/tests/grading/
// examples; scripts/grading_summary.sh turns the reports into docs/results/grading/grading.csv.
#include <gtest/gtest.h>

#include <cstdio>
#include <regex>
#include <sstream>

#include "assignment.h"
#include "generator.h"
#include "grader.h"
#include "json.h"
#include "markers.h"
#include "process.h"

namespace {

using namespace classroom;

const fs::path kRepo = CLASSROOM_REPOSITORY;
const fs::path kWork = CLASSROOM_WORK;

std::string gpu_missing() {
    const ProcessResult smi = run_process({"nvidia-smi", "-L"}, "", 60);
    if (!smi.started) return "nvidia-smi not found: no GPU driver, grading tests skipped";
    if (smi.exit_code != 0 || smi.output.find("GPU 0") == std::string::npos) {
        return "no GPU (nvidia-smi -L: " + smi.output + "): grading tests skipped";
    }
    return "";
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
        text.replace(at, from.size(), to);
    }
    return text;
}

// The kernel name a stage registers: "first_add_during_load" for reduce3.
std::string kernel_name(const std::string& kernel_cu, int stage) {
    const std::regex registered("\"" + stage_name(stage) + "\", \"(\\w+)\"");
    std::smatch m;
    if (!std::regex_search(kernel_cu, m, registered)) throw std::runtime_error("no Stage in " + stage_name(stage));
    return m[1];
}

// A file that includes a header of its own folder, with the header pasted in: a submission
// is its kernel.cu alone.
std::string inline_local_includes(std::string text, const fs::path& folder) {
    static const std::regex local(R"re(#include "([\w.]+)"\n)re");
    std::smatch m;
    std::string out;
    while (std::regex_search(text, m, local)) {
        const fs::path header = folder / m.str(1);
        out += m.prefix().str() + (fs::exists(header) ? read_file(header) : m.str(0));
        text = m.suffix().str();
    }
    return out + text;
}

fs::path submission_with(const fs::path& dir, int stage, const std::string& kernel) {
    fs::remove_all(dir);
    write_file(dir / stage_name(stage) / "kernel.cu", kernel);
    return dir;
}

struct Grading {
    GradeResults results;
    int exit_status = 0;
    double points(const std::string& test_suffix) const {
        for (const TestResult& t : results.tests) {
            if (t.name.find(test_suffix) != std::string::npos) return t.score;
        }
        ADD_FAILURE() << "no test " << test_suffix;
        return -1;
    }
    std::string output(const std::string& test_suffix) const {
        for (const TestResult& t : results.tests) {
            if (t.name.find(test_suffix) != std::string::npos) return t.output;
        }
        return "";
    }
};

class Grader : public testing::TestWithParam<int> {
protected:
    void SetUp() override {
        const std::string missing = gpu_missing();
        if (!missing.empty()) GTEST_SKIP() << missing;
        stage = GetParam();
        out = kWork / stage_name(stage);
        generate(kRepo, Assignment{stage, stage}, out);
    }

    Grading grade_as(const std::string& fixture, const fs::path& submission) {
        GradeOptions options;
        options.autograder = out / "autograder";
        options.submission = submission;
        options.work = out / "work";
        const Graded graded = grade(options);
        const fs::path examples = kWork / "examples";
        write_file(examples / (stage_name(stage) + "-" + fixture + ".json"), results_json(graded.results));
        std::ostringstream report;
        write_report(report, graded.results);
        write_file(examples / (stage_name(stage) + "-" + fixture + ".txt"), report.str());
        std::printf("%s %s: %g / %g (exit %d)\n", stage_name(stage).c_str(), fixture.c_str(), graded.results.score(),
                    graded.results.max_score(), graded.exit_status);
        return Grading{graded.results, graded.exit_status};
    }

    int stage = 0;
    fs::path out;
};

TEST_P(Grader, ScoresWhatTheRubricPromises) {
    const std::string name = stage_name(stage);
    const fs::path solutions = out / "autograder/solution";
    const std::string reference = read_file(solutions / name / "kernel.cu");

    // The reference solution: full marks.
    const Grading full = grade_as("reference", submission_with(out / "submissions/reference", stage, reference));
    EXPECT_EQ(full.results.score(), Rubric::kTotal) << full.output("performance");
    EXPECT_EQ(full.exit_status, 0);

    // The stub as handed out: it builds, and earns nothing.
    const Grading stub = grade_as("stub", out / "student");
    EXPECT_EQ(stub.points("build"), 0);
    EXPECT_EQ(stub.results.score(), 0);
    EXPECT_NE(stub.output("public tests").find("not implemented yet (assignment " + std::to_string(stage) + ")"),
              std::string::npos)
        << stub.output("public tests");
    EXPECT_EQ(stub.exit_status, 1);

    // The previous stage's code in this stage's place: correct, but not this stage's speed.
    const std::string previous = read_file(solutions / stage_name(stage - 1) / "kernel.cu");
    std::string slow = inline_local_includes(previous, solutions / stage_name(stage - 1));
    slow = replace_all(slow, kernel_name(previous, stage - 1), kernel_name(reference, stage));
    slow = replace_all(slow, stage_name(stage - 1) + "_stage", name + "_stage");
    slow = replace_all(slow, "\"" + stage_name(stage - 1) + "\"", "\"" + name + "\"");
    const Grading slower = grade_as("previous-stage", submission_with(out / "submissions/slow", stage, slow));
    EXPECT_EQ(slower.results.score(), Rubric::kTotal - Rubric::kPerformance) << slower.output("performance");
    EXPECT_EQ(slower.points("performance"), 0);

    // Hard-coded sums: the sum of the public tests' input for each n (their seed is
    // n * 7 + offset + 1, offset being how many elements past a 256-byte boundary the
    // input starts), written without reading the input. The public tests pass; fresh seeds don't.
    std::smatch registered;  // the launcher the Stage registers: "X<int>, X<float>, X<double>"
    ASSERT_TRUE(std::regex_search(reference, registered, std::regex(R"((\w+)<int>, \1<float>, \1<double>)")));
    const std::string launcher = registered[1];
    std::string cheat = replace_all(reference, launcher + "<int>, " + launcher + "<float>, " + launcher + "<double>",
                                    "public_sum<int>, public_sum<float>, public_sum<double>");
    ASSERT_NE(cheat, reference) << "the Stage initializer did not name " << launcher;
    cheat = replace_all(cheat, "const Stage " + name + "_stage = {",
                        "#include <cstdint>\n#include \"input.h\"\n"
                        "template <typename T>\n"
                        "void public_sum(const T* in, std::size_t n, T* out, void*, const RunConfig&, cudaStream_t) {\n"
                        "    // the public tests' seed: n * 7 + (elements past a 256-byte boundary) + 1\n"
                        "    const std::size_t offset = reinterpret_cast<std::uintptr_t>(in) % 256 / sizeof(T);\n"
                        "    const T value = static_cast<T>(make_input<T>(n, n * 7 + offset + 1).expected.exact);\n"
                        "    CUDA_CHECK(cudaMemcpy(out, &value, sizeof(T), cudaMemcpyHostToDevice));\n"
                        "}\n\nconst Stage " + name + "_stage = {");
    const Grading hard_coded = grade_as("hard-coded", submission_with(out / "submissions/hard-coded", stage, cheat));
    EXPECT_EQ(hard_coded.points("public tests"), Rubric::kPublicTests) << hard_coded.output("public tests");
    for (const std::string& group : hidden_groups()) {
        EXPECT_EQ(hard_coded.points("hidden cases, " + group), 0) << group;
        EXPECT_NE(hard_coded.output("hidden cases, " + group).find("expected "), std::string::npos);
    }
    EXPECT_EQ(hard_coded.results.score(), Rubric::kPublicTests);

    if (stage == 4) {
        // The pre-Volta last warp: right sums on this GPU, and a data race.
        const MarkedFile marked = parse_markers(read_file(kRepo / "reduce4/kernel.cu"), "reduce4/kernel.cu");
        std::string body;
        for (const std::string& line : marked.regions.at(0).reference) body += line + "\n";
        const std::string racy =
            replace_all(reference, body, "    return legacy_last_warp_sum<LastWarp::LegacyVolatile>(shared, tid);\n");
        ASSERT_NE(racy, reference);
        const Grading raced = grade_as("racy", submission_with(out / "submissions/racy", stage, racy));
        EXPECT_EQ(raced.points("racecheck"), 0) << raced.output("racecheck");
        EXPECT_EQ(raced.results.score(), Rubric::kTotal - Rubric::kRacecheck) << raced.output("performance");
    }

    // A changed harness file: refused, zero.
    fs::path tampered = out / "submissions/tampered";
    fs::remove_all(tampered);
    write_tree(make_student_tree(kRepo, Assignment{stage, stage}), tampered);
    write_file(tampered / "common/verify.cpp", read_file(tampered / "common/verify.cpp") + "\n");
    write_file(tampered / name / "kernel.cu", reference);
    const Grading refused = grade_as("tampered", tampered);
    EXPECT_EQ(refused.results.score(), 0);
    EXPECT_NE(refused.results.output.find("refused: common/verify.cpp differs"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Assignments, Grader, testing::Range(1, 8),
                         [](const testing::TestParamInfo<int>& info) { return stage_name(info.param); });

}  // namespace
