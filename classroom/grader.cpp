#include "grader.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "assignment.h"
#include "generator.h"
#include "markers.h"
#include "process.h"
#include "sha256.h"

namespace classroom {

namespace {

// The last `count` lines of a text.
std::string last_lines(const std::string& text, std::size_t count) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    std::string out;
    for (std::size_t i = lines.size() > count ? lines.size() - count : 0; i < lines.size(); ++i) out += lines[i] + "\n";
    return out;
}

// The lines of a text that match `pattern`, at most `count` of them, and how many there were.
std::string matching_lines(const std::string& text, const std::regex& pattern, std::size_t count) {
    std::istringstream in(text);
    std::string out;
    std::size_t found = 0;
    for (std::string line; std::getline(in, line);) {
        if (!std::regex_search(line, pattern)) continue;
        if (found++ < count) out += line + "\n";
    }
    if (found > count) out += "... and " + std::to_string(found - count) + " more\n";
    return out;
}

// The compiler's complaints, for the student: the lines that say error, with the one after.
std::string compiler_errors(const std::string& log) {
    static const std::regex error(R"(error|Error|undefined reference)");
    std::istringstream in(log);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    std::string out;
    std::size_t shown = 0;
    for (std::size_t i = 0; i < lines.size() && shown < 60; ++i) {
        if (!std::regex_search(lines[i], error)) continue;
        out += lines[i] + "\n";
        if (i + 1 < lines.size()) out += lines[i + 1] + "\n";
        shown += 2;
    }
    return out.empty() ? last_lines(log, 40) : out;
}

std::string fixed(double value, int decimals) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals, value);
    return text;
}

std::string utc_now() {
    const std::time_t now = std::time(nullptr);
    char text[64];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    return text;
}

// One stage's median time and its spread over the rounds, from grade_reduceN --perf.
struct Timing {
    double median = 0, min = 0, max = 0;
    bool verified = false;
};

std::map<std::string, Timing> parse_perf(const std::string& output) {
    static const std::regex line(R"(^PERF (\w+) median_ms=([0-9.eE+-]+) min_ms=([0-9.eE+-]+) max_ms=([0-9.eE+-]+) (verified|FAILED))");
    std::map<std::string, Timing> timings;
    std::istringstream in(output);
    for (std::string text; std::getline(in, text);) {
        std::smatch m;
        if (std::regex_search(text, m, line)) {
            timings[m[1]] = Timing{std::stod(m[2]), std::stod(m[3]), std::stod(m[4]), m[5] == "verified"};
        }
    }
    return timings;
}

struct Grader {
    Grader(const GradeOptions& o, const Assignment& a) : options(o), assignment(a) {}
    const GradeOptions& options;
    Assignment assignment;
    fs::path tree, build, grading;
    std::string sanitizer;
    std::uint64_t seed = 0;
    GradeResults results;
    bool infrastructure_failed = false;

    std::string exe(const std::string& name) const { return (build / "bin" / name).string(); }

    void add(const std::string& name, double max, bool passed, const std::string& output,
             const std::string& visibility = "visible") {
        results.tests.push_back(TestResult{name, passed ? max : 0, max, passed, trimmed(output), visibility});
    }

    // Nothing earned: every test of a stage listed with zero, so the maximum stays visible.
    void add_zeros(int stage, const std::string& why) {
        const std::string name = stage_name(stage);
        add(name + ": public tests", Rubric::kPublicTests, false, why);
        for (const std::string& group : hidden_groups()) {
            add(name + ": hidden cases, " + group, Rubric::kHiddenGroup, false, why, "after_due_date");
        }
        add(name + ": racecheck", Rubric::kRacecheck, false, why);
        add(name + ": memcheck", Rubric::kMemcheck, false, why);
        add(name + ": performance", Rubric::kPerformance, false, why);
    }

    ProcessResult run(const std::vector<std::string>& argv, int timeout) {
        return run_process(argv, "", timeout);
    }

    void sync_tree(const std::map<std::string, std::string>& editable) {
        const fs::path pristine = options.autograder / "student_tree";
        std::set<std::string> wanted;
        for (const std::string& path : list_files(pristine)) {
            wanted.insert(path);
            const auto it = editable.find(path);
            write_if_changed(tree / path, it != editable.end() ? it->second : read_file(pristine / path));
            const auto perms = fs::status(pristine / path).permissions();
            fs::permissions(tree / path, perms, fs::perm_options::replace);
        }
        for (const std::string& path : list_files(tree)) {
            if (!wanted.count(path)) fs::remove(tree / path);  // left by an earlier grading
        }
    }

    bool build_everything(std::string& log) {
        const std::vector<std::string> configure = {"cmake", "-S", tree.string(), "-B", build.string(),
                                                    "-DCMAKE_BUILD_TYPE=Release", "-DREDUCTION_GRADING_DIR=" + grading.string()};
        ProcessResult configured = run(configure, 600);
        if (configured.exit_code != 0) {
            log = configured.timed_out ? "configure timed out\n" : "configure failed:\n" + last_lines(configured.output, 40);
            return false;
        }
        const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
        std::vector<std::string> make = {"cmake", "--build", build.string(), "--parallel",
                                         std::to_string(options.jobs > 0 ? options.jobs : static_cast<int>(cores)),
                                         "--target", "gpu_tests"};
        for (int k : assignment.stages()) {
            make.push_back(stage_name(k));
            make.push_back("grade_" + stage_name(k));
        }
        ProcessResult built = run(make, options.build_timeout);
        if (built.timed_out) {
            log = "the build did not finish in " + std::to_string(options.build_timeout) + " s";
            return false;
        }
        if (built.exit_code != 0) {
            log = "the build failed; the compiler says:\n" + compiler_errors(built.output);
            return false;
        }
        return true;
    }

    // "" when a GPU is there; else why not.
    std::string gpu_description(int stage, bool& ok) {
        const ProcessResult info = run({exe("grade_" + stage_name(stage)), "--device"}, 120);
        ok = info.exit_code == 0;
        return ok ? last_lines(info.output, 1) : "no usable GPU: " + last_lines(info.output, 3);
    }

    bool public_tests(int stage) {
        const std::string name = stage_name(stage);
        std::string filter = "Stages/*/" + name + "_*";
        if (stage == 7) filter += ":Reduce7*";
        const ProcessResult r = run({exe("gpu_tests"), "--gtest_filter=" + filter, "--gtest_brief=1"}, options.test_timeout);
        std::string output;
        bool passed = r.exit_code == 0 && !r.timed_out;
        static const std::regex failure(R"(Failure|FAILED|not implemented|Expected|: got )");
        if (r.timed_out) {
            output = "the public tests did not finish in " + std::to_string(options.test_timeout) + " s";
        } else if (r.output.find("[  SKIPPED ]") != std::string::npos) {
            output = "the public tests were skipped: this machine has no usable GPU";
            passed = false;
            infrastructure_failed = true;
        } else if (!passed) {
            output = matching_lines(r.output, failure, 25);
        } else {
            output = "every public test of " + name + " passed";
        }
        add(name + ": public tests (gpu_tests --gtest_filter=" + filter + ")", Rubric::kPublicTests, passed, output);
        return passed;
    }

    bool hidden_group(int stage, const std::string& group) {
        const std::string name = stage_name(stage);
        const ProcessResult r = run({exe("grade_" + name), "--hidden", group, "--seed", std::to_string(seed), "--min-block",
                                     std::to_string(grading_of(stage).min_block)},
                                    options.test_timeout);
        static const std::regex fail(R"(^FAIL|^SUMMARY)");
        std::string output;
        const bool passed = r.exit_code == 0 && !r.timed_out;
        if (r.timed_out) {
            static const std::regex last_case(R"(^CASE .*)");
            std::string hung;
            std::istringstream in(r.output);
            for (std::string line; std::getline(in, line);) {
                if (std::regex_match(line, last_case)) hung = line.substr(5);
            }
            output = "did not finish in " + std::to_string(options.test_timeout) + " s; the last case started: " + hung;
        } else {
            output = matching_lines(r.output, fail, 12);
            if (output.empty()) output = last_lines(r.output, 10);
        }
        add(name + ": hidden cases, " + group, Rubric::kHiddenGroup, passed, output, "after_due_date");
        return passed;
    }

    void sanitizer_test(int stage, const std::string& tool, double points, bool correct) {
        const std::string name = stage_name(stage);
        const std::string title = name + ": " + tool;
        if (!correct) {
            add(title, points, false, "not run: the stage must pass every public and hidden test first");
            return;
        }
        if (sanitizer.empty()) {
            add(title, points, false, "compute-sanitizer not found on the grading machine (it ships with the CUDA Toolkit)");
            infrastructure_failed = true;
            return;
        }
        // racecheck: a small input keeps it quick; memcheck: an odd size, so every partial
        // block and tail runs.
        const std::string n = tool == "racecheck" ? "2^16" : "1000003";
        std::vector<std::string> argv = {sanitizer, "--tool", tool};
        if (tool == "racecheck") argv.insert(argv.end(), {"--racecheck-report", "analysis"});
        argv.insert(argv.end(), {exe(name), "--no-baseline", "--n", n, "--type", "int", "--iters", "1", "--warmup", "0",
                                 "--seed", std::to_string(seed % 1000000)});
        const ProcessResult r = run(argv, options.test_timeout);
        const std::regex summary(tool == "racecheck" ? R"(RACECHECK SUMMARY: (\d+) hazard)" : R"(ERROR SUMMARY: (\d+) error)");
        std::smatch m;
        const bool found = std::regex_search(r.output, m, summary);
        const bool clean = found && std::stoi(m[1]) == 0 && r.exit_code == 0;
        std::string output;
        if (r.timed_out) {
            output = tool + " did not finish in " + std::to_string(options.test_timeout) + " s";
        } else if (!found) {
            output = tool + " printed no summary (exit " + std::to_string(r.exit_code) + "):\n" + last_lines(r.output, 15);
        } else {
            static const std::regex detail(R"(hazard|Hazard|Invalid|error|SUMMARY)");
            output = clean ? m.str(0) + "s, at n = " + n : matching_lines(r.output, detail, 15);
        }
        add(title, points, clean, output);
    }

    void performance(int stage, bool correct) {
        const std::string name = stage_name(stage);
        const StageGrading& grading = grading_of(stage);
        const std::string title = name + ": performance (at most " + fixed(grading.max_time_ratio, 2) +
                                  "x the reference solution's time)";
        if (!correct) {
            add(title, Rubric::kPerformance, false, "not measured: the stage must pass every public and hidden test first");
            return;
        }
        const ProcessResult r = run({exe("grade_" + name), "--perf", "--seed", std::to_string(seed)}, options.test_timeout);
        const auto t = parse_perf(r.output);
        if (r.exit_code != 0 || !t.count("submission") || !t.count("reference") || !t.count("previous")) {
            add(title, Rubric::kPerformance, false,
                (r.timed_out ? std::string("timed out\n") : std::string()) + last_lines(r.output, 12));
            return;
        }
        const Timing& sub = t.at("submission");
        const Timing& ref = t.at("reference");
        const Timing& prev = t.at("previous");
        const double vs_reference = sub.median / ref.median;
        const double vs_previous = sub.median / prev.median;
        const bool passed = sub.verified && vs_reference <= grading.max_time_ratio;
        std::ostringstream out;
        out << "median time " << fixed(sub.median * 1000, 1) << " us (" << fixed(sub.min * 1000, 1) << " - "
            << fixed(sub.max * 1000, 1) << " over the rounds): " << fixed(vs_reference, 3)
            << "x the reference solution's " << fixed(ref.median * 1000, 1) << " us and " << fixed(vs_previous, 3)
            << "x the previous stage's (" << stage_name(stage - 1) << ") " << fixed(prev.median * 1000, 1)
            << " us, on this GPU.\nFull points at or below " << fixed(grading.max_time_ratio, 2)
            << "x the reference; on this GPU the previous stage takes " << fixed(prev.median / ref.median, 3)
            << "x the reference's time.";
        if (!sub.verified) out << "\nA timed run gave a wrong sum: no points.";
        add(title, Rubric::kPerformance, passed, out.str());
    }

    void grade_stage(int stage) {
        bool correct = public_tests(stage);
        for (const std::string& group : hidden_groups()) correct = hidden_group(stage, group) && correct;
        sanitizer_test(stage, "racecheck", Rubric::kRacecheck, correct);
        sanitizer_test(stage, "memcheck", Rubric::kMemcheck, correct);
        performance(stage, correct);
    }
};

std::string find_sanitizer(const std::string& given) {
    if (!given.empty()) return find_program(given);
    std::string found = find_program("compute-sanitizer");
    if (found.empty() && access("/usr/local/cuda/bin/compute-sanitizer", X_OK) == 0) {
        found = "/usr/local/cuda/bin/compute-sanitizer";
    }
    return found;
}

}  // namespace

std::string check_submission(const fs::path& autograder, const fs::path& submission,
                             std::map<std::string, std::string>& editable) {
    const auto entries = parse_manifest(read_file(autograder / "manifest.txt"));
    std::vector<std::string> editable_paths;
    for (const ManifestEntry& e : entries) {
        if (e.role == "editable") editable_paths.push_back(e.path);
    }
    std::string allowed;
    for (const std::string& p : editable_paths) allowed += (allowed.empty() ? "" : ", ") + p;
    for (const ManifestEntry& e : entries) {
        const fs::path file = submission / e.path;
        if (!fs::is_regular_file(file)) continue;  // not submitted: the handed-out file is used
        const std::string text = read_file(file);
        if (e.role == "editable") {
            editable[e.path] = text;
        } else if (sha256_hex(text) != e.hash) {
            return "refused: " + e.path + " differs from the file handed out; only " + allowed +
                   " may change. Score 0: submit the handed-out files unchanged.";
        }
    }
    // A Gradescope upload of the one file of a one-stage assignment arrives without its folder.
    if (editable.empty() && editable_paths.size() == 1 && fs::is_regular_file(submission / "kernel.cu")) {
        editable[editable_paths[0]] = read_file(submission / "kernel.cu");
    }
    for (const std::string& p : editable_paths) {
        if (!editable.count(p)) return "refused: the submission has no " + p + ". Score 0.";
    }
    return "";
}

Graded grade(const GradeOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    Graded graded;
    Grader g(options, parse_assignment(trimmed(read_file(options.autograder / "assignment.txt"))));
    g.tree = options.work / "tree";
    g.build = options.work / "build";
    g.grading = fs::absolute(options.autograder / "grading");
    g.sanitizer = find_sanitizer(options.sanitizer);
    g.seed = options.seed;
    if (g.seed == 0) {
        std::random_device device;
        g.seed = (std::uint64_t(device()) << 32 | device()) % 1000000000000ULL + 1;
    }
    std::ostringstream header;
    header << "Assignment " << g.assignment.name() << ", graded " << utc_now() << ", seed " << g.seed << ".";

    std::map<std::string, std::string> editable;
    const std::string refusal = check_submission(options.autograder, options.submission, editable);
    if (!refusal.empty()) {
        g.results.output = header.str() + "\n" + refusal;
        for (int k : g.assignment.stages()) g.add_zeros(k, refusal);
        graded.results = g.results;
        graded.exit_status = 1;
        return graded;
    }
    g.sync_tree(editable);
    std::string build_log;
    const bool built = g.build_everything(build_log);
    for (int k : g.assignment.stages()) {
        g.add(stage_name(k) + ": build", 0, built, built ? "built" : build_log);
    }
    if (!built) {
        for (int k : g.assignment.stages()) g.add_zeros(k, "not run: the build failed");
        header << "\nThe build failed: see the build test's output for the compiler's errors.";
    } else {
        bool gpu = false;
        const std::string device = g.gpu_description(g.assignment.first, gpu);
        header << "\nGPU: " << device;
        if (!gpu) {
            for (int k : g.assignment.stages()) g.add_zeros(k, "not graded: " + device);
            g.infrastructure_failed = true;
        } else {
            for (int k : g.assignment.stages()) g.grade_stage(k);
        }
    }
    g.results.output = header.str();
    g.results.execution_time =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    graded.results = g.results;
    graded.exit_status = g.infrastructure_failed ? 3 : (g.results.score() == g.results.max_score() ? 0 : 1);
    return graded;
}

}  // namespace classroom
