// classroom: the instructor's tool (docs/classroom.md).
//
//   classroom generate reduce4 --out handout/reduce4        # student tree + autograder
//   classroom generate reduce1..reduce4 --out handout/r1-4  # a run of stages
//   classroom pack handout/reduce4/autograder               # the zip again, after an edit
//   classroom grade --autograder handout/reduce4/autograder --submission path/to/student/tree
//   classroom batch --autograder handout/reduce4/autograder --submissions uploads --out graded
//   classroom selftest handout/reduce4/autograder           # before uploading it
//   classroom similarity --autograder DIR --submissions uploads --out similarity
//   classroom check                                         # markers and leaks, every assignment
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "assignment.h"
#include "batch.h"
#include "generator.h"
#include "grader.h"
#include "leaks.h"
#include "markers.h"
#include "process.h"

#ifndef CLASSROOM_REPOSITORY
#define CLASSROOM_REPOSITORY "."
#endif

namespace {

using namespace classroom;

const char* kUsage =
    "usage:\n"
    "  classroom generate ASSIGNMENT --out DIR [--repo DIR] [--time-budget SECONDS] [--cuda-archs LIST] [--rubric FILE]\n"
    "      ASSIGNMENT is a stage (reduce4) or a run of stages (reduce1..reduce4). Writes DIR/student (the tree to\n"
    "      hand out), DIR/autograder and DIR/autograder.zip (for Gradescope); never hand out the autograder.\n"
    "      Its settings.sh holds Gradescope's time budget a submission (default 540 s, below Gradescope's\n"
    "      10 minutes) and the CUDA architectures to build for (90, or a list such as 80-real;90a; default\n"
    "      none: the GPU the image is built on). The rubric (points, thresholds, gating, partial credit) is\n"
    "      DIR/autograder/rubric.txt: the defaults, or --rubric FILE (the same format); the handouts' tables show it.\n"
    "  classroom pack AUTOGRADER_DIR [--out ZIP]\n"
    "      Writes the zip for Gradescope again from an edited autograder folder (default AUTOGRADER_DIR/../autograder.zip).\n"
    "  classroom grade --autograder DIR --submission DIR [--work DIR] [--results FILE] [--report FILE]\n"
    "                  [--seed S] [--jobs J] [--build-timeout SECONDS] [--test-timeout SECONDS] [--sanitizer PATH]\n"
    "                  [--trusted DIR] [--run-as USER] [--time-budget SECONDS] [--lock FILE]\n"
    "      Grades a student tree, or a folder holding the edited reduceN/kernel.cu files, on this machine's GPU.\n"
    "      As root, --run-as USER builds and runs the submission as USER, apart from the grader.\n"
    "      One grading at a time per machine: each holds --lock FILE (default as root /run/classroom/grading.lock).\n"
    "      Exit status: 0 full marks, 1 points lost, 2 usage error, 3 the grader could not grade.\n"
    "  classroom prepare --autograder DIR [--trusted DIR] [--jobs J]\n"
    "      Builds the grader's own programs (the judge, the reference workers) from the autograder alone;\n"
    "      Gradescope's setup.sh runs it, then removes their sources.\n"
    "  classroom batch --autograder DIR --submissions DIR --out DIR [--run-as USER] [--time-budget SECONDS]\n"
    "                  [--jobs J] [--allow-unisolated]\n"
    "      Grades each subfolder of --submissions (one per student) in a fresh work folder, each by a grade of its\n"
    "      own: OUT/<name>/report.txt and results.json, and OUT/scores.csv (exit status 3: some could not be graded).\n"
    "      It needs root and --run-as USER, or --allow-unisolated to run every student's code as the grader's user.\n"
    "  classroom selftest AUTOGRADER_DIR [--run-as USER]\n"
    "      Grades the autograder's reference (expects full marks) and the handed-out stub (expects 0) on this\n"
    "      machine's GPU. Exit status: 0 both hold, 1 one does not, 3 it could not tell (no GPU).\n"
    "  classroom similarity --autograder DIR --submissions DIR --out DIR\n"
    "      Exports every submission's kernels with the stub as base code, for JPlag (OUT/jplag) and MOSS\n"
    "      (OUT/moss); OUT/README.txt has the commands and the students missing a stage.\n"
    "  classroom check [--repo DIR] [--write-handouts]\n"
    "      Checks the solution markers of every stage, that no assignment's tree leaks a solution line, and that\n"
    "      every handout's rubric table is the default rubric's (--write-handouts rewrites them).\n";


struct Usage : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Args {
    std::vector<std::string> positional;
    std::map<std::string, std::string> named;
};

// `options` take a value (--out DIR); `flags` stand alone (--allow-unisolated) and read as "".
Args parse(int argc, char** argv, const std::vector<std::string>& options, const std::vector<std::string>& flags = {}) {
    Args args;
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (a.rfind("--", 0) != 0) {
            args.positional.push_back(a);
            continue;
        }
        if (std::find(flags.begin(), flags.end(), a) != flags.end()) {
            args.named[a] = "";
            continue;
        }
        if (std::find(options.begin(), options.end(), a) == options.end()) throw Usage("unknown option '" + a + "'");
        if (i + 1 >= argc) throw Usage(a + " needs a value");
        args.named[a] = argv[++i];
    }
    return args;
}

int number(const Args& args, const std::string& name, int fallback) {
    const auto it = args.named.find(name);
    if (it == args.named.end()) return fallback;
    // Digits only, and few enough for an int: std::stoi alone would take "10s" as 10.
    static const std::regex whole_number("0*[1-9][0-9]{0,8}");
    if (std::regex_match(it->second, whole_number)) return std::stoi(it->second);
    throw Usage(name + " takes a positive whole number, not '" + it->second + "'");
}

// --cuda-archs "90,80-real" or "90;80-real": CMake's list "90;80-real" ("" when not given).
std::string cuda_architectures(const Args& args) {
    const auto it = args.named.find("--cuda-archs");
    if (it == args.named.end()) return "";
    static const std::regex list(R"(([0-9]+[af]?(-real|-virtual)?)([;,][0-9]+[af]?(-real|-virtual)?)*)");
    if (!std::regex_match(it->second, list)) {
        throw Usage("--cuda-archs takes GPU architectures separated by ';' or ',' (90, 90a, 80-real), not '" + it->second + "'");
    }
    return std::regex_replace(it->second, std::regex(","), ";");
}

// --autograder DIR, checked: a folder classroom generate wrote.
fs::path autograder_folder(const std::string& given) {
    const fs::path autograder = fs::absolute(given);
    if (!fs::is_regular_file(autograder / "manifest.txt")) {
        throw Usage(autograder.string() + " is not an autograder folder (no manifest.txt)");
    }
    return autograder;
}

fs::path existing_folder(const Args& args, const std::string& name) {
    const fs::path folder = fs::absolute(args.named.at(name));
    if (!fs::is_directory(folder)) throw Usage(name + ": " + folder.string() + " is not a folder");
    return folder;
}

// --run-as USER, checked: an unprivileged user that exists, and a grader that is root.
std::string run_as_user(const Args& args) {
    if (!args.named.count("--run-as")) return "";
    const std::string user = args.named.at("--run-as");
    unsigned uid = 0, gid = 0;
    if (!user_ids(user, uid, gid)) throw Usage("--run-as: no user " + user);
    if (uid == 0) throw Usage("--run-as needs an unprivileged user, not root");
    if (geteuid() != 0) throw Usage("--run-as needs the grader to run as root");
    return user;
}

// This very program, to grade each submission in a child process of its own.
fs::path this_program(const char* argv0) {
    std::error_code error;
    const fs::path self = fs::read_symlink("/proc/self/exe", error);
    return error ? fs::absolute(argv0) : self;
}

bool has_all(const Args& args, const std::vector<std::string>& names) {
    for (const std::string& n : names) {
        if (!args.named.count(n)) return false;
    }
    return true;
}

int check(const fs::path& repo, bool write_handouts) {
    int problems = 0;
    // Each handout's rubric block is written from the default rubric (never by hand).
    const std::vector<int> stages = stages_in(repo);
    for (int stage : stages) {
        if (stage == 0) continue;  // the baseline: no assignment
        const fs::path handout = repo / "assignments" / (stage_name(stage) + ".md");
        const std::string text = read_file(handout);
        const std::string expected = handout_with_rubric(text, default_rubric(repo, Assignment{stage, stage}), stage);
        if (text == expected) continue;
        if (write_handouts) {
            write_file(handout, expected);
            std::cout << handout.string() << ": rubric block rewritten\n";
        } else {
            std::cout << handout.string() << ": the rubric block differs from the rubric (classroom check --write-handouts)\n";
            ++problems;
        }
    }
    for (int stage : stages) {
        const fs::path kernel = repo / stage_name(stage) / "kernel.cu";
        const MarkedFile file = parse_markers(read_file(kernel), kernel.string());
        for (const std::string& p : check_stage_regions(file, stage, stage_name(stage) + "/kernel.cu")) {
            std::cout << p << "\n";
            ++problems;
        }
    }
    for (int first = 1; first <= stages.back(); ++first) {
        for (int last = first; last <= stages.back(); ++last) {
            const Assignment a{first, last};
            const Tree tree = make_student_tree(repo, a);
            for (const Leak& leak : find_leaks(tree, solution_lines(repo, a))) {
                std::cout << a.name() << ": " << leak.path << ":" << leak.line << " leaks a solution line: " << leak.text << "\n";
                ++problems;
            }
            for (const Leak& leak : find_phrase_leaks(tree, solution_phrases(repo, a))) {
                std::cout << a.name() << ": " << leak.path << ":" << leak.line << " restates the solution's words: \"" << leak.text
                          << "\"\n";
                ++problems;
            }
        }
    }
    std::cout << (problems ? "classroom check: " + std::to_string(problems) + " problems\n"
                           : "classroom check: markers well formed, no assignment leaks a solution line or its header's words\n");
    return problems ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string command = argc > 1 ? argv[1] : "";
    try {
        if (command == "generate") {
            const Args args = parse(argc, argv, {"--out", "--repo", "--time-budget", "--cuda-archs", "--rubric"});
            if (args.positional.size() != 1 || !args.named.count("--out")) throw Usage("generate needs ASSIGNMENT and --out DIR");
            const Assignment a = parse_assignment(args.positional[0]);
            const fs::path repo = args.named.count("--repo") ? args.named.at("--repo") : CLASSROOM_REPOSITORY;
            AutograderSettings settings;
            settings.time_budget_seconds = number(args, "--time-budget", settings.time_budget_seconds);
            settings.cuda_architectures = cuda_architectures(args);
            if (args.named.count("--rubric")) {
                const fs::path file = args.named.at("--rubric");
                if (!fs::is_regular_file(file)) throw Usage("--rubric: no file " + file.string());
                try {
                    settings.rubric = read_rubric(read_file(file), a, default_rubric(repo, a));
                } catch (const std::invalid_argument& e) {
                    throw Usage(std::string("--rubric: ") + e.what());
                }
            }
            std::cout << generate(repo, a, args.named.at("--out"), settings) << "\n";
            return 0;
        }
        if (command == "pack") {
            const Args args = parse(argc, argv, {"--out"});
            if (args.positional.size() != 1) throw Usage("pack needs AUTOGRADER_DIR");
            const fs::path autograder = fs::absolute(args.positional[0]);
            // Next to the autograder folder, where generate wrote it ("dir/" has no name of its own).
            const fs::path zip = args.named.count("--out") ? fs::absolute(args.named.at("--out"))
                                                           : (autograder / "..").lexically_normal() / "autograder.zip";
            pack_autograder(autograder, zip);
            std::cout << "wrote " << zip.string() << " from " << autograder.string() << "\n";
            return 0;
        }
        if (command == "grade") {
            const Args args = parse(argc, argv, {"--autograder", "--submission", "--work", "--results", "--report", "--seed",
                                                 "--jobs", "--build-timeout", "--test-timeout", "--sanitizer", "--lock",
                                                 "--trusted", "--run-as", "--time-budget"});
            if (!args.positional.empty() || !args.named.count("--autograder") || !args.named.count("--submission")) {
                throw Usage("grade needs --autograder DIR and --submission DIR");
            }
            GradeOptions options;
            options.autograder = autograder_folder(args.named.at("--autograder"));
            options.submission = existing_folder(args, "--submission");
            options.work = fs::absolute(args.named.count("--work") ? fs::path(args.named.at("--work"))
                                                                   : fs::temp_directory_path() / "classroom-work");
            if (args.named.count("--results")) options.results = args.named.at("--results");
            if (args.named.count("--report")) options.report = args.named.at("--report");
            if (args.named.count("--sanitizer")) options.sanitizer = args.named.at("--sanitizer");
            if (args.named.count("--lock")) options.lock = args.named.at("--lock");
            if (args.named.count("--seed")) {
                try {
                    options.seed = std::stoull(args.named.at("--seed"));
                } catch (const std::exception&) {
                    throw Usage("--seed takes a whole number");
                }
            }
            options.jobs = number(args, "--jobs", 0);
            options.build_timeout = number(args, "--build-timeout", options.build_timeout);
            options.test_timeout = number(args, "--test-timeout", options.test_timeout);
            options.time_budget = number(args, "--time-budget", 0);
            if (args.named.count("--trusted")) options.trusted = fs::absolute(args.named.at("--trusted"));
            options.run_as = run_as_user(args);
            const Graded graded = grade(options);
            write_report(std::cout, graded.results);
            // A file that cannot be written whole (a full disk) ends the run with an error,
            // never a results.json cut short (run_autograder then records nothing).
            if (!options.report.empty()) {
                std::ostringstream report;
                write_report(report, graded.results);
                write_file(options.report, report.str());
            }
            if (!options.results.empty()) write_file(options.results, results_json(graded.results));
            return graded.exit_status;
        }
        if (command == "batch") {
            const Args args = parse(argc, argv, {"--autograder", "--submissions", "--out", "--run-as", "--time-budget", "--jobs"},
                                    {"--allow-unisolated"});
            if (!args.positional.empty() || !has_all(args, {"--autograder", "--submissions", "--out"})) {
                throw Usage("batch needs --autograder DIR, --submissions DIR and --out DIR");
            }
            BatchOptions options;
            options.classroom = this_program(argv[0]);
            options.autograder = autograder_folder(args.named.at("--autograder"));
            options.submissions = existing_folder(args, "--submissions");
            options.out = fs::absolute(args.named.at("--out"));
            options.run_as = run_as_user(args);
            options.time_budget = number(args, "--time-budget", 0);
            options.jobs = number(args, "--jobs", 0);
            std::string warning;
            const std::string refusal =
                isolation_refusal(geteuid() == 0, options.run_as, args.named.count("--allow-unisolated") > 0, warning);
            if (!refusal.empty()) throw Usage(refusal);
            if (!warning.empty()) std::fprintf(stderr, "classroom: %s\n", warning.c_str());
            return grade_batch(options, std::cout);
        }
        if (command == "selftest") {
            const Args args = parse(argc, argv, {"--run-as"});
            if (args.positional.size() != 1) throw Usage("selftest needs the autograder folder: classroom selftest DIR");
            return selftest(this_program(argv[0]), autograder_folder(args.positional[0]), run_as_user(args), std::cout);
        }
        if (command == "similarity") {
            const Args args = parse(argc, argv, {"--autograder", "--submissions", "--out"});
            if (!args.positional.empty() || !has_all(args, {"--autograder", "--submissions", "--out"})) {
                throw Usage("similarity needs --autograder DIR, --submissions DIR and --out DIR");
            }
            const fs::path out = fs::absolute(args.named.at("--out"));
            const std::vector<std::string> missing = export_for_similarity(
                autograder_folder(args.named.at("--autograder")), existing_folder(args, "--submissions"), out);
            std::cout << "exported for JPlag and MOSS in " << out.string() << "; the commands, and the kernels "
                      << "missing (" << missing.size() << "), are in README.txt\n";
            return 0;
        }
        if (command == "prepare") {
            const Args args = parse(argc, argv, {"--autograder", "--trusted", "--jobs"});
            if (!args.named.count("--autograder")) throw Usage("prepare needs --autograder DIR");
            GradeOptions options;
            options.autograder = fs::absolute(args.named.at("--autograder"));
            options.trusted = fs::absolute(args.named.count("--trusted") ? fs::path(args.named.at("--trusted"))
                                                                         : fs::temp_directory_path() / "classroom-work/trusted");
            options.jobs = number(args, "--jobs", 0);
            const std::string error = prepare(options);
            if (!error.empty()) {
                std::fprintf(stderr, "classroom: %s\n", error.c_str());
                return 3;
            }
            std::cout << "the judge and the reference workers are ready in " << options.trusted.string() << "\n";
            return 0;
        }
        if (command == "check") {
            const Args args = parse(argc, argv, {"--repo"}, {"--write-handouts"});
            if (!args.positional.empty()) throw Usage("check takes no '" + args.positional[0] + "'");
            return check(args.named.count("--repo") ? fs::path(args.named.at("--repo")) : fs::path(CLASSROOM_REPOSITORY),
                         args.named.count("--write-handouts") > 0);
        }
        if (command == "--help" || command == "-h" || command == "help") {
            std::cout << kUsage;
            return 0;
        }
        throw Usage(command.empty() ? "a command is needed" : "unknown command '" + command + "'");
    } catch (const Usage& e) {
        std::fprintf(stderr, "classroom: %s (see classroom --help)\n", e.what());
        return 2;
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "classroom: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "classroom: error: %s\n", e.what());
        return 3;
    }
}
