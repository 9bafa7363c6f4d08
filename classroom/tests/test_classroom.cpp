// The classroom kit on the host: the markers, every assignment's student tree, the leak
// check (and that it catches a planted line), the tamper check, results.json, and the
// Gradescope kit's settings, zip, requirement checks and budget, and the instructor's batch, selftest
// and similarity commands as far as they go without a GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "assignment.h"
#include "batch.h"
#include "generator.h"
#include "gradescope.h"
#include "grader.h"
#include "json.h"
#include "leaks.h"
#include "markers.h"
#include "process.h"
#include "sha256.h"
#include "source_check.h"
#include "student_user.h"

namespace {

using namespace classroom;

const fs::path kRepo = CLASSROOM_REPOSITORY;

// Every assignment an instructor can ask for: each stage alone and every run of stages.
std::vector<Assignment> every_assignment() {
    std::vector<Assignment> all;
    for (int first = 1; first <= 7; ++first) {
        for (int last = first; last <= 7; ++last) all.push_back({first, last});
    }
    return all;
}

fs::path scratch(const std::string& name) {
    const fs::path dir = fs::temp_directory_path() / ("classroom-test-" + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

TEST(Sha256, KnownVectors) {
    EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(sha256_hex(std::string(1000, 'a')).size(), 64u);
    EXPECT_NE(sha256_hex("reduce4"), sha256_hex("reduce5"));
}

TEST(Assignments, ParseStagesAndRuns) {
    EXPECT_EQ(parse_assignment("reduce4").name(), "reduce4");
    EXPECT_EQ(parse_assignment("4").stages(), (std::vector<int>{4}));
    EXPECT_EQ(parse_assignment("reduce1..reduce4").stages(), (std::vector<int>{1, 2, 3, 4}));
    EXPECT_EQ(parse_assignment("2..3").name(), "reduce2..reduce3");
    for (const char* bad : {"reduce0", "reduce10", "reduce5..reduce3", "", "reduce", "reduce4.."}) {
        EXPECT_THROW(parse_assignment(bad), std::invalid_argument) << bad;
    }
    EXPECT_EQ(Rubric::kTotal, 100);
}

// A stage's title, smallest block and chapter come from its folder alone; the rubric's
// defaults from classroom/default_rubric.txt, for every stage folder there is.
TEST(Assignments, EveryStageDeclaresItsFactsInItsFolder) {
    const std::vector<int> stages = stages_in(kRepo);
    ASSERT_EQ(stages.front(), 0);
    std::set<std::string> chapters;  // each its own, named by its record's .chapter
    for (std::size_t i = 0; i < stages.size(); ++i) EXPECT_EQ(stages[i], int(i)) << "stage folders reduce0 ... reduceN, no gap";
    for (int k : stages) {
        const StageFacts facts = stage_facts(kRepo, k);
        EXPECT_FALSE(facts.idea.empty()) << k;
        EXPECT_TRUE(facts.min_block >= 32 && facts.min_block <= 1024 && (facts.min_block & (facts.min_block - 1)) == 0) << k;
        EXPECT_TRUE(fs::is_regular_file(kRepo / facts.chapter)) << facts.chapter;
        EXPECT_TRUE(chapters.insert(facts.chapter).second) << facts.chapter << " named by two stages";
        if (k == 0) continue;
        const GradingRubric r = default_rubric(kRepo, Assignment{k, k});
        EXPECT_GT(r.threshold(k), 1.0) << k;
        EXPECT_EQ(r.min_block(k), std::max(facts.min_block, stage_facts(kRepo, k - 1).min_block)) << k;
    }
    EXPECT_EQ(stage_facts(kRepo, 4).min_block, 64);
    EXPECT_EQ(stage_facts(kRepo, 7).min_block, 32);
    EXPECT_EQ(default_rubric(kRepo, Assignment{7, 7}).min_block(7), 64) << "reduce6's code, where reduce7 starts, needs 64";
    EXPECT_EQ(stage_facts(kRepo, 4).chapter, "docs/04-sync-removal.md");
    EXPECT_THROW(stage_facts(kRepo, 9), std::runtime_error);
    EXPECT_THROW(default_rubric(kRepo, Assignment{9, 9}), std::runtime_error);
}

TEST(Markers, EveryStageHasWellFormedRegions) {
    for (int stage = 0; stage <= 7; ++stage) {
        const std::string path = stage_name(stage) + "/kernel.cu";
        const MarkedFile file = parse_markers(read_file(kRepo / path), path);
        EXPECT_EQ(check_stage_regions(file, stage, path), std::vector<std::string>{}) << path;
        EXPECT_EQ(file.regions.empty(), stage == 0) << path;
    }
    // Every other source of the repository parses too (its regions are the tests'); the
    // classroom kit's own files describe the syntax and are never handed out.
    for (const std::string& path : list_files(kRepo)) {
        if (path.rfind("build/", 0) == 0 || path.rfind("classroom/", 0) == 0 || !has_markers(path)) continue;
        EXPECT_NO_THROW(parse_markers(read_file(kRepo / path), path)) << path;
    }
}

TEST(Markers, MalformedMarkersAreRejected) {
    const char* open = "// solution (assignment 2): x\n";
    const char* stub = "// stub: not_implemented(\"reduce2: x (assignment 2)\");\n";
    const char* close = "// end solution\n";
    EXPECT_NO_THROW(parse_markers(std::string(open) + "code;\n" + stub + close, "ok"));
    EXPECT_THROW(parse_markers(std::string(open) + "code;\n", "never closed"), MarkerError);
    EXPECT_THROW(parse_markers(std::string("code;\n") + close, "close alone"), MarkerError);
    EXPECT_THROW(parse_markers(std::string(open) + open + "code;\n" + close + close, "nested"), MarkerError);
    EXPECT_THROW(parse_markers(std::string(open) + stub + "code;\n" + close, "stub first"), MarkerError);
    EXPECT_THROW(parse_markers(std::string(stub), "stub outside"), MarkerError);
    EXPECT_THROW(parse_markers(std::string(open) + close, "empty"), MarkerError);
    EXPECT_THROW(parse_markers("// solution: forgot the assignment\ncode;\n// end solution\n", "look-alike"), MarkerError);
    try {
        parse_markers(std::string("a\nb\n") + open + "code;\n", "kernel.cu");
        FAIL() << "no error";
    } catch (const MarkerError& e) {
        EXPECT_NE(std::string(e.what()).find("kernel.cu:3"), std::string::npos) << e.what();
    }
    // A kernel's region must belong to its stage and stub with a message naming it.
    const MarkedFile wrong = parse_markers(std::string(open) + "code;\n// stub: return;\n" + close, "k");
    EXPECT_EQ(check_stage_regions(wrong, 3, "k").size(), 3u);  // other assignment, no not_implemented, no message
}

TEST(Markers, RenderReferenceStubOrNothing) {
    const MarkedFile file = parse_markers(
        "a\n    // solution (assignment 1): add the pairs\n    x += y;\n    // stub: not_implemented(\"m\");\n"
        "    // end solution\nb\n",
        "f");
    EXPECT_EQ(render(file, [](int) { return RegionAs::Reference; }), "a\n    x += y;\nb\n");
    EXPECT_EQ(render(file, [](int) { return RegionAs::Stub; }),
              "a\n    // TODO (assignment 1): add the pairs\n    not_implemented(\"m\");\nb\n");
    EXPECT_EQ(render(file, [](int) { return RegionAs::Removed; }), "a\nb\n");
}

// A region of comments (a header's sentences that give the answer) becomes its comment
// stubs alone, with no TODO line; its stubs must be comments, and need no not_implemented().
TEST(Markers, AProseRegionBecomesItsCommentStubs) {
    const MarkedFile file = parse_markers(
        "// reduce2: title\n// solution (assignment 2): the idea\n// the answer, in words\n"
        "// stub: // what to achieve\n// end solution\ncode;\n",
        "f");
    ASSERT_EQ(file.regions.size(), 1u);
    EXPECT_TRUE(file.regions[0].prose());
    EXPECT_EQ(render(file, [](int) { return RegionAs::Stub; }), "// reduce2: title\n// what to achieve\ncode;\n");
    EXPECT_EQ(render(file, [](int) { return RegionAs::Reference; }), "// reduce2: title\n// the answer, in words\ncode;\n");
    EXPECT_TRUE(check_stage_regions(file, 2, "f").empty());
    const MarkedFile code_stub = parse_markers("// solution (assignment 2): x\n// words\n// stub: return;\n// end solution\n", "g");
    EXPECT_EQ(check_stage_regions(code_stub, 2, "g").size(), 1u);  // a prose region's stub must be a comment
}

TEST(Trees, EveryAssignmentHasTheStagesDocsAndStubsItShould) {
    static const std::regex chapter(R"(^docs/0(\d)-.*\.md$)");
    for (const Assignment& a : every_assignment()) {
        SCOPED_TRACE(a.name());
        const Tree tree = make_student_tree(kRepo, a);
        for (const char* needed : {"README.md", "CMakeLists.txt", "CMakePresets.json", "common/stage.h",
                                   "runner/reduce_all.cu", "tests/CMakeLists.txt", "docs/00-overview.md",
                                   "scripts/profile.sh"}) {
            EXPECT_TRUE(tree.count(needed)) << needed;
        }
        for (int k = 0; k <= 7; ++k) {
            const std::string kernel = stage_name(k) + "/kernel.cu";
            EXPECT_EQ(tree.count(kernel) > 0, k <= a.last) << kernel;
            EXPECT_EQ(tree.count("docs/img/" + stage_name(k) + "_tree.svg") > 0, k < a.first && k <= 3);
            EXPECT_EQ(tree.count("assignments/" + stage_name(k) + ".md") > 0, k >= a.first && k <= a.last);
            if (k >= a.first && k <= a.last) {
                const std::string& text = tree.at(kernel).text;
                EXPECT_NE(text.find("// TODO (assignment " + std::to_string(k) + "): "), std::string::npos) << kernel;
                EXPECT_NE(text.find("not_implemented("), std::string::npos) << kernel;
            }
        }
        for (const auto& [path, file] : tree) {
            EXPECT_TRUE(path.rfind("classroom/", 0) != 0 && path.rfind("docs/results", 0) != 0 &&
                        path.rfind(".ci/", 0) != 0 && path != "docs/classroom.md" && path != "scripts/reproduce_results.sh")
                << path;
            std::smatch m;
            if (std::regex_match(path, m, chapter)) {
                const int k = std::stoi(m[1]);
                EXPECT_TRUE(k == 0 || k == 8 || k < a.first) << path;
            }
            // No marker is left in a student's copy, in any file.
            if (has_markers(path)) {
                EXPECT_EQ(parse_markers(file.text, path).regions.size(), 0u) << path;
                EXPECT_EQ(file.text.find("// stub: "), std::string::npos) << path;
            }
        }
        // The student's README: the commands, what to edit and how to upload before the rules,
        // which come last, in an appendix.
        const std::string& readme = tree.at("README.md").text;
        EXPECT_NE(readme.find("ctest --preset release"), std::string::npos);
        const auto hand_in = readme.find("## What you edit and hand in");
        const auto upload = readme.find("Upload ");
        const auto appendix = readme.find("## Appendix: what a kernel.cu may not contain");
        EXPECT_LT(hand_in, upload) << a.name();
        EXPECT_LT(upload, appendix) << a.name();
        EXPECT_NE(appendix, std::string::npos) << a.name();
    }
}

TEST(Trees, NoAssignmentLeaksASolutionLine) {
    for (const Assignment& a : every_assignment()) {
        const std::set<std::string> solution = solution_lines(kRepo, a);
        EXPECT_FALSE(solution.empty()) << a.name() << ": nothing to leak means nothing was checked";
        for (const Leak& leak : find_leaks(make_student_tree(kRepo, a), solution)) {
            ADD_FAILURE() << a.name() << ": " << leak.path << ":" << leak.line << " has a solution line: " << leak.text;
        }
    }
}

// The sentences of a stage's header that give its answer are a prose region (markers.h):
// no assignment's tree holds a run of their words, the handouts and docs included.
TEST(Trees, NoAssignmentRestatesItsHeadersSolution) {
    for (const Assignment& a : every_assignment()) {
        const std::set<std::string> phrases = solution_phrases(kRepo, a);
        EXPECT_FALSE(phrases.empty()) << a.name() << ": no prose region, nothing checked";
        for (const Leak& leak : find_phrase_leaks(make_student_tree(kRepo, a), phrases)) {
            ADD_FAILURE() << a.name() << ": " << leak.path << ":" << leak.line << " restates the solution: " << leak.text;
        }
    }
}

// A restating sentence planted in the assigned stage's header, or in its handout, is caught
// though no line of it matches a line of the solution.
TEST(Trees, TheLeakCheckCatchesAPlantedRestatingSentence) {
    const Assignment a{2, 2};
    const std::set<std::string> phrases = solution_phrases(kRepo, a);
    Tree tree = make_student_tree(kRepo, a);
    ASSERT_TRUE(find_phrase_leaks(tree, phrases).empty());
    // The header's answer in other words around the same phrase, and the handout's.
    std::string& header = tree["reduce2/kernel.cu"].text;
    header.insert(header.find('\n') + 1, "// Hint: at every step, thread tid < s adds slot tid + s into slot tid.\n");
    tree["assignments/reduce2.md"].text +=
        "\nIn short: the tree now starts with the widest step, then halves it.\n";
    const auto leaks = find_phrase_leaks(tree, phrases);
    ASSERT_EQ(leaks.size(), 2u);
    EXPECT_EQ(leaks[0].path, "assignments/reduce2.md");
    EXPECT_EQ(leaks[1].path, "reduce2/kernel.cu");
    EXPECT_EQ(leaks[1].line, 2u);
    // The stub's own sentence (what to achieve) is given, not a leak.
    EXPECT_NE(header.find("touch 32 consecutive words"), std::string::npos);
}

TEST(Trees, TheLeakCheckCatchesAPlantedSolutionLine) {
    const Assignment a{4, 4};
    const std::set<std::string> solution = solution_lines(kRepo, a);
    ASSERT_TRUE(solution.count("sum += shared[tid + 32];"));
    ASSERT_TRUE(solution.count("__syncwarp();"));
    Tree tree = make_student_tree(kRepo, a);
    ASSERT_TRUE(find_leaks(tree, solution).empty());
    // A solution line copied into a doc, quoted in a diff, or left in a test.
    tree["docs/00-overview.md"].text += "\n```diff\n+        __syncwarp();\n```\n";
    tree["tests/gpu/test_stages.cu"].text += "    sum += shared[tid + 32];\n";
    const auto leaks = find_leaks(tree, solution);
    ASSERT_EQ(leaks.size(), 2u);
    EXPECT_EQ(leaks[0].path, "docs/00-overview.md");
    EXPECT_EQ(leaks[1].path, "tests/gpu/test_stages.cu");
    // And a whole later stage handed out by mistake: its kernel holds this solution.
    Tree with_later = make_student_tree(kRepo, a);
    with_later["reduce5/kernel.cu"] = TreeFile{read_file(kRepo / "reduce5/kernel.cu"), false};
    EXPECT_FALSE(find_leaks(with_later, solution).empty());
}

TEST(Trees, EveryLinkInAStudentTreeResolves) {
    static const std::regex link(R"(\]\(([^)\s]+)(\s+"[^"]*")?\))");
    for (const Assignment& a : {Assignment{1, 1}, Assignment{4, 4}, Assignment{7, 7}, Assignment{1, 7}}) {
        const Tree tree = make_student_tree(kRepo, a);
        for (const auto& [path, file] : tree) {
            if (path.size() < 3 || path.compare(path.size() - 3, 3, ".md") != 0) continue;
            const std::string dir = path.find('/') == std::string::npos ? "" : path.substr(0, path.rfind('/') + 1);
            for (auto it = std::sregex_iterator(file.text.begin(), file.text.end(), link); it != std::sregex_iterator(); ++it) {
                const std::string target = (*it)[1];
                if (target.find("://") != std::string::npos || target[0] == '#') continue;
                const fs::path resolved = (fs::path(dir) / target.substr(0, target.find('#'))).lexically_normal();
                const std::string key = resolved.generic_string();
                const auto below = tree.lower_bound(key + "/");
                const bool present =
                    tree.count(key) > 0 || (below != tree.end() && below->first.rfind(key + "/", 0) == 0);
                EXPECT_TRUE(present) << a.name() << ": " << path << " links to " << target;
            }
            // Reference-style links: every definition resolves, and no figure is left
            // pointing at a definition that went with its file.
            static const std::regex definition(R"(^\[([^\]\s]+)\]: (\S+))");
            static const std::regex figure_use(R"(\]\[(f[0-9]+)\])");
            std::set<std::string> defined;
            std::istringstream lines(file.text);
            for (std::string line; std::getline(lines, line);) {
                std::smatch m;
                if (!std::regex_search(line, m, definition)) continue;
                defined.insert(m[1]);
                const std::string target = m[2];
                if (target.find("://") != std::string::npos || target[0] == '#') continue;
                const std::string key =
                    (fs::path(dir) / target.substr(0, target.find('#'))).lexically_normal().generic_string();
                EXPECT_TRUE(tree.count(key) > 0) << a.name() << ": " << path << " defines [" << m[1] << "] as " << target;
            }
            for (auto it = std::sregex_iterator(file.text.begin(), file.text.end(), figure_use); it != std::sregex_iterator(); ++it) {
                EXPECT_TRUE(defined.count((*it)[1])) << a.name() << ": " << path << " uses [" << (*it)[1] << "], not defined";
            }
        }
    }
}

TEST(Tamper, OnlyTheEditableFilesMayChange) {
    const fs::path out = scratch("tamper");
    generate(kRepo, Assignment{4, 4}, out);
    const fs::path student = out / "student";
    std::map<std::string, std::string> editable;
    EXPECT_EQ(check_submission(out / "autograder", student, editable), "");
    ASSERT_TRUE(editable.count("reduce4/kernel.cu"));

    // An edited kernel is what a submission is.
    write_file(student / "reduce4/kernel.cu", read_file(student / "reduce4/kernel.cu") + "// my work\n");
    editable.clear();
    EXPECT_EQ(check_submission(out / "autograder", student, editable), "");
    EXPECT_NE(editable.at("reduce4/kernel.cu").find("// my work"), std::string::npos);

    // A changed harness file, test, build file or README is never used, so nothing is at
    // stake: it is reported, not refused (a line added to a README, a CRLF checkout).
    for (const char* path : {"common/timing.h", "tests/gpu/gpu_test.cu", "CMakeLists.txt", "README.md"}) {
        const std::string original = read_file(student / path);
        write_file(student / path, std::regex_replace(original, std::regex("\n"), "\r\n") + "one more line\r\n");
        editable.clear();
        std::vector<std::string> ignored;
        EXPECT_EQ(check_submission(out / "autograder", student, editable, &ignored), "") << path;
        EXPECT_EQ(ignored, std::vector<std::string>{path});
        EXPECT_NE(editable.at("reduce4/kernel.cu").find("// my work"), std::string::npos);
        write_file(student / path, original);
    }

    // A zip of the tree unpacked into one top-level folder (and macOS's companion folder).
    const fs::path zipped = scratch("tamper-zipped");
    write_file(zipped / "my-reduce4/reduce4/kernel.cu", "// zipped\n");
    write_file(zipped / "__MACOSX/my-reduce4/._kernel.cu", "x");
    editable.clear();
    EXPECT_EQ(check_submission(out / "autograder", zipped, editable), "");
    EXPECT_EQ(editable.at("reduce4/kernel.cu"), "// zipped\n");

    // A folder with only the kernel, as Gradescope receives a one-file upload.
    const fs::path upload = scratch("tamper-upload");
    write_file(upload / "kernel.cu", "// the student's reduce4\n");
    editable.clear();
    EXPECT_EQ(check_submission(out / "autograder", upload, editable), "");
    EXPECT_EQ(editable.at("reduce4/kernel.cu"), "// the student's reduce4\n");
    const fs::path empty = scratch("tamper-empty");
    editable.clear();
    EXPECT_NE(check_submission(out / "autograder", empty, editable).find("has no reduce4/kernel.cu"), std::string::npos);

    // The autograder holds what the student tree must not: solutions, hidden cases, hashes.
    for (const char* path : {"manifest.txt", "solution/reduce4/kernel.cu", "solution/reduce3/kernel.cu",
                             "worker/worker.cu", "worker/recorder.cu", "worker/recorder.h", "worker/launch_record.h",
                             "worker/gpu_window.h", "worker/protocol.h", "worker/exec_filter.h",
                             "worker/private_symbols.cmake", "worker/assignment.cmake", "judge/judge.cu", "judge/judge.h",
                             "judge/perf.cu", "judge/cases.cpp", "judge/worker_process.h", "judge/worker_process.cpp",
                             "judge/replay.cu",
                             "judge/CMakeLists.txt", "source_policy.txt", "tool/grader.cpp", "tool/source_check.cpp", "setup.sh",
                             "run_autograder", "requirements.sh", "settings.sh", "rubric.txt", "student_tree/reduce4/kernel.cu"}) {
        EXPECT_TRUE(fs::is_regular_file(out / "autograder" / path)) << path;
    }
    EXPECT_TRUE(fs::is_regular_file(out / "autograder.zip"));
    EXPECT_FALSE(fs::exists(student / "worker"));
    EXPECT_EQ(read_file(out / "autograder/solution/reduce4/kernel.cu").find("// solution ("), std::string::npos);
}

// The classroom program itself, as an instructor runs it.
ProcessResult classroom_command(std::vector<std::string> args, int timeout_seconds = 300) {
    args.insert(args.begin(), CLASSROOM_PROGRAM);
    return run_process(args, "", timeout_seconds);
}

bool is_one_line(const std::string& output) {
    return !output.empty() && output.find('\n') == output.size() - 1;
}

// What bash reads from an autograder's settings.sh: "budget|architectures".
std::string sourced_settings(const fs::path& autograder) {
    return run_process({"bash", "-c", "source \"$0\" && echo \"$time_budget_seconds|$cuda_architectures\"",
                        (autograder / "settings.sh").string()},
                       "", 60)
        .output;
}

TEST(Settings, TheAutograderHoldsWhatGenerateWasGivenOrTheDefaults) {
    const fs::path defaults = scratch("settings-defaults");
    ASSERT_EQ(classroom_command({"generate", "reduce4", "--out", defaults.string()}).exit_code, 0);
    EXPECT_EQ(sourced_settings(defaults / "autograder"), "540|\n");

    const fs::path chosen = scratch("settings-chosen");
    const ProcessResult r = classroom_command(
        {"generate", "reduce4", "--out", chosen.string(), "--time-budget", "300", "--cuda-archs", "80-real,90a"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(sourced_settings(chosen / "autograder"), "300|80-real;90a\n");  // CMake's list, as CUDAARCHS takes it
    ASSERT_EQ(classroom_command({"generate", "reduce4", "--out", chosen.string(), "--cuda-archs", "90"}).exit_code, 0);
    EXPECT_EQ(sourced_settings(chosen / "autograder"), "540|90\n");
}

TEST(Settings, BadValuesAreRefusedWithOneUsageLine) {
    const fs::path out = scratch("settings-refused") / "handout";
    for (const std::vector<std::string>& bad :
         std::vector<std::vector<std::string>>{{"--time-budget", "0"},       {"--time-budget", "-5"},
                                               {"--time-budget", "10s"},     {"--time-budget", "1.5"},
                                               {"--time-budget", "99999999999"}, {"--cuda-archs", "native"},
                                               {"--cuda-archs", "sm_90"},    {"--cuda-archs", "90,"},
                                               {"--cuda-archs", "90;;80"},   {"--cuda-archs", ""}}) {
        const ProcessResult r = classroom_command({"generate", "reduce4", "--out", out.string(), bad[0], bad[1]});
        EXPECT_EQ(r.exit_code, 2) << bad[0] << " " << bad[1];
        EXPECT_TRUE(is_one_line(r.output)) << r.output;
        EXPECT_NE(r.output.find(bad[0]), std::string::npos) << r.output;
        EXPECT_NE(r.output.find("see classroom --help"), std::string::npos) << r.output;
        EXPECT_FALSE(fs::exists(out)) << "nothing is written for a refused value";
    }
}

std::set<std::string> zip_listing(const fs::path& zip) {
    const ProcessResult r = run_process({"cmake", "-E", "tar", "tf", zip.string()}, "", 60);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::set<std::string> names;
    std::istringstream in(r.output);
    for (std::string line; std::getline(in, line);) names.insert(line);
    return names;
}

TEST(Pack, RebuildsGeneratesZipAndPicksUpAnEdit) {
    const fs::path out = scratch("pack");
    generate(kRepo, Assignment{4, 4}, out);
    const std::set<std::string> generated = zip_listing(out / "autograder.zip");
    EXPECT_TRUE(generated.count("setup.sh") && generated.count("run_autograder") && generated.count("settings.sh") &&
                generated.count("requirements.sh"));

    // The instructor edits the settings, then packs: by default next to the autograder folder.
    write_file(out / "autograder/settings.sh",
               std::regex_replace(read_file(out / "autograder/settings.sh"), std::regex("time_budget_seconds=540"),
                                  "time_budget_seconds=420"));
    fs::remove(out / "autograder.zip");
    const ProcessResult packed = classroom_command({"pack", (out / "autograder/").string()});
    ASSERT_EQ(packed.exit_code, 0) << packed.output;
    EXPECT_EQ(zip_listing(out / "autograder.zip"), generated);
    const fs::path unpacked = scratch("pack-unpacked");
    ASSERT_EQ(run_process({"cmake", "-E", "tar", "xf", (out / "autograder.zip").string()}, unpacked.string(), 60).exit_code, 0);
    EXPECT_EQ(sourced_settings(unpacked), "420|\n");
    EXPECT_EQ(read_file(unpacked / "manifest.txt"), read_file(out / "autograder/manifest.txt"));

    ASSERT_EQ(classroom_command({"pack", (out / "autograder").string(), "--out", (out / "elsewhere/a.zip").string()}).exit_code, 0);
    EXPECT_EQ(zip_listing(out / "elsewhere/a.zip"), generated);

    // The student tree, or the handout folder above the autograder, is not an autograder.
    for (const fs::path& wrong : {out / "student", out}) {
        const ProcessResult refused = classroom_command({"pack", wrong.string()});
        EXPECT_EQ(refused.exit_code, 2) << wrong;
        EXPECT_TRUE(is_one_line(refused.output)) << refused.output;
        EXPECT_NE(refused.output.find("is not an autograder folder (no setup.sh)"), std::string::npos) << refused.output;
    }
}

// setup.sh's checks (requirements.sh) run alone, with PATH holding only `tools` (links to
// this machine's) and no CUDA Toolkit where setup.sh would look for one.
ProcessResult check_requirements_with(const std::string& name, const std::vector<std::string>& tools) {
    const fs::path dir = scratch("requirements-" + name);
    fs::create_directories(dir / "bin");
    fs::create_directories(dir / "no-cuda");
    for (const std::string& tool : tools) {
        const std::string found = find_program(tool);
        if (found.empty()) ADD_FAILURE() << "this machine has no " << tool << " to check with";
        else fs::create_symlink(found, dir / "bin" / tool);
    }
    RunSpec spec;
    spec.timeout_seconds = 60;
    spec.extra_env = {"PATH=" + (dir / "bin").string(), "CUDA_HOME=" + (dir / "no-cuda").string(), "CXX="};
    return run_process({"/bin/bash", "-c", "source \"$0\" && check_requirements",
                        (kRepo / "classroom/gradescope/requirements.sh").string()},
                       spec);
}

TEST(SetupChecks, AMissingToolIsOneLineNamingItAndAFailure) {
    const std::string compiler = find_program("c++").empty() ? "g++" : "c++";
    const ProcessResult no_nvcc = check_requirements_with("no-nvcc", {compiler, "nm", "objdump", "readelf"});
    EXPECT_NE(no_nvcc.exit_code, 0);
    EXPECT_TRUE(is_one_line(no_nvcc.output)) << no_nvcc.output;
    EXPECT_EQ(no_nvcc.output.rfind("setup.sh: nvcc (the CUDA Toolkit's compiler", 0), 0u) << no_nvcc.output;

    const ProcessResult no_nm = check_requirements_with("no-nm", {compiler, "objdump", "readelf"});
    EXPECT_NE(no_nm.exit_code, 0);
    EXPECT_TRUE(is_one_line(no_nm.output)) << no_nm.output;
    EXPECT_EQ(no_nm.output.rfind("setup.sh: nm (binutils", 0), 0u) << no_nm.output;
    EXPECT_NE(no_nm.output.find("apt-get install -y binutils"), std::string::npos) << no_nm.output;

    // setup.sh runs them first, and stops there.
    const std::string setup = read_file(kRepo / "classroom/gradescope/setup.sh");
    EXPECT_LT(setup.find("check_requirements || exit 1"), setup.find("cmake -S tool"));
}

// run_autograder in a scratch /autograder, with a stand-in grader that records its arguments.
std::string budget_run_autograder_gives(const fs::path& root, const std::string& environment_budget) {
    RunSpec spec;
    spec.timeout_seconds = 60;
    spec.extra_env = {"CLASSROOM_AUTOGRADER_ROOT=" + root.string(), "CLASSROOM_TIME_BUDGET=" + environment_budget};
    fs::remove(root / "arguments.txt");
    const ProcessResult r = run_process({"/bin/bash", (root / "source/run_autograder").string()}, spec);
    if (!fs::exists(root / "arguments.txt")) return "(the grader was not run: " + r.output + ")";
    const std::string arguments = read_file(root / "arguments.txt");
    std::smatch m;
    if (!std::regex_search(arguments, m, std::regex("--time-budget\n([^\n]*)\n"))) return "(no --time-budget: " + arguments + ")";
    return m.str(1);
}

TEST(RunAutograder, TakesTheBudgetFromSettingsUnlessTheEnvironmentSays) {
    const fs::path out = scratch("budget");
    AutograderSettings settings;
    settings.time_budget_seconds = 321;
    generate(kRepo, Assignment{4, 4}, out, settings);
    const fs::path root = out / "root";
    fs::create_directories(root);
    fs::copy(out / "autograder", root / "source", fs::copy_options::recursive);
    write_file(root / "classroom-build/classroom", "#!/bin/bash\nprintf '%s\\n' \"$@\" > \"$CLASSROOM_AUTOGRADER_ROOT/arguments.txt\"\n");
    fs::permissions(root / "classroom-build/classroom", fs::perms::owner_all);
    EXPECT_EQ(budget_run_autograder_gives(root, ""), "321");
    EXPECT_EQ(budget_run_autograder_gives(root, "77"), "77");
}

void expect_gradescope_results(const Json& r, const GradeResults& results);

// The grading of a refused submission needs no GPU: nothing is built. Its results list
// every rubric line of every stage at zero, numbered and tagged, with the reason; a link
// in place of the kernel is refused too (it could point the grader at its own files).
TEST(Grading, ARefusedSubmissionGetsEveryLineAtZeroWithTheReason) {
    const fs::path out = scratch("refused");
    generate(kRepo, Assignment{3, 4}, out);
    const fs::path submission = out / "submission";
    for (int stage : {3, 4}) {
        const std::string kernel = read_file(out / "student" / stage_name(stage) / "kernel.cu");
        write_file(submission / stage_name(stage) / "kernel.cu",
                   kernel + (stage == 4 ? "\nstatic const int quit_early = (std::_Exit(0), 0);\n"
                                        : "\n#include <cstdlib>\nstatic const int n = std::atoi(\"1\");\n"));
    }
    GradeOptions options;
    options.autograder = out / "autograder";
    options.submission = submission;
    options.work = out / "work";
    const Graded graded = grade(options);
    EXPECT_EQ(graded.exit_status, 1);
    EXPECT_EQ(graded.results.score(), 0);
    EXPECT_EQ(graded.results.max_score(), 2 * Rubric::kTotal);
    EXPECT_NE(graded.results.output.find("refused by the source check"), std::string::npos) << graded.results.output;
    EXPECT_NE(graded.results.output.find("reduce4/kernel.cu:"), std::string::npos) << graded.results.output;
    ASSERT_EQ(graded.results.tests.size(), 16u);  // 8 rubric lines a stage
    EXPECT_EQ(graded.results.tests[0].number, "3.1");
    EXPECT_EQ(graded.results.tests[8].number, "4.1");
    EXPECT_EQ(graded.results.tests[9].tags, (std::vector<std::string>{"reduce4", "hidden", "int"}));
    EXPECT_EQ(graded.results.tests[9].visibility, "after_due_date");
    EXPECT_FALSE(fs::exists(options.work / "build")) << "a refused submission must not be built";
    expect_gradescope_results(parse_json(results_json(graded.results)), graded.results);

    fs::remove(submission / "reduce4/kernel.cu");
    fs::create_symlink(out / "autograder/solution/reduce4/kernel.cu", submission / "reduce4/kernel.cu");
    std::map<std::string, std::string> editable;
    EXPECT_NE(check_submission(out / "autograder", submission, editable).find("symbolic link"), std::string::npos);
}

// A refusal costs only its own stage: the refused file (or a missing one) is replaced by the
// handed-out stub, so that the other stages build and are graded.
TEST(Grading, ARefusalCostsOnlyItsStage) {
    const fs::path out = scratch("refused-one");
    generate(kRepo, Assignment{3, 5}, out);
    const std::string stub4 = read_file(out / "student/reduce4/kernel.cu");
    std::map<std::string, std::string> editable = {
        {"reduce3/kernel.cu", read_file(out / "student/reduce3/kernel.cu") + "// my reduce3\n"},
        {"reduce4/kernel.cu", stub4 + "\nstatic const int quit_early = (std::_Exit(0), 0);\n"},
    };  // reduce5 not submitted
    const auto refused = refuse_stages(out / "autograder", default_source_policy(), editable);
    ASSERT_EQ(refused.size(), 2u);
    EXPECT_NE(refused.at(4).find("refused by the source check"), std::string::npos) << refused.at(4);
    EXPECT_NE(refused.at(4).find("Score 0 for reduce4"), std::string::npos) << refused.at(4);
    EXPECT_NE(refused.at(5).find("not submitted"), std::string::npos) << refused.at(5);
    EXPECT_EQ(editable.at("reduce4/kernel.cu"), stub4) << "the stub builds in the refused file's place";
    EXPECT_EQ(editable.at("reduce5/kernel.cu"), read_file(out / "student/reduce5/kernel.cu"));
    EXPECT_NE(editable.at("reduce3/kernel.cu").find("// my reduce3"), std::string::npos) << "the rest is graded as it is";
    // Nothing at all submitted is the whole submission's refusal.
    std::map<std::string, std::string> none;
    EXPECT_NE(check_submission(out / "autograder", scratch("refused-one-empty"), none).find("has no reduce3/kernel.cu, "),
              std::string::npos);
}

// Two gradings never share the machine: the second waits for the lock, and past half its
// time budget it could not grade (exit 3), saying why.
// What the student's user runs has a bound on its processes and threads, so that a
// submission that spawns without end cannot hang the grading machine (the judge's workers
// get the same bound through worker_process.cpp's become()).
TEST(Process, AStepRunAsAnotherUserHasABoundOnItsTasks) {
    if (geteuid() != 0 || !getpwnam("nobody")) GTEST_SKIP() << "needs root and a user 'nobody' to run a step as";
    const std::string limit_line = "grep 'Max processes' /proc/self/limits; id -u";
    RunSpec spec;
    spec.run_as = "nobody";
    spec.timeout_seconds = 60;
    const ProcessResult r = run_process({"sh", "-c", limit_line}, spec);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(std::regex_search(r.output, std::regex("Max processes +4096 +4096 +processes *\n[1-9][0-9]*\n")))
        << r.output;
    // And a bound on the size of a file it writes, its output file too.
    const ProcessResult files = run_process({"sh", "-c", "grep 'Max file size' /proc/self/limits"}, spec);
    EXPECT_TRUE(std::regex_search(files.output, std::regex("Max file size +1073741824 +1073741824 +bytes"))) << files.output;
    // The grader's own steps (no user to drop to) keep this process's bound.
    spec.run_as.clear();
    const ProcessResult own = run_process({"sh", "-c", limit_line}, spec);
    EXPECT_EQ(own.output.find(" 4096 "), std::string::npos) << own.output;
}

// A step that prints without end costs the grader's memory a bounded amount: its output
// comes back as the first and last 2 MiB with a line saying how much was left out.
TEST(Process, AStepsOutputIsReadBackWithABound) {
    RunSpec spec;
    spec.timeout_seconds = 60;
    const ProcessResult r =
        run_process({"sh", "-c", "echo first; head -c 10000000 /dev/zero | tr '\\0' x; echo; echo last"}, spec);
    ASSERT_EQ(r.exit_code, 0);
    EXPECT_LE(r.output.size(), (4u << 20) + 100);
    EXPECT_EQ(r.output.rfind("first\n", 0), 0u);
    EXPECT_NE(r.output.find("bytes of output left out"), std::string::npos);
    EXPECT_TRUE(r.output_cut);
    // Where the grader needs all of it (the compiled check's disassembly), it asks for more.
    spec.most_output = std::size_t{64} << 20;
    const ProcessResult whole =
        run_process({"sh", "-c", "echo first; head -c 10000000 /dev/zero | tr '\\0' x; echo; echo last"}, spec);
    EXPECT_FALSE(whole.output_cut);
    EXPECT_EQ(whole.output.size(), 6u + 10000000u + 1u + 5u);
    EXPECT_EQ(r.output.substr(r.output.size() - 5), "last\n");
    // Output under the bound comes back whole.
    const ProcessResult small = run_process({"sh", "-c", "echo one; echo two"}, spec);
    EXPECT_EQ(small.output, "one\ntwo\n");
    EXPECT_FALSE(small.output_cut);
}

// Every process of the student's user is gone, not only signalled, when kill_leftovers
// returns: a killed process could otherwise still hold the GPU into the next step.
TEST(Process, EveryProcessOfTheStudentsUserIsGoneAfterAStep) {
    if (geteuid() != 0 || !getpwnam("nobody")) GTEST_SKIP() << "needs root and a user 'nobody' to run a step as";
    become_subreaper();
    RunSpec spec;
    spec.run_as = "nobody";
    spec.timeout_seconds = 60;
    // A process in a session of its own, ignoring every signal it may ignore, left running.
    const ProcessResult r = run_process({"sh", "-c", "setsid sh -c 'trap \"\" HUP INT TERM; sleep 300' </dev/null >/dev/null 2>&1 & echo started"}, spec);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(kill_leftovers("nobody"), "");
    EXPECT_EQ(student_user::processes_of(65534), 0);
}

// The process that ends the student's cannot be signalled by them (review5/12-killer-sniper:
// processes of the user that keep sending a signal to all they may reach used to kill the
// killer first, and every grading then could not grade).
TEST(Process, TheStudentsProcessesCannotKillTheProcessThatEndsThem) {
    if (geteuid() != 0 || !getpwnam("nobody")) GTEST_SKIP() << "needs root and a user 'nobody' to run a step as";
    for (int trial = 0; trial < 10; ++trial) {
        for (int i = 0; i < 4; ++i) {
            if (fork() == 0) {  // a sniper: the student's, in a session of its own, signalling all it may
                if (!student_user::become(65534, 65534)) _exit(1);
                signal(SIGUSR1, SIG_IGN);
                setsid();
                for (;;) kill(-1, SIGUSR1);
            }
        }
        usleep(100000);
        ASSERT_EQ(student_user::end_every_process_of(65534, 65534), "") << "trial " << trial;
        while (waitpid(-1, nullptr, WNOHANG) > 0) {}
    }
}

// The sanitizer's watch sees a second process of the student's user, however briefly it
// lives past the poll (review5/13: a child that re-ran the worker without the sanitizer's
// environment did the work uninstrumented), and says nothing of one process alone.
TEST(Process, TheSanitizersWatchSeesASecondProcessOfTheUser) {
    if (geteuid() != 0 || !getpwnam("nobody")) GTEST_SKIP() << "needs root and a user 'nobody' to run a step as";
    ASSERT_EQ(student_user::processes_of(65534), 0) << "a process of nobody is already running";
    auto run_as_nobody = [](int children, int child_ms) {
        const pid_t pid = fork();
        if (pid == 0) {
            if (!student_user::become(65534, 65534)) _exit(1);
            for (int i = 0; i < children; ++i) {
                if (fork() == 0) {
                    usleep(child_ms * 1000);
                    _exit(0);
                }
            }
            usleep(300000);
            while (waitpid(-1, nullptr, 0) > 0) {}
            _exit(0);
        }
        return pid;
    };
    {
        student_user::SecondProcessWatch watch(65534);
        const pid_t alone = run_as_nobody(0, 0);
        waitpid(alone, nullptr, 0);
        EXPECT_EQ(watch.stop(), "");
    }
    {
        student_user::SecondProcessWatch watch(65534);
        const pid_t parent = run_as_nobody(1, 50);  // a child of 50 ms: ten polls
        waitpid(parent, nullptr, 0);
        const std::string seen = watch.stop();
        EXPECT_NE(seen.find("2 processes of the student's user at once"), std::string::npos) << seen;
    }
}

// A process whose first thread ends with the bare exit system call reads "Z (zombie)" in
// /proc while its other threads run on: review7/16 hid the sanitizer's target so, and forked
// an uninstrumented child from its second thread that the watch took for the only process.
// Such a zombie counts as alive, and the watch sees the two.
TEST(Process, AZombieWhoseOtherThreadsRunCountsAsAlive) {
    if (geteuid() != 0 || !getpwnam("nobody")) GTEST_SKIP() << "needs root and a user 'nobody' to run a step as";
    ASSERT_EQ(student_user::processes_of(65534), 0) << "a process of nobody is already running";
    student_user::SecondProcessWatch watch(65534);
    const pid_t pid = fork();
    if (pid == 0) {
        if (!student_user::become(65534, 65534)) _exit(1);
        pthread_t thread;
        auto second = [](void*) -> void* {
            usleep(200000);  // the first thread has long ended: the process reads as a zombie
            if (fork() == 0) {
                usleep(100000);
                _exit(0);
            }
            usleep(300000);
            syscall(SYS_exit_group, 0);
            return nullptr;
        };
        if (pthread_create(&thread, nullptr, second, nullptr) != 0) _exit(1);
        syscall(SYS_exit, 0);  // this thread only
    }
    usleep(100000);
    const std::string text = read_file("/proc/" + std::to_string(pid) + "/status");
    EXPECT_NE(text.find("State:\tZ"), std::string::npos) << "the leader should read as a zombie now:\n" << text;
    EXPECT_EQ(student_user::processes_of(65534), 1) << "a zombie whose second thread runs is alive";
    int code = 0;
    waitpid(pid, &code, 0);
    const std::string seen = watch.stop();
    EXPECT_NE(seen.find("2 processes of the student's user at once"), std::string::npos) << seen;
}

// `judge --exec-as nobody PROGRAM...` run by the shell after `shell_prefix` (redirections),
// its output and stderr; without a driver (CI) the judge loads the toolkit's stub of libcuda
// (--exec-as makes no CUDA call). Empty `skip` when the judge ran; else why it cannot here.
std::string judge_exec_as(const std::string& shell_prefix, const std::string& program, int& status, std::string& skip) {
    if (geteuid() != 0 || !getpwnam("nobody")) {
        skip = "needs root and a user 'nobody' to run a step as";
        return "";
    }
    auto run = [&](const std::string& library_path) {
        const std::string command = shell_prefix + library_path + CLASSROOM_JUDGE + " --exec-as nobody " + program + " 2>&1";
        FILE* pipe = popen(command.c_str(), "r");
        std::string out;
        char buffer[4096];
        for (std::size_t got; pipe && (got = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, got);
        status = pipe ? pclose(pipe) : -1;
        return out;
    };
    std::string out = run("");
    if (out.find("error while loading shared libraries") != std::string::npos) {
        const std::string stub_dir = "/tmp/classroom_cuda_stub_" + std::to_string(getpid());
        std::filesystem::create_directories(stub_dir);
        std::error_code ignored;
        std::filesystem::create_symlink(CLASSROOM_CUDA_STUB, stub_dir + "/libcuda.so.1", ignored);
        out = run("LD_LIBRARY_PATH=" + stub_dir + " ");
        std::filesystem::remove_all(stub_dir, ignored);
    }
    if (out.find("error while loading shared libraries") != std::string::npos) {
        skip = "the judge cannot start here, not even with the toolkit's stub libcuda: " + out;
    }
    return out;
}

// The sanitizer opens its log without close-on-exec, so its target would hold a writable
// descriptor of root's log (review6/15 wrote a clean summary through it): `judge --exec-as`
// closes every regular file past stderr before it starts the worker, and keeps the rest
// (the pipes through which the sanitizer speaks to its target).
TEST(Process, TheJudgesDropToTheStudentClosesEveryRegularFile) {
    const std::string log = "/tmp/classroom_exec_as_" + std::to_string(getpid()) + ".log";
    // Descriptor 7 a regular file opened without close-on-exec (as the sanitizer opens its
    // log), 8 a character device, which is no file of anyone's and stays. ls is the worker
    // here: it may start no other program (the next test).
    int status = 0;
    std::string skip;
    const std::string listed = judge_exec_as("exec 7>" + log + " 8</dev/null; ", "/bin/ls /proc/self/fd", status, skip);
    unlink(log.c_str());
    if (!skip.empty()) GTEST_SKIP() << skip;
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << listed;
    std::set<std::string> fds;
    std::istringstream words(listed);
    for (std::string w; words >> w;) fds.insert(w);
    EXPECT_FALSE(fds.count("7")) << "the regular file reached the student's process: " << listed;
    EXPECT_TRUE(fds.count("8")) << "the device was closed too: " << listed;
}

// A worker can never replace its own program (an exec without the sanitizer's environment
// leaves one uninstrumented process: review8/17): its filter (worker/exec_filter.h) is in
// place before the submission's first instruction. And the sanitized worker can start no
// process (a child without that environment is uninstrumented: review5/13, review7/16):
// `judge --exec-as` starts it under a filter of its own. The probe has the worker's filter
// and tries every way, and a thread, alone and under the judge.
TEST(Process, TheSanitizedWorkerStartsNoProcessAndNoProgram) {
    const ProcessResult alone = run_process({CLASSROOM_NEW_PROCESS_PROBE}, "", 60);
    ASSERT_EQ(alone.exit_code, 0) << alone.output;
    EXPECT_NE(alone.output.find("fork ok"), std::string::npos) << "alone, a worker may fork:\n" << alone.output;
    for (const char* way : {"execveat", "execve"}) {
        EXPECT_NE(alone.output.find(std::string(way) + " refused: Operation not permitted"), std::string::npos)
            << way << ", alone:\n" << alone.output;
    }
    int status = 0;
    std::string skip;
    const std::string said = judge_exec_as("", CLASSROOM_NEW_PROCESS_PROBE, status, skip);
    if (!skip.empty()) GTEST_SKIP() << skip;
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << said;
    EXPECT_NE(said.find("thread ok"), std::string::npos) << said;
    for (const char* way : {"fork", "clone", "posix_spawn", "execveat", "execve"}) {
        EXPECT_NE(said.find(std::string(way) + " refused: Operation not permitted"), std::string::npos) << way << ":\n" << said;
    }
}

// The task bound is the kernel's count for a user id, shared by every PID namespace (and
// container) that uses that id: when processes elsewhere hold most of it, a grading must not
// start (a build or a worker could fail for a reason not the student's) and says why.
TEST(Process, TaskSlotsHeldByTheSameUserElsewhereAreSeen) {
    if (geteuid() != 0 || !getpwnam("nobody")) GTEST_SKIP() << "needs root and a user 'nobody' to run a step as";
    ASSERT_TRUE(task_slots_free("nobody"));
    // A holder as the same user, outside any step of ours: threads up to 3,800 of its 4,096
    // slots (the most a grading leaves free is 512), then it waits.
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    const pid_t holder = fork();
    ASSERT_GE(holder, 0);
    if (holder == 0) {
        close(ready[0]);
        if (!student_user::become(65534, 65534)) _exit(1);
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 64 * 1024);
        int made = 0;
        for (; made < 3800; ++made) {
            pthread_t t;
            if (pthread_create(&t, &attr, [](void*) -> void* { pause(); return nullptr; }, nullptr) != 0) break;
        }
        (void)!write(ready[1], &made, sizeof made);
        pause();
        _exit(0);
    }
    close(ready[1]);
    int made = 0;
    ASSERT_EQ(read(ready[0], &made, sizeof made), static_cast<ssize_t>(sizeof made));
    close(ready[0]);
    if (made < 3800) {  // a container's own bound on tasks (a pids cgroup) stopped the holder first
        kill(holder, SIGKILL);
        waitpid(holder, nullptr, 0);
        GTEST_SKIP() << "this machine let the holder start only " << made << " of 3800 threads";
    }
    EXPECT_FALSE(task_slots_free("nobody"));
    kill(holder, SIGKILL);
    waitpid(holder, nullptr, 0);
    EXPECT_TRUE(task_slots_free("nobody"));
}

TEST(Grading, WaitsForTheMachineLock) {
    const fs::path out = scratch("lock");
    generate(kRepo, Assignment{4, 4}, out);
    const fs::path lock = out / "grading.lock";
    const int held = open(lock.c_str(), O_RDWR | O_CREAT, 0600);
    ASSERT_GE(held, 0);
    ASSERT_EQ(flock(held, LOCK_EX), 0);
    GradeOptions options;
    options.autograder = out / "autograder";
    options.submission = out / "student";
    options.work = out / "work";
    options.lock = lock;
    options.time_budget = 10;  // a fifth of it: 2 s of waiting
    const auto start = std::chrono::steady_clock::now();
    const Graded graded = grade(options);
    EXPECT_GE(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
    EXPECT_EQ(graded.exit_status, 3);
    EXPECT_NE(graded.results.output.find("another grading held"), std::string::npos) << graded.results.output;
    EXPECT_FALSE(fs::exists(options.work / "build")) << "nothing is built while another grading holds the machine";
    close(held);

    // A lock in a folder other users may write is no lock: one of them could remove it, or
    // make it first.
    const fs::path shared = out / "shared";
    fs::create_directories(shared);
    fs::permissions(shared, fs::perms::all);
    options.lock = shared / "grading.lock";
    const Graded untrusted = grade(options);
    EXPECT_EQ(untrusted.exit_status, 3);
    EXPECT_NE(untrusted.results.output.find("may be written by other users"), std::string::npos) << untrusted.results.output;
}

// The rubric: its file, its arithmetic, and the handouts that show it.
TEST(Rubric, TheFileRoundTripsAndRefusesBadLinesByNumber) {
    const Assignment a{3, 5};
    const GradingRubric defaults = default_rubric(kRepo, a);
    EXPECT_EQ(defaults.stage_total(), Rubric::kTotal);
    const GradingRubric again = read_rubric(rubric_file(defaults, a), a);
    EXPECT_EQ(rubric_file(again, a), rubric_file(defaults, a));
    EXPECT_EQ(again.threshold(3), 1.25);
    EXPECT_EQ(again.threshold(4), 1.10);
    EXPECT_EQ(again.min_block(3), 32);
    EXPECT_EQ(again.min_block(4), 64);
    EXPECT_EQ(again.min_block(5), 64);

    const GradingRubric edited = read_rubric("points performance 40\r\nfull-points-at reduce4 1.2\ngate off\n"
                                             "partial-credit off\nremeasure 0\nsmallest-block reduce5 128\n# a comment\n\n",
                                             a, defaults);
    EXPECT_EQ(edited.performance, 40);
    EXPECT_EQ(edited.stage_total(), Rubric::kTotal - Rubric::kPerformance + 40);
    EXPECT_EQ(edited.threshold(4), 1.2);
    EXPECT_EQ(edited.threshold(5), defaults.threshold(5)) << "a stage not named keeps its default";
    EXPECT_EQ(edited.min_block(5), 128);
    EXPECT_EQ(edited.min_block(4), 64);
    // Read over nothing (the grader reads rubric.txt so), every stage must be named.
    EXPECT_THROW(read_rubric("full-points-at reduce4 1.2\n", a), std::invalid_argument);
    EXPECT_FALSE(edited.gate_on_public_cases);
    EXPECT_LT(edited.partial_margin, 0);
    EXPECT_EQ(edited.remeasure_band, 0);

    for (const char* bad : {"points speed 10", "points performance -1", "points performance ten", "gate maybe",
                            "full-points-at reduce7 1.1", "full-points-at reduce4 0.9", "full-points-at reduce4",
                            "partial-credit", "remeasure -0.1", "bonus 5", "points performance 1e999",
                            "smallest-block reduce4 48", "smallest-block reduce4 2048", "smallest-block reduce4 64.5",
                            "smallest-block reduce8 64"}) {
        try {
            read_rubric("# first line\n" + std::string(bad) + "\n", a, defaults);
            ADD_FAILURE() << "accepted: " << bad;
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("rubric.txt line 2: "), std::string::npos) << e.what();
        }
    }
}

TEST(Rubric, PerformancePointsFallFromTheThresholdToThePreviousStageLessTheMargin) {
    GradingRubric r = default_rubric(kRepo, Assignment{4, 4});  // T = 1.10, 25 points, margin 0.05
    const double previous = 1.27;                        // the previous stage's ratio in this grading
    EXPECT_EQ(r.performance_points(4, 0.95, previous), 25);
    EXPECT_EQ(r.performance_points(4, 1.10, previous), 25);
    EXPECT_EQ(r.performance_points(4, 1.16, previous), 12.5);  // halfway from 1.10 to 1.22
    EXPECT_EQ(r.performance_points(4, 1.22, previous), 0);
    // The previous stage's own code, measured up to 0.031 below its ratio (judge_timing.csv), earns none.
    EXPECT_EQ(r.performance_points(4, previous - 0.031, previous), 0);
    // Where the previous stage is within the margin of T there is no partial range: all or nothing.
    EXPECT_EQ(r.performance_points(4, 1.11, 1.14), 0);
    r.partial_margin = -1;
    EXPECT_EQ(r.performance_points(4, 1.11, previous), 0);
    EXPECT_EQ(r.performance_points(4, 1.09, previous), 25);
}

TEST(Rubric, EveryHandoutShowsTheDefaultRubricAndGenerateWritesTheGivenOne) {
    for (int k : stages_in(kRepo)) {
        if (k == 0) continue;
        const std::string handout = read_file(kRepo / "assignments" / (stage_name(k) + ".md"));
        EXPECT_EQ(handout, handout_with_rubric(handout, default_rubric(kRepo, Assignment{k, k}), k))
            << stage_name(k) << ".md: run `classroom check --write-handouts`";
    }
    const fs::path out = scratch("rubric");
    const Assignment a{4, 4};
    GradingRubric mine = read_rubric("full-points-at reduce4 1.15\npoints performance 30\n", a, default_rubric(kRepo, a));
    AutograderSettings settings;
    settings.rubric = mine;
    generate(kRepo, a, out, settings);
    EXPECT_EQ(rubric_file(read_rubric(read_file(out / "autograder/rubric.txt"), a), a), rubric_file(mine, a));
    const std::string handout = read_file(out / "student/assignments/reduce4.md");
    EXPECT_NE(handout.find("| performance, once the public cases pass | 30 | median time at most 1.15 times"), std::string::npos);
    EXPECT_NE(handout.find("| **total** | **105** |"), std::string::npos);
    EXPECT_THROW(handout_with_rubric("# no block\n", mine, 4), std::runtime_error);
}

void expect_gradescope_results(const Json& r, const GradeResults& results) {
    // Gradescope's autograder specification: a number score, the tests as objects with a
    // name, score and max_score, and the optional fields with their allowed values.
    static const std::set<std::string> visibilities = {"hidden", "after_due_date", "after_published", "visible"};
    static const std::set<std::string> top_keys = {"score", "execution_time", "output", "visibility",
                                                   "stdout_visibility", "extra_data", "tests", "leaderboard"};
    static const std::set<std::string> test_keys = {"score",  "max_score", "status", "name",       "name_format",
                                                    "number", "output",    "output_format", "tags", "visibility",
                                                    "extra_data"};
    ASSERT_EQ(r.kind, Json::Kind::Object);
    for (const auto& [key, value] : r.object) EXPECT_TRUE(top_keys.count(key)) << "unknown key " << key;
    EXPECT_EQ(r.at("score").kind, Json::Kind::Number);
    EXPECT_NEAR(r.at("score").number, results.score(), 1e-9);
    EXPECT_EQ(r.at("execution_time").kind, Json::Kind::Number);
    EXPECT_EQ(r.at("output").string, results.output);
    EXPECT_TRUE(visibilities.count(r.at("stdout_visibility").string));
    ASSERT_EQ(r.at("tests").kind, Json::Kind::Array);
    ASSERT_EQ(r.at("tests").array.size(), results.tests.size());
    double sum = 0;
    for (std::size_t i = 0; i < results.tests.size(); ++i) {
        const Json& t = r.at("tests").array[i];
        for (const auto& [key, value] : t.object) EXPECT_TRUE(test_keys.count(key)) << "unknown key " << key;
        EXPECT_EQ(t.at("name").string, results.tests[i].name);
        EXPECT_EQ(t.at("output").string, results.tests[i].output);
        EXPECT_EQ(t.at("score").kind, Json::Kind::Number);
        EXPECT_EQ(t.at("max_score").kind, Json::Kind::Number);
        EXPECT_LE(t.at("score").number, t.at("max_score").number);
        EXPECT_TRUE(t.at("status").string == "passed" || t.at("status").string == "failed");
        EXPECT_TRUE(visibilities.count(t.at("visibility").string));
        sum += t.at("score").number;
    }
    EXPECT_NEAR(sum, r.at("score").number, 1e-9);
}

TEST(Results, JsonFollowsGradescopeSpecification) {
    GradeResults results;
    results.output = "Assignment reduce4, seed 42.\nGPU: a \"quoted\" name\\with a backslash";
    results.execution_time = 12.5;
    results.tests.push_back({"4.1", "reduce4: public cases", 20, 20, true, "every public case was right", "visible",
                             {"reduce4", "public"}});
    results.tests.push_back({"4.2", "reduce4: hidden cases, int", 0, 10, false,
                             "FAIL n=3 type=int block=64: expected 5, got 7\ttab\x01" "control", "after_due_date",
                             {"reduce4", "hidden", "int"}});
    results.tests.push_back({"", "reduce4: performance", 24.97, 25, false, "", "visible", {}});  // partial credit
    results.tests.push_back({"5.1", "reduce5: public cases", 100, 100, true, "", "visible", {}});
    results.leaderboard.push_back({"reduce4 time / reference", 1.0123, true});
    results.extra_data.push_back({"seed", "42"});
    results.extra_data.push_back({"time_ratios", "{\"reduce4\": {\"vs_reference\": 1.0123}}"});
    const std::string text = results_json(results);
    const Json r = parse_json(text);
    expect_gradescope_results(r, results);
    EXPECT_EQ(r.at("tests").array[1].at("visibility").string, "after_due_date");
    EXPECT_EQ(r.at("tests").array[0].at("number").string, "4.1");
    ASSERT_EQ(r.at("tests").array[1].at("tags").array.size(), 3u);
    EXPECT_EQ(r.at("tests").array[1].at("tags").array[2].string, "int");
    EXPECT_FALSE(r.at("tests").array[2].has("number"));  // none given: none written
    EXPECT_FALSE(r.at("tests").array[2].has("tags"));
    // The leaderboard: Gradescope's {name, value, order} entries; a time ratio sorts ascending.
    ASSERT_EQ(r.at("leaderboard").array.size(), 1u);
    EXPECT_EQ(r.at("leaderboard").array[0].at("name").string, "reduce4 time / reference");
    EXPECT_NEAR(r.at("leaderboard").array[0].at("value").number, 1.0123, 1e-9);
    // Hundredths of a point survive into the total (four significant digits once made 144.97 145).
    EXPECT_NEAR(r.at("score").number, 144.97, 1e-9);
    EXPECT_EQ(r.at("leaderboard").array[0].at("order").string, "asc");
    EXPECT_EQ(r.at("extra_data").at("seed").number, 42);
    EXPECT_NEAR(r.at("extra_data").at("time_ratios").at("reduce4").at("vs_reference").number, 1.0123, 1e-12);
    // No tests at all (a refusal): still valid, score 0, no leaderboard or extra_data keys.
    GradeResults refused;
    refused.output = "refused: common/timing.h differs";
    const Json none = parse_json(results_json(refused));
    expect_gradescope_results(none, refused);
    EXPECT_FALSE(none.has("leaderboard"));
    EXPECT_THROW(parse_json(text.substr(0, text.size() - 3)), std::runtime_error);  // the reader itself rejects junk
}

// Batch, selftest and similarity --------------------------------------------------------

// `classroom ARGS...`, run as the instructor would; a batch here runs unisolated, told to
// (the refusal is tested on its own below).
ProcessResult classroom_tool(std::vector<std::string> args) {
    if (!args.empty() && args[0] == "batch") args.push_back("--allow-unisolated");
    return classroom_command(args, 600);
}

TEST(Batch, RefusesToGradeUnisolatedUnlessTold) {
    std::string warning;
    // As root without --run-as, and without root at all: one student's code could reach the next's grading.
    for (bool root : {true, false}) {
        EXPECT_NE(isolation_refusal(root, "", false, warning).find("--run-as"), std::string::npos) << root;
        EXPECT_EQ(isolation_refusal(root, "", true, warning), "") << root;  // the risk accepted, and said
        EXPECT_NE(warning.find(root ? "as root" : "replace the grader's own programs"), std::string::npos) << warning;
        EXPECT_EQ(split_lines(warning).size(), 1u);
    }
    EXPECT_EQ(isolation_refusal(true, "classroom-student", false, warning), "");
    EXPECT_EQ(warning, "");
}

// Without a GPU nothing can be graded: every submission is a row with exit status 3 and
// empty scores, never a zero; and each still has its own fresh work folder, removed after.
TEST(Batch, EachSubmissionGetsAFreshWorkFolderAndARowThatSaysItWasNotGraded) {
    const std::string no_gpu = gpu_missing();
    if (no_gpu.empty()) GTEST_SKIP() << "a GPU is here: the grading tests grade real submissions";
    const fs::path out = scratch("batch");
    generate(kRepo, Assignment{4, 4}, out / "handout");
    const std::string stub = read_file(out / "handout/student/reduce4/kernel.cu");
    const fs::path uploads = out / "uploads";
    write_file(uploads / "alice/reduce4/kernel.cu", stub + "// alice\n");  // the edited kernels
    write_file(uploads / "bob/kernel.cu", stub + "// bob\n");              // the lone file
    write_file(uploads / "carol/my-reduce4/reduce4/kernel.cu", stub);      // a zip of the tree
    write_file(uploads / "notes.txt", "not a submission");
    write_file(out / "graded/alice/work/build/left-from-before.o", "stale");

    const ProcessResult batch = classroom_tool({"batch", "--autograder", (out / "handout/autograder").string(),
                                                "--submissions", uploads.string(), "--out", (out / "graded").string()});
    EXPECT_EQ(batch.exit_code, 3) << batch.output;
    EXPECT_NE(batch.output.find("no GPU"), std::string::npos) << batch.output;
    EXPECT_NE(batch.output.find("ignored: notes.txt"), std::string::npos) << batch.output;
    for (const char* name : {"alice", "bob", "carol"}) {
        const fs::path graded = out / "graded" / name;
        // The work folder was made fresh (alice's stale file is gone) and removed after the
        // grading: no student's build is left for anyone to read.
        EXPECT_FALSE(fs::exists(graded / "work")) << name;
        EXPECT_NE(read_file(graded / "report.txt").find("not graded: no GPU"), std::string::npos) << name;
        EXPECT_EQ(fs::status(graded / "report.txt").permissions() & (fs::perms::group_all | fs::perms::others_all),
                  fs::perms::none)
            << name << ": the report quotes the student's code, for the instructor alone";
    }
    EXPECT_EQ(fs::status(out / "graded/trusted").permissions() & (fs::perms::group_all | fs::perms::others_all),
              fs::perms::none);
    EXPECT_EQ(split_lines(read_file(out / "graded/scores.csv")),
              (std::vector<std::string>{"name,score,max,exit_status", "alice,,,3", "bob,,,3", "carol,,,3"}));

    const ProcessResult usage = classroom_tool({"batch", "--autograder", (out / "handout/autograder").string()});
    EXPECT_EQ(usage.exit_code, 2);
    EXPECT_EQ(split_lines(usage.output).size(), 1u) << usage.output;
}

// scores.csv from the grader's own results.json: a column per rubric part, named as the
// grader names it, and no score for a row that was not graded.
TEST(Batch, ScoresCsvHasAColumnPerRubricPartAndNoScoreForAnUngradedRow) {
    GradeResults results;
    results.tests.push_back({"4.0", "reduce4: build", 0, 0, true, "built", "visible", {}});
    results.tests.push_back({"4.1", "reduce4: public cases", 20, 20, true, "", "visible", {}});
    results.tests.push_back({"4.2", "reduce4: hidden cases, int", 7.5, 10, false, "", "after_due_date", {}});
    const fs::path file = scratch("scores") / "results.json";
    write_file(file, results_json(results));
    BatchRow alice{"alice", 1, read_score_sheet(file)};
    EXPECT_EQ(alice.sheet.score, 27.5);
    EXPECT_EQ(alice.sheet.max_score, 30);
    BatchRow bob{"bob, the second", 3, alice.sheet};  // could not grade: its zeros are not a score
    BatchRow carol{"carol", -1, {}};                  // the grader crashed
    EXPECT_EQ(split_lines(scores_csv({alice, bob, carol})),
              (std::vector<std::string>{
                  "name,score,max,exit_status,reduce4: build,reduce4: public cases,\"reduce4: hidden cases, int\"",
                  "alice,27.5,30,1,0,20,7.5", "\"bob, the second\",,,3,,,", "carol,,,-1,,,"}));
    write_file(file, "{\"score\": 3");
    EXPECT_THROW(read_score_sheet(file), std::runtime_error);
}

TEST(Selftest, WithoutAGpuSaysSoInOneLineAndExits3) {
    if (gpu_missing().empty()) GTEST_SKIP() << "a GPU is here: selftest would grade";
    const fs::path out = scratch("selftest");
    generate(kRepo, Assignment{4, 4}, out);
    const ProcessResult selftest = classroom_tool({"selftest", (out / "autograder").string()});
    EXPECT_EQ(selftest.exit_code, 3);
    ASSERT_EQ(split_lines(selftest.output).size(), 1u) << selftest.output;
    EXPECT_NE(selftest.output.find("cannot self-test without a GPU"), std::string::npos) << selftest.output;
    EXPECT_EQ(selftest.output.find("passed"), std::string::npos);
}

TEST(Similarity, BothLayoutsHaveEveryKernelTheBaseFileAndTheMissingStages) {
    const fs::path out = scratch("similarity");
    generate(kRepo, Assignment{3, 4}, out / "handout");
    const fs::path uploads = out / "uploads";
    write_file(uploads / "alice/reduce3/kernel.cu", "// alice 3\n");
    write_file(uploads / "alice/reduce4/kernel.cu", "// alice 4\n");
    write_file(uploads / "bob/reduce4/kernel.cu", "// bob 4\n");  // no reduce3
    fs::create_directories(uploads / "carol");                    // nothing at all
    const fs::path exported = out / "exported";
    write_file(exported / "jplag/submissions/dave/reduce4_kernel.cu", "from an earlier export");

    const std::vector<std::string> missing =
        export_for_similarity(out / "handout/autograder", uploads, exported);
    EXPECT_EQ(missing, (std::vector<std::string>{"bob: reduce3/kernel.cu", "carol: reduce3/kernel.cu",
                                                 "carol: reduce4/kernel.cu"}));
    for (const char* layout : {"jplag/submissions/", "moss/"}) {
        const fs::path students = exported / layout;
        EXPECT_EQ(read_file(students / "alice/reduce3_kernel.cu"), "// alice 3\n") << layout;
        EXPECT_EQ(read_file(students / "alice/reduce4_kernel.cu"), "// alice 4\n") << layout;
        EXPECT_EQ(read_file(students / "bob/reduce4_kernel.cu"), "// bob 4\n") << layout;
        EXPECT_FALSE(fs::exists(students / "bob/reduce3_kernel.cu")) << layout;
        EXPECT_FALSE(fs::exists(students / "carol")) << layout;
        EXPECT_FALSE(fs::exists(students / "dave")) << layout;
    }
    for (const char* base : {"jplag/base", "moss/base"}) {
        for (const char* stage : {"reduce3", "reduce4"}) {
            EXPECT_EQ(read_file(exported / base / (std::string(stage) + "_kernel.cu")),
                      read_file(out / "handout/student" / stage / "kernel.cu"))
                << base << " " << stage;
        }
    }
    const std::string readme = read_file(exported / "README.txt");
    for (const char* needed : {"java -jar jplag.jar -l cpp -p .cu -bc base submissions",
                               "moss -l cc -b base/reduce3_kernel.cu -b base/reduce4_kernel.cu -d !(base)/*.cu",
                               "bob: reduce3/kernel.cu", "carol: reduce4/kernel.cu"}) {
        EXPECT_NE(readme.find(needed), std::string::npos) << needed << "\n" << readme;
    }
    // A student folder named like the base code's would be taken for it.
    fs::create_directories(uploads / "base");
    EXPECT_THROW(export_for_similarity(out / "handout/autograder", uploads, exported), std::invalid_argument);
}

}  // namespace
