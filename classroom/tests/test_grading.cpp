// The grader on a GPU, for every assignment, held to what docs/classroom.md's threat model
// and rubric promise: the reference gets full marks; the stub nothing; the previous
// stage's code everything but the performance points; a submission that hard-codes the
// public tests' sums, or edits a harness file, nothing; and every exploit class is
// refused by the source check with a zero. For reduce4, the source check is also turned
// off ("check off" in source_policy.txt) to show that the judge alone still holds: an exit
// before main, printed verdicts and an exit status of 0, a process left behind, another
// stage's launcher, a memoized answer; and the racy pre-Volta last warp loses exactly
// its racecheck points, while a shuffle last warp (a correct alternative) gets them all.
// Skipped, with the reason, without a GPU.
//
//   ctest --preset grading            (builds and grades seven trees: allow half an hour)
//
// Each grading's report and results.json are written to <build>/classroom/tests/grading/
// examples; scripts/grading_summary.sh turns the reports into docs/results/grading/grading.csv.
#include <gtest/gtest.h>

#include <cstdio>
#include <chrono>
#include <regex>
#include <sstream>
#include <thread>

#include "assignment.h"
#include "generator.h"
#include "grader.h"
#include "json.h"
#include "markers.h"
#include "fixtures.h"
#include "process.h"

namespace {

using namespace classroom;
using namespace classroom_fixtures;

const fs::path kRepo = CLASSROOM_REPOSITORY;

// Host only (no GPU): the fixtures that rewrite reduce4's last warp change its code, not the
// header's prose (a prose region placed first once made them paste code into the header,
// and the GPU gradings of three fixtures came out 0: "did not compile").
TEST(Fixtures, TheLastWarpFixturesChangeCodeNotComments) {
    const MarkedFile marked = parse_markers(read_file(kRepo / "reduce4/kernel.cu"), "reduce4/kernel.cu");
    const std::string reference = render(marked, [](int) { return RegionAs::Reference; });
    for (const auto& [name, fixture] : {std::pair{"racy", racy_last_warp(reference, kRepo)},
                                        std::pair{"shuffle", shuffle_last_warp(reference, kRepo)}}) {
        const std::vector<std::string> before = split_lines(reference), after = split_lines(fixture);
        std::size_t first = 0;  // the first line that differs, from the top and from the bottom
        while (first < before.size() && first < after.size() && before[first] == after[first]) ++first;
        std::size_t tail = 0;
        while (tail < before.size() - first && tail < after.size() - first &&
               before[before.size() - 1 - tail] == after[after.size() - 1 - tail]) ++tail;
        ASSERT_LT(first, before.size()) << name << ": the fixture changed nothing";
        bool code_replaced = false;
        for (std::size_t i = first; i < before.size() - tail; ++i) code_replaced |= trimmed(before[i]).rfind("//", 0) != 0;
        EXPECT_TRUE(code_replaced) << name << " replaced comments only, from line " << first + 1;
        const std::size_t first_include = reference.substr(0, reference.find("\n#include")).size();
        EXPECT_GT(reference.find(before[first]), first_include) << name << " changed the header: " << before[first];
    }
}
const fs::path kWork = CLASSROOM_WORK;

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

// Writes the grading's report and results.json to the examples folder and prints its
// score and how long it took (the first grading of a work folder is the cold one).
Grading record(const std::string& assignment, const std::string& fixture, const Graded& graded) {
    const fs::path examples = kWork / "examples";
    write_file(examples / (assignment + "-" + fixture + ".json"), results_json(graded.results));
    std::ostringstream report;
    write_report(report, graded.results);
    write_file(examples / (assignment + "-" + fixture + ".txt"), report.str());
    std::printf("%s %s: %g / %g (exit %d, %.0f s)\n", assignment.c_str(), fixture.c_str(), graded.results.score(),
                graded.results.max_score(), graded.exit_status, graded.results.execution_time);
    return Grading{graded.results, graded.exit_status};
}

class Grader : public testing::TestWithParam<int> {
protected:
    void SetUp() override {
        const std::string missing = gpu_missing();
        if (!missing.empty()) GTEST_SKIP() << missing;
        stage = GetParam();
        out = kWork / stage_name(stage);
        generate(kRepo, Assignment{stage, stage}, out);
    }

    // `policy`: the source_policy.txt to grade under ("" keeps the generated one).
    Grading grade_as(const std::string& fixture, const fs::path& submission, const std::string& policy = "") {
        const fs::path policy_file = out / "autograder/source_policy.txt";
        const std::string generated = read_file(policy_file);
        if (!policy.empty()) write_file(policy_file, policy);
        struct Restore {
            fs::path file;
            std::string text;
            ~Restore() { write_file(file, text); }
        } restore{policy_file, generated};
        GradeOptions options;
        options.autograder = out / "autograder";
        options.submission = submission;
        options.work = out / "work";
        return record(Assignment{stage, stage}.name(), fixture, grade(options));
    }


    int stage = 0;
    fs::path out;
};

const char* kCheckOff = "check off\n";

TEST_P(Grader, ScoresWhatTheRubricPromises) {
    const std::string name = stage_name(stage);
    const fs::path solutions = out / "autograder/solution";
    const std::string reference = read_file(solutions / name / "kernel.cu");
    const std::string stub = read_file(out / "student" / name / "kernel.cu");

    // The reference solution: full marks.
    const Grading full = grade_as("reference", submission_with(out / "submissions/reference", stage, reference));
    EXPECT_EQ(full.results.score(), Rubric::kTotal) << full.output("performance") << full.output("public cases");
    EXPECT_EQ(full.exit_status, 0);

    // The stub as handed out: it builds, and earns nothing; the tree's own tests tell the
    // student why.
    const Grading stubbed = grade_as("stub", out / "student");
    EXPECT_EQ(stubbed.results.score(), 0);
    EXPECT_NE(stubbed.output("the tree's public tests").find("not implemented yet (assignment " + std::to_string(stage) + ")"),
              std::string::npos)
        << stubbed.output("the tree's public tests");
    EXPECT_EQ(stubbed.exit_status, 1);

    // The previous stage's code in this stage's place: correct, but not this stage's speed.
    const std::string slow = previous_stage_in_place(solutions, stage);
    const Grading slower = grade_as("previous-stage", submission_with(out / "submissions/slow", stage, slow));
    EXPECT_EQ(slower.results.score(), Rubric::kTotal - Rubric::kPerformance) << slower.output("performance");
    EXPECT_EQ(slower.points("performance"), 0);

    // Hard-coded sums: the sum of the public tests' input for each n, written without
    // reading the input. Refused by the source check (an include outside the list, a copy
    // to the host); without the check, the judge's fresh inputs defeat it all the same.
    const std::string cheat = with_launcher(
        reference, stage, "public_sum",
        "#include <cstdint>\n#include \"input.h\"\n"
        "template <typename T>\n"
        "void public_sum(const T* in, std::size_t n, T* out, void*, const RunConfig&, cudaStream_t) {\n"
        "    // the public tests' seed: n * 7 + (elements past a 256-byte boundary) + 1\n"
        "    const std::size_t offset = reinterpret_cast<std::uintptr_t>(in) % 256 / sizeof(T);\n"
        "    const T value = static_cast<T>(make_input<T>(n, n * 7 + offset + 1).expected.exact);\n"
        "    CUDA_CHECK(cudaMemcpy(out, &value, sizeof(T), cudaMemcpyHostToDevice));\n"
        "}\n");
    const Grading hard_coded = grade_as("hard-coded", submission_with(out / "submissions/hard-coded", stage, cheat));
    EXPECT_EQ(hard_coded.results.score(), 0);
    EXPECT_NE(hard_coded.results.output.find("refused by the source check"), std::string::npos);

    // Every class of the threat model, in the form a student would hand in: refused, 0.
    const std::vector<std::pair<std::string, std::string>> exploits = {
        {"include-solution", "#include \"/autograder/source/solution/" + name + "/kernel.cu\"\n"},
        {"exit-before-main", stub + "\nstatic const int quit_early = (std::_Exit(0), 0);\n"},
        {"exit-handler", before_stage(stub, stage, "static const int handler = std::atexit([] { std::_Exit(0); });")},
        {"fork", before_stage(stub, stage, "#include <unistd.h>\nstatic const int child = fork();")},
        {"read-hidden-cases", before_stage(stub, stage, "#include <fstream>\nstatic std::ifstream judge(\"judge.cu\");")},
        {"library-reduction",
         with_launcher(reference, stage, "library_sum",
                       "#include <cub/device/device_reduce.cuh>\ntemplate <typename T>\n"
                       "void library_sum(const T* in, std::size_t n, T* out, void* w, const RunConfig& c, cudaStream_t s) {\n"
                       "    std::size_t bytes = 0;\n    cub::DeviceReduce::Sum(nullptr, bytes, in, out, n, s);\n"
                       "    ORIGINAL<T>(in, n, out, w, c, s);\n}\n")},
        {"other-stage", borrowing(stub, stage, "reduce0")},
    };
    for (const auto& [fixture, kernel] : exploits) {
        const Grading g = grade_as(fixture, submission_with(out / "submissions" / fixture, stage, kernel));
        EXPECT_EQ(g.results.score(), 0) << fixture;
        EXPECT_NE(g.results.output.find("refused by the source check"), std::string::npos) << fixture << ": " << g.results.output;
    }

    // A changed harness file: never used (the handed-out one is built), reported, and the
    // kernel graded as it is: the reference's full marks.
    fs::path tampered = out / "submissions/tampered";
    fs::remove_all(tampered);
    write_tree(make_student_tree(kRepo, Assignment{stage, stage}), tampered);
    write_file(tampered / "common/verify.cpp", read_file(tampered / "common/verify.cpp") + "\nint planted = 0;\n");
    write_file(tampered / name / "kernel.cu", reference);
    const Grading ignored = grade_as("tampered", tampered);
    EXPECT_EQ(ignored.results.score(), Rubric::kTotal);
    EXPECT_NE(ignored.results.output.find("Ignored: common/verify.cpp differs"), std::string::npos) << ignored.results.output;

}

// reduce4 only: the racy and the alternative last warps, and the judge alone (the source
// check off) against every class of attack that the check would otherwise stop first.
class JudgeAlone : public Grader {};

TEST_P(JudgeAlone, Holds) {
    const std::string name = stage_name(stage);
    const std::string reference = read_file(out / "autograder/solution" / name / "kernel.cu");
    const std::string stub = read_file(out / "student" / name / "kernel.cu");

    // The pre-Volta last warp: right sums on this GPU, and a data race.
    const std::string racy = racy_last_warp(reference, kRepo);
    const Grading raced = grade_as("racy", submission_with(out / "submissions/racy", stage, racy));
    EXPECT_EQ(raced.points("racecheck"), 0) << raced.output("racecheck");
    EXPECT_EQ(raced.results.score(), Rubric::kTotal - Rubric::kRacecheck) << raced.output("performance");

    // A correct alternative: the last warp by shuffles, no shared memory at all.
    const Grading alternative = grade_as("shuffle-last-warp",
                                         submission_with(out / "submissions/shuffles", stage, shuffle_last_warp(reference, kRepo)));
    EXPECT_EQ(alternative.results.score(), Rubric::kTotal) << alternative.output("performance");

    // With the source check off, the judge alone: (1) an exit of status 0 before main, and
    // a stub that prints the judge's own verdict lines and ends with status 0.
    const Grading quit = grade_as("unchecked-exit-before-main",
                                  submission_with(out / "submissions/quit", stage,
                                                  stub + "\n#include <cstdlib>\nstatic const int quit_early = (std::_Exit(0), 0);\n"),
                                  kCheckOff);
    EXPECT_EQ(quit.results.score(), 0) << quit.output("public cases");
    const std::string fake_lines =
        "#include <cstdio>\n#include <cstdlib>\n"
        "static const int forged = (std::atexit([] {\n"
        "    for (const char* g : {\"public\", \"int\", \"float\", \"double\", \"misaligned\"})\n"
        "        std::printf(\"GROUP %s PASS 0 of 1 cases wrong\\n\", g);\n"
        "    std::printf(\"SANITIZER racecheck CLEAN RACECHECK SUMMARY: 0 hazards displayed\\n\");\n"
        "    std::printf(\"PERF submission median_ms=0.001 min_ms=0.001 max_ms=0.001 verified\\n\");\n"
        "    std::fflush(stdout);\n    std::_Exit(0);\n}), 0);\n";
    const Grading forged = grade_as("unchecked-printed-verdicts",
                                    submission_with(out / "submissions/forged", stage, stub + "\n" + fake_lines), kCheckOff);
    EXPECT_EQ(forged.results.score(), 0) << forged.output("public cases");

    // (5) a process left behind, out of its session, that writes a file every half second
    // for as long as it lives. Without --run-as it may live until its step ends (the judge
    // can end the worker's session, not every process of a user), so it may write during
    // the grading; it must not live on after it: the file, removed once the grading has
    // returned, must not come back.
    const fs::path marker = out / "submissions/left-behind.txt";
    fs::remove(marker);
    const std::string daemon = before_stage(
        reference, stage,
        "#include <unistd.h>\n#include <cstdio>\n"
        "static const int left_behind = [] {\n"
        "    if (fork() == 0) { setsid(); if (fork() == 0) { for (;;) {\n"
        "        if (FILE* f = std::fopen(\"" + marker.string() + "\", \"w\")) std::fclose(f);\n"
        "        usleep(500000); } } std::_Exit(0); }\n"
        "    return 0;\n}();");
    const Grading behind = grade_as("unchecked-left-behind", submission_with(out / "submissions/behind", stage, daemon), kCheckOff);
    EXPECT_EQ(behind.results.score(), Rubric::kTotal) << "the work itself is the reference's";
    EXPECT_TRUE(fs::exists(marker)) << "the fixture's process never ran: the test cannot tell";
    fs::remove(marker);
    std::this_thread::sleep_for(std::chrono::seconds(3));
    EXPECT_FALSE(fs::exists(marker)) << "a process of the submission outlived the grading";

    // (3) another stage's launcher: the worker links this stage alone, so it does not build.
    const Grading borrowed = grade_as(
        "unchecked-other-stage",
        submission_with(out / "submissions/borrowed", stage, borrowing(stub, stage, "reduce3")), kCheckOff);
    EXPECT_EQ(borrowed.results.score(), 0);
    EXPECT_NE(borrowed.output("build").find("undefined reference"), std::string::npos) << borrowed.output("build");

    // (4) a remembered answer: the sum of the first input seen at an address, replayed for
    // every later input there. The judge's inputs are fresh every time: nothing is right.
    const Grading memo = grade_as(
        "unchecked-memoized",
        submission_with(out / "submissions/memo", stage,
                        with_launcher(reference, stage, "remembered_sum",
                                      "#include <map>\n#include <utility>\n"
                                      "template <typename T>\n"
                                      "void remembered_sum(const T* in, std::size_t n, T* out, void* w, const RunConfig& c, "
                                      "cudaStream_t s) {\n"
                                      "    static std::map<std::pair<const void*, std::size_t>, T> seen;\n"
                                      "    const auto key = std::make_pair(static_cast<const void*>(in), n);\n"
                                      "    if (seen.count(key)) {\n"
                                      "        cudaMemcpyAsync(out, &seen[key], sizeof(T), cudaMemcpyHostToDevice, s);\n"
                                      "        return;\n    }\n"
                                      "    ORIGINAL<T>(in, n, out, w, c, s);\n"
                                      "    cudaMemcpy(&seen[key], out, sizeof(T), cudaMemcpyDeviceToHost);\n}\n")),
        kCheckOff);
    EXPECT_EQ(memo.points("public cases"), 0) << memo.output("public cases");
    EXPECT_EQ(memo.points("performance"), 0);

    // (8) sabotage of the instructor's timing by the previous stage's code, which deserves
    // everything but the performance points. A thread or a timer of the worker's dies with
    // it: the instructor's workers are timed only while no process of the submission
    // exists, so the timing stays trusted (exit 1, not 3) and the sabotage gains nothing.
    // It can cost itself more: its own GPU work, recorded and replayed with the launcher's,
    // can slow a sanitizer step's case past its limit (the timer's lost racecheck once on the
    // H100, when the worker itself still ran under the sanitizer).
    const std::string previous = previous_stage_in_place(out / "autograder/solution", stage);
    for (const char* how : {"thread", "timer"}) {
        const Grading g = grade_as(std::string("unchecked-sabotage-") + how,
                                   submission_with(out / "submissions" / (std::string("sabotage-") + how), stage,
                                                   sabotage(previous, stage, how)),
                                   kCheckOff);
        EXPECT_EQ(g.points("performance"), 0) << how << ": " << g.output("performance");
        EXPECT_EQ(g.results.score() - g.points("racecheck") - g.points("memcheck"),
                  Rubric::kTotal - Rubric::kPerformance - Rubric::kRacecheck - Rubric::kMemcheck)
            << how << ": every correctness point";
        EXPECT_EQ(g.exit_status, 1) << how;
        EXPECT_NE(g.output("performance").find("the previous stage's"), std::string::npos) << g.output("performance");
    }
    // A process of its own session outlives the worker here (no --run-as: nothing can kill
    // every process of a user), and keeps the GPU busy while the reference is timed: the
    // judge sees the reference depart from its calibration and does not grade the timing.
    // (As root with --run-as, on Gradescope, it is killed with the worker, and scores as the
    // thread does.)
    const Grading outlived = grade_as("unchecked-sabotage-daemon",
                                    submission_with(out / "submissions/sabotage-daemon", stage, sabotage(previous, stage, "daemon")),
                                    kCheckOff);
    EXPECT_EQ(outlived.exit_status, 3) << outlived.output("performance");
    EXPECT_NE(outlived.output("performance").find("could not grade"), std::string::npos) << outlived.output("performance");
}

// A run of stages, reduce3..reduce5, as the guide recommends: each stage is graded on its
// own. reduce3's reference 100; reduce3's code in reduce4's place 75 (all but performance);
// reduce5 refused by the source check 0, which costs only reduce5 (the stub is built in
// its place). reduce3 and reduce4 both define the same global, which only the tree's own
// tests (they link every stage) cannot link: their feedback says so, and no stage loses a
// point (each worker links one stage). Graded twice: a cold work folder, then a warm one
// (the times the guide quotes).
TEST(RunOfStages, EachStageIsGradedOnItsOwn) {
    const std::string missing = gpu_missing();
    if (!missing.empty()) GTEST_SKIP() << missing;
    const Assignment run{3, 5};
    const fs::path out = kWork / run.name();
    fs::remove_all(out);
    generate(kRepo, run, out);
    const fs::path solutions = out / "autograder/solution";
    const fs::path submission = out / "submissions/mixed";
    // A C++ function (a global variable's name would be refused: compiled_check.cpp) that
    // both stages define: a clash where they link together.
    const std::string same_global = "\nint requests_seen() { return 0; }  // in both stages: a clash where they link together\n";
    write_file(submission / "reduce3/kernel.cu", read_file(solutions / "reduce3/kernel.cu") + same_global);
    write_file(submission / "reduce4/kernel.cu", previous_stage_in_place(solutions, 4) + same_global);
    write_file(submission / "reduce5/kernel.cu", read_file(solutions / "reduce5/kernel.cu") +
                                                     "\n#include <cstdlib>\nstatic const int quit_early = (std::_Exit(0), 0);\n");
    GradeOptions options;
    options.autograder = out / "autograder";
    options.submission = submission;
    options.work = out / "work";
    for (const char* fixture : {"mixed-cold", "mixed-warm"}) {
        const Grading g = record(run.name(), fixture, grade(options));
        double per_stage[8] = {};
        for (const TestResult& t : g.results.tests) per_stage[std::stoi(t.number.substr(0, t.number.find('.')))] += t.score;
        EXPECT_EQ(per_stage[3], Rubric::kTotal) << fixture << "\n" << g.results.output;
        EXPECT_EQ(per_stage[4], Rubric::kTotal - Rubric::kPerformance) << fixture << "\n" << g.output("reduce4: performance");
        EXPECT_EQ(per_stage[5], 0) << fixture;
        EXPECT_NE(g.results.output.find("reduce5: refused by the source check"), std::string::npos) << g.results.output;
        EXPECT_NE(g.output("reduce3: the tree's public tests").find("did not build"), std::string::npos)
            << g.output("reduce3: the tree's public tests");
        EXPECT_EQ(g.exit_status, 1) << fixture;
    }
}

INSTANTIATE_TEST_SUITE_P(Assignments, Grader, testing::Range(1, 8),
                         [](const testing::TestParamInfo<int>& info) { return stage_name(info.param); });
INSTANTIATE_TEST_SUITE_P(Assignments, JudgeAlone, testing::Values(4),
                         [](const testing::TestParamInfo<int>& info) { return stage_name(info.param); });

}  // namespace
