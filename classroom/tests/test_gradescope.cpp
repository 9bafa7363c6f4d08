// Gradescope's path on a GPU, as root, for reduce4 (the kit's fixtures, then an attacker's
// review's submissions in attacks/): `classroom generate`, autograder.zip
// unpacked as /autograder/source, setup.sh, then run_autograder for one upload after
// another, each a kernel.cu alone, as Gradescope receives it. The student's build and
// worker run as classroom-student (setup.sh makes the user). Every fixture must score what
// docs/classroom.md's threat model promises: the valid solutions full marks, the attacks
// what they deserve, and "could not grade" no grade at all (no results.json).
//
// It replaces /autograder, so it runs only as root with CLASSROOM_GRADESCOPE_TRIAL=1, on a
// grading machine or a throwaway one:
//   sudo CLASSROOM_GRADESCOPE_TRIAL=1 build/release/bin/classroom_grading --gtest_filter='GradescopePath.*'
// CLASSROOM_GRADESCOPE_FIXTURES, a regular expression, picks the fixtures (a run in parts).
// Each upload's report, results.json and run_autograder's output are written to
// <build>/classroom/tests/grading/gradescope/. CLASSROOM_GRADESCOPE_REUSE=1 keeps the
// /autograder that an earlier run on this machine set up, where the kit it unpacked is
// byte for byte the one generated now (a run in parts on one machine pays setup.sh once).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <sstream>

#include "assignment.h"
#include "fixtures.h"
#include "generator.h"
#include "json.h"
#include "process.h"
#include "sha256.h"

namespace {

using namespace classroom;
using namespace classroom_fixtures;

const fs::path kRepo = CLASSROOM_REPOSITORY;
const fs::path kWork = CLASSROOM_WORK;
const fs::path kAutograder = "/autograder";
constexpr double kNoGrade = -1;  // run_autograder wrote no results.json: Gradescope records a failed run

struct Fixture {
    std::string name;
    std::string kernel;
    double promised;            // the score, or kNoGrade
    std::string report_says;    // a regular expression the report must match
    std::string policy = "";    // source_policy.txt for this upload ("": the generated one)
    std::vector<std::string> env = {};  // "NAME=value" for run_autograder (the machine, not the student)
    double at_least = kNoGrade;  // where a score between this and `promised` is what it deserves
    bool held(double score) const { return at_least == kNoGrade ? score == promised : score >= at_least && score <= promised; }
    std::string promise() const {
        const auto points = [](double p) { return p == kNoGrade ? std::string("no results.json") : std::to_string(int(p)); };
        return at_least == kNoGrade ? points(promised) : points(at_least) + " to " + points(promised);
    }
};

// What an upload got: the score in results.json, or kNoGrade.
struct Upload {
    double score = kNoGrade;
    std::string report, output;
    int exit_code = -1;
};

Upload upload(const Fixture& f, const fs::path& examples) {
    const fs::path policy_file = kAutograder / "source/source_policy.txt";
    const std::string generated = read_file(policy_file);
    if (!f.policy.empty()) write_file(policy_file, f.policy);
    fs::remove_all(kAutograder / "submission");
    fs::remove_all(kAutograder / "results");
    write_file(kAutograder / "submission/kernel.cu", f.kernel);
    fs::create_directories(kAutograder / "results");
    RunSpec spec;
    spec.timeout_seconds = 2400;
    spec.extra_env = f.env;
    const ProcessResult r = run_process({"bash", (kAutograder / "source/run_autograder").string()}, spec);
    write_file(policy_file, generated);
    Upload u;
    u.exit_code = r.exit_code;
    u.output = r.output;
    const fs::path results = kAutograder / "results/results.json";
    if (fs::exists(results)) {
        const std::string json = read_file(results);
        u.score = classroom::parse_json(json).at("score").number;
        write_file(examples / ("reduce4-" + f.name + ".json"), json);
    }
    if (fs::exists(kAutograder / "results/report.txt")) u.report = read_file(kAutograder / "results/report.txt");
    write_file(examples / ("reduce4-" + f.name + ".txt"), u.report);
    write_file(examples / ("reduce4-" + f.name + ".out"), "run_autograder exit " + std::to_string(r.exit_code) + "\n" + r.output);
    return u;
}

// Every file of the generated kit (the folder autograder.zip is made from), by path and
// content: the same stamp means the same /autograder/source.
std::string kit_stamp(const fs::path& kit) {
    std::vector<std::string> files;  // "SHA-256  path", a line each, as the kit's manifest.txt has them
    for (const auto& e : fs::recursive_directory_iterator(kit)) {
        if (e.is_regular_file()) files.push_back(sha256_hex(read_file(e.path())) + "  " + fs::relative(e.path(), kit).string());
    }
    std::sort(files.begin(), files.end());
    std::string manifest;
    for (const std::string& line : files) manifest += line + "\n";
    return std::to_string(files.size()) + " files, " + sha256_hex(manifest) + "\n";
}

// The racy last warp, with the call an attack on the sanitizer needs to tell its run from
// the others (the query alone is what the checks refuse, so the switch is left out).
std::string racy_with(const std::string& racy, const std::string& query) {
    return before_stage(racy, 4, query);
}

std::vector<Fixture> fixtures(const fs::path& handout) {
    const fs::path solutions = handout / "autograder/solution";
    const std::string reference = read_file(solutions / "reduce4/kernel.cu");
    const std::string previous = previous_stage_in_place(solutions, 4);
    const std::string racy = racy_last_warp(reference, kRepo);
    const int all = Rubric::kTotal;
    const std::string check_off = "check off\n";
    std::vector<Fixture> list = {
        // The valid ones.
        {"reference", reference, double(all), "seed"},
        {"shuffle-last-warp", shuffle_last_warp(reference, kRepo), double(all), "seed"},
        {"previous-stage", previous, double(all - Rubric::kPerformance), "the previous stage's"},
        {"racy", racy, double(all - Rubric::kRacecheck), "RACECHECK SUMMARY"},
        // Names the source check's list misses; the compiled check's allow-list does not.
        {"forkpty-daemon",
         before_stage(previous, 4,
                      "extern \"C\" int forkpty(int*, char*, void*, void*);\n"
                      "static const int left_behind = [] {\n"
                      "    int terminal = 0;\n    if (forkpty(&terminal, nullptr, nullptr, nullptr) == 0) { for (;;) {} }\n"
                      "    return 0;\n}();"),
         0, "refused by the compiled check"},
        {"sanitizer-by-environment",
         racy_with(racy, "extern \"C\" char* __secure_getenv(const char*);\n"
                         "static const bool under_sanitizer = __secure_getenv(\"CUDA_INJECTION64_PATH\") != nullptr;"),
         0, "refused by the compiled check"},
        {"sanitizer-by-host-clock",
         racy_with(racy, "static const long long started_ns = [] {\n"
                         "    timespec t{};\n    clock_gettime(CLOCK_MONOTONIC, &t);\n"
                         "    return t.tv_sec * 1000000000LL + t.tv_nsec;\n}();"),
         0, "refused by the compiled check"},
        // What the first attack got past the source check, refused by it now.
        {"splice-include", "#inc\\  \nlude \"/autograder/source/solution/reduce4/kernel.cu\"\n", 0,
         "refused by the source check"},
        {"sabotage-timer", sabotage(previous, 4, "timer"), 0, "refused by the source check"},
        // With both checks off, the judge and the privilege drop alone.
        {"unchecked-log-rewrite",
         before_stage(racy, 4,
                      "#include <cstdio>\n#include <cstdlib>\n#include <unistd.h>\n"
                      "static const int rewriter = [] {\n"
                      "    if (fork() == 0) {\n"
                      "        for (int i = 0; i < 100; ++i) {\n"
                      "            for (const char* log : {\"/autograder/work/logs/racecheck.log\", \"/autograder/work/logs/memcheck.log\"}) {\n"
                      "                if (FILE* f = std::fopen(log, \"w\")) {\n"
                      "                    std::fputs(\"========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\\n\", f);\n"
                      "                    std::fclose(f);\n                }\n            }\n"
                      "            usleep(100000);\n        }\n        std::_Exit(0);\n    }\n    return 0;\n}();"),
         // The sanitizers watch the judge's replay of a recording worker's launches, and
         // their logs are root's, in a folder of root's: the rewriter reaches neither, and
         // racecheck finds the racy warp in the replay (90 at 3f25c71). (When the worker ran
         // under the sanitizer, before judge --exec-as's filter, the rewriter was a second
         // process of the student's during both runs: 85 at 5b38d0b.)
         double(all - Rubric::kRacecheck), "RACECHECK SUMMARY: [1-9]", check_off},
        // Its thread launches kernels beside the launcher's, recorded with them in the
        // recording worker and replayed under the sanitizer: any sanitizer points that costs
        // (when the worker itself ran under the sanitizer it crashed there: exit 11 in
        // libcudart at f21c944 and 5b38d0b) are its own loss; 75 at 3f25c71. What it must
        // never gain is the performance points.
        {"unchecked-sabotage-thread", sabotage(previous, 4, "thread"), double(all - Rubric::kPerformance),
         "the previous stage's", check_off, {},
         double(all - Rubric::kPerformance - Rubric::kMemcheck - Rubric::kRacecheck)},
        // Its daemon dies with its worker (every process of the student's user is killed
        // around each of the worker's blocks): no performance points; 75 at 3f25c71.
        // (When the worker ran under the sanitizer, before judge --exec-as's filter, it was a
        // second process during both sanitizer runs, which failed both steps: 60 at 8551ea8.)
        {"unchecked-sabotage-daemon", sabotage(previous, 4, "daemon"), double(all - Rubric::kPerformance),
         "the previous stage's", check_off},
        // The input is the judge's: a launcher that writes into it fails.
        {"writes-into-input",
         with_launcher(reference, 4, "scribbling_sum",
                       "template <typename T>\n"
                       "void scribbling_sum(const T* in, std::size_t n, T* out, void* w, const RunConfig& c, cudaStream_t s) {\n"
                       "    ORIGINAL<T>(in, n, out, w, c, s);\n"
                       "    cudaMemsetAsync(const_cast<T*>(in), 0, n * sizeof(T), s);  // after the sum: a later caller's input is gone\n"
                       "}\n"),
         0, "wrote into its input|illegal memory access|launcher failed"},
    };
    // A workspace of all the GPU's free memory at the timed size: still a normal grade, with
    // no performance points. Its sanitized runs reduce an exactly sized copy of a timed-size
    // input, allocated after the workspace has taken the memory, so each sanitizer's part is
    // lost or kept by how much memory that sanitizer holds then (on the H100: memcheck lost
    // once, memcheck and racecheck once): 60 to 75, never "could not grade".
    static const std::regex workspace(R"(\.workspace_bytes = (\w+),)");
    std::smatch m;
    if (!std::regex_search(previous, m, workspace)) throw std::runtime_error("no workspace_bytes in reduce3's record");
    {
        const std::string greedy = std::regex_replace(previous, workspace, ".workspace_bytes = greedy_workspace,");
        list.push_back({"greedy-workspace",
                        before_stage(greedy, 4,
                                     "static std::size_t greedy_workspace(std::size_t n, std::size_t size, const RunConfig& c) {\n"
                                     "    if (n < (std::size_t{1} << 26)) return " + m.str(1) + "(n, size, c);\n"
                                     "    std::size_t free_bytes = 0, total = 0;\n    cudaMemGetInfo(&free_bytes, &total);\n"
                                     "    return free_bytes - (std::size_t{64} << 20);\n}"),
                        double(all - Rubric::kPerformance), "FAIL +0 / 25 +reduce4: performance", "", {},
                        double(all - Rubric::kPerformance - Rubric::kMemcheck - Rubric::kRacecheck)});
    }
    // The machine, not the submission, fails: run_autograder sees no GPU. The grader could
    // not grade (exit 3), so Gradescope must record nothing: no results.json, exit 1.
    list.push_back({"no-usable-gpu", reference, kNoGrade, "none usable", "", {"CUDA_VISIBLE_DEVICES="}});
    // (05 of the review) a 400,000-character name, which killed the grader's std::regex.
    list.push_back({"long-identifier", read_file(handout / "student/reduce4/kernel.cu") + "\nint " +
                                           std::string(400000, 'x') + " = 0;\n",
                    0, "a line longer than"});
    // The attacker's review (attacks/README.md): each file with its promise (promised.txt).
    std::istringstream promised(read_file(kRepo / "classroom/tests/attacks/promised.txt"));
    for (std::string line; std::getline(promised, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream words(line);
        std::string file, score, says;
        words >> file >> score;  // SCORE, or LOW-HIGH where any score between is what it deserves
        std::getline(words >> std::ws, says);
        Fixture f{"attack-" + file.substr(0, file.size() - 3), read_file(kRepo / "classroom/tests/attacks" / file),
                  std::stod(score.substr(score.find('-') + 1)), says};
        if (score.find('-') != std::string::npos) f.at_least = std::stod(score.substr(0, score.find('-')));
        list.push_back(f);
    }
    return list;
}

// CLASSROOM_GRADESCOPE_DUMP=<folder>: the uploads written there (<name>/kernel.cu, with the
// policy each is graded under), to read or to grade by hand; no GPU needed.
TEST(GradescopePath, WritesTheUploadsWhenAsked) {
    const char* dump = std::getenv("CLASSROOM_GRADESCOPE_DUMP");
    if (!dump) GTEST_SKIP() << "set CLASSROOM_GRADESCOPE_DUMP=<folder> to write the uploads";
    const fs::path handout = kWork / "gradescope-handout";
    fs::remove_all(handout);
    generate(kRepo, Assignment{4, 4}, handout);
    for (const Fixture& f : fixtures(handout)) {
        write_file(fs::path(dump) / f.name / "kernel.cu", f.kernel);
        if (!f.policy.empty()) write_file(fs::path(dump) / f.name / "source_policy.txt", f.policy);
    }
}

TEST(GradescopePath, EveryFixtureScoresAsPromised) {
    const std::string missing = gpu_missing();
    if (!missing.empty()) GTEST_SKIP() << missing;
    const char* trial = std::getenv("CLASSROOM_GRADESCOPE_TRIAL");
    if (geteuid() != 0 || !trial || std::string(trial) != "1") {
        GTEST_SKIP() << "Gradescope's path replaces /autograder: run as root with CLASSROOM_GRADESCOPE_TRIAL=1";
    }
    const char* pick = std::getenv("CLASSROOM_GRADESCOPE_FIXTURES");
    const std::regex chosen(pick ? pick : ".*");
    const fs::path handout = kWork / "gradescope-handout";
    const fs::path examples = kWork / "gradescope";
    fs::remove_all(handout);
    generate(kRepo, Assignment{4, 4}, handout);

    const fs::path stamp_file = kAutograder / "trial_stamp.txt";  // beside source/, out of the student's sight
    const std::string stamp = kit_stamp(handout / "autograder");
    const char* reuse = std::getenv("CLASSROOM_GRADESCOPE_REUSE");
    if (reuse && std::string(reuse) == "1" && fs::exists(stamp_file) && read_file(stamp_file) == stamp) {
        std::printf("setup.sh: not run again (/autograder set up by an earlier run from the same kit: %s)\n",
                    stamp.substr(0, stamp.size() - 1).c_str());
    } else {
        fs::remove_all(kAutograder);
        fs::create_directories(kAutograder / "source");
        const ProcessResult unpacked = run_process({"cmake", "-E", "tar", "xf", (handout / "autograder.zip").string()},
                                                   (kAutograder / "source").string(), 300);
        ASSERT_EQ(unpacked.exit_code, 0) << unpacked.output;
        const ProcessResult setup = run_process({"bash", (kAutograder / "source/setup.sh").string()}, "", 2400);
        write_file(examples / "setup.log", setup.output);
        ASSERT_EQ(setup.exit_code, 0) << setup.output.substr(setup.output.size() > 4000 ? setup.output.size() - 4000 : 0);
        std::printf("setup.sh: %.0f s\n", setup.seconds);
        write_file(stamp_file, stamp);
    }

    int checked = 0, held = 0;
    for (const Fixture& f : fixtures(handout)) {
        if (!std::regex_search(f.name, chosen)) continue;
        const Upload u = upload(f, examples);
        ++checked;
        const bool says = std::regex_search(u.report, std::regex(f.report_says));
        const bool as_promised = f.held(u.score) && says;
        held += as_promised;
        std::printf("reduce4 %s: %s (promised %s; run_autograder exit %d)\n", f.name.c_str(),
                    u.score == kNoGrade ? "no results.json" : std::to_string(static_cast<int>(u.score)).c_str(),
                    f.promise().c_str(),
                    u.exit_code);
        std::fflush(stdout);
        EXPECT_TRUE(f.held(u.score)) << f.name << " scored " << u.score << ", promised " << f.promise() << ":\n" << u.report;
        EXPECT_TRUE(says) << f.name << ": nothing matches '" << f.report_says << "' in\n" << u.report;
        EXPECT_EQ(u.exit_code, f.promised == kNoGrade ? 1 : 0) << f.name;
    }
    const ProcessResult left = run_process({"pgrep", "-u", "classroom-student", "-l"}, "", 30);
    EXPECT_EQ(left.output, "") << "processes of the student's user outlived the gradings";
    std::printf("Gradescope path: %d of %d fixtures scored as promised\n", held, checked);
}

}  // namespace
