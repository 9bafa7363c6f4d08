#include "grader.h"

#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "assignment.h"
#include "compiled_check.h"
#include "generator.h"
#include "markers.h"
#include "process.h"
#include "sha256.h"
#include "source_check.h"
#include "student_user.h"

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

// One program's median time and its spread over the rounds, from judge --perf.
struct Timing {
    double median = 0, min = 0, max = 0;
    bool verified = false;
};

// Also "fixed": the protocol's cost per request that the judge subtracted (FIXED line).
std::map<std::string, Timing> parse_perf(const std::string& output) {
    static const std::regex line(R"(^PERF (\w+) median_ms=([0-9.eE+-]+) min_ms=([0-9.eE+-]+) max_ms=([0-9.eE+-]+) (verified|FAILED))");
    static const std::regex fixed_line(R"(^FIXED ms=([0-9.eE+-]+) min_ms=([0-9.eE+-]+) max_ms=([0-9.eE+-]+))");
    std::map<std::string, Timing> timings;
    std::istringstream in(output);
    for (std::string text; std::getline(in, text);) {
        std::smatch m;
        if (std::regex_search(text, m, line)) {
            timings[m[1]] = Timing{std::stod(m[2]), std::stod(m[3]), std::stod(m[4]), m[5] == "verified"};
        } else if (std::regex_search(text, m, fixed_line)) {
            timings["fixed"] = Timing{std::stod(m[1]), std::stod(m[2]), std::stod(m[3]), true};
        }
    }
    return timings;
}

// The lines of the judge's output that start with `prefix`, the prefix cut off.
std::vector<std::string> lines_starting(const std::string& output, const std::string& prefix) {
    std::vector<std::string> found;
    std::istringstream in(output);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind(prefix, 0) == 0) found.push_back(line.substr(prefix.size()));
    }
    return found;
}

// The headers of a stage's folder in the handed-out tree (a submission may include them).
std::set<std::string> local_headers(const fs::path& pristine, int stage) {
    std::set<std::string> headers;
    for (const std::string& path : list_files(pristine)) {
        const std::string folder = stage_name(stage) + "/";
        if (path.rfind(folder, 0) == 0 && path.find('/', folder.size()) == std::string::npos &&
            (ends_with(path, ".cuh") || ends_with(path, ".h"))) {
            headers.insert(path.substr(folder.size()));
        }
    }
    return headers;
}

// Where the judge and the reference workers are built: --trusted, or <work>/trusted.
fs::path trusted_folder(const GradeOptions& options) {
    return options.trusted.empty() ? options.work / "trusted" : options.trusted;
}

// "reduce3;reduce4": the stages first..last, as a CMake list.
std::string stage_list(int first, int last) {
    std::string list;
    for (int k = first; k <= last; ++k) list += (list.empty() ? "" : ";") + stage_name(k);
    return list;
}

struct Grader {
    Grader(const GradeOptions& o, const Assignment& a) : options(o), assignment(a), rubric(default_rubric(a)) {}
    const GradeOptions& options;
    Assignment assignment;
    GradingRubric rubric;  // the autograder's rubric.txt (the defaults where it has none)
    fs::path tree, build, logs, trusted;
    std::string sanitizer, judge;
    std::uint64_t seed = 0;
    GradeResults results;
    bool infrastructure_failed = false;
    std::string untrusted_machine;  // why the machine's state makes the grading untrustworthy ("" when it does not)
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    int line_number = 0;  // of the current stage's rubric lines
    std::string tests_unbuilt;  // why the tree's own tests did not build ("" when they did)

    // --jobs, or the machine's cores.
    std::string build_jobs() const {
        const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
        return std::to_string(options.jobs > 0 ? options.jobs : static_cast<int>(cores));
    }

    std::string worker_of(const fs::path& build_dir, int stage) const {
        return (build_dir / "bin" / ("grade_worker_" + stage_name(stage))).string();
    }

    // Seconds left of the time budget (a large number when there is none).
    int remaining() const {
        if (options.time_budget <= 0) return 1 << 30;
        const double used = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return static_cast<int>(options.time_budget - used);
    }
    int step_timeout(int wanted) const { return std::max(1, std::min(wanted, remaining() - 15)); }
    bool out_of_time() const { return remaining() < 30; }
    std::string out_of_time_text() const {
        return "not run: the grading's time budget (" + std::to_string(options.time_budget) + " s) ran out";
    }

    void add(int stage, const std::string& name, double max, bool passed, const std::string& output,
             std::vector<std::string> tags, const std::string& visibility = "visible") {
        add_points(stage, name, max, passed ? max : 0, output, std::move(tags), visibility);
    }
    // A line that may earn part of its points (performance, with partial credit).
    void add_points(int stage, const std::string& name, double max, double points, const std::string& output,
                    std::vector<std::string> tags, const std::string& visibility = "visible") {
        tags.insert(tags.begin(), stage_name(stage));
        TestResult t{std::to_string(stage) + "." + std::to_string(++line_number), stage_name(stage) + ": " + name,
                     points, max, points >= max, trimmed(output), visibility, tags};
        results.tests.push_back(t);
    }

    // Nothing earned: every line of a stage listed with zero, so the maximum stays visible.
    void add_zeros(int stage, const std::string& why) {
        add(stage, "public cases", rubric.public_cases, false, why, {"public"});
        for (const std::string& group : hidden_groups()) {
            add(stage, "hidden cases, " + group, rubric.hidden_group, false, why, {"hidden", group}, "after_due_date");
        }
        add(stage, "racecheck", rubric.racecheck, false, why, {"sanitizer"});
        add(stage, "memcheck", rubric.memcheck, false, why, {"sanitizer"});
        add(stage, "performance", rubric.performance, false, why, {"performance"});
    }

    // A step that runs the student's code (the build, the tree's tests): as the student's
    // user when there is one, and nothing it leaves behind survives the step.
    ProcessResult run_student(const std::vector<std::string>& argv, int timeout, const std::string& directory = "",
                              std::size_t most_output = RunSpec{}.most_output) {
        RunSpec spec;
        spec.directory = directory;
        spec.most_output = most_output;
        spec.timeout_seconds = step_timeout(timeout);
        spec.run_as = options.run_as;
        ProcessResult r = run_process(argv, spec);
        end_step();
        return r;
    }

    // After every step: nothing of the student's user lives on, and nothing it wrote where
    // a later step could read it stays (the shared folders, System V IPC).
    // A process of the user that outlives SIGKILL could still write into a later step, so
    // the grading is then not trusted (exit 3: could not grade).
    void end_step() {
        const std::string problem = kill_leftovers(options.run_as);
        if (!problem.empty() && untrusted_machine.empty()) untrusted_machine = problem;
        remove_files_of(options.run_as);
    }
    // The grading can be trusted only while the user's task slots are free enough (they
    // are counted across the whole host, student_user.h): checked before anything of the
    // student's runs and again at the end. Returns the reason when it cannot ("" if it can).
    std::string machine_untrusted() {
        if (untrusted_machine.empty() && !task_slots_free(options.run_as)) {
            untrusted_machine = "fewer than " + std::to_string(student_user::kTasksAGradingNeeds) + " of the " +
                                std::to_string(student_user::kTasks) + " task slots of the user " + options.run_as +
                                " are free: processes of the same user id elsewhere on this host (another grading's "
                                "container?) hold them, so a build or a worker could fail for a reason not the student's";
        }
        return untrusted_machine;
    }

    // The judge: ours, run as the grader's own user; the seed reaches it through its
    // environment, which only that user can read (a command line is readable by all).
    ProcessResult run_judge(std::vector<std::string> args, int timeout) {
        args.insert(args.begin(), judge);
        args.insert(args.end(), {"--logs", logs.string(), "--min-block", std::to_string(current_min_block)});
        if (!options.run_as.empty()) args.insert(args.end(), {"--run-as", options.run_as});
        RunSpec spec;
        spec.timeout_seconds = step_timeout(timeout);
        spec.extra_env = {"CLASSROOM_SEED=" + std::to_string(seed)};
        ProcessResult r = run_process(args, spec);
        end_step();
        // The workers' logs have been read back (their last lines are in the judge's
        // output): none stays on the disk, however much a submission printed.
        std::error_code ignored;
        for (const auto& entry : fs::directory_iterator(logs, ignored)) fs::remove(entry.path(), ignored);
        // The judge's own verdict on itself: its exit status, never a text search of an output
        // that quotes the student's (a launcher's message, a kernel's name in a sanitizer line).
        if (r.exit_code == 3) infrastructure_failed = true;
        return r;
    }
    int current_min_block = 32;

    // ------------------------------------------------------------ the trusted programs
    // The judge, and the workers of the instructor's solutions (the reference and the
    // previous stage), built from the autograder alone: no file of the submission is in
    // these builds. On Gradescope setup.sh builds them (classroom prepare) and then removes
    // their sources; "" when they are ready, else why not.
    std::string prepare_trusted() {
        const fs::path source = options.autograder;
        const fs::path judge_bin = trusted / "judge-build" / "judge";
        judge = judge_bin.string();
        const fs::path reference_build = trusted / "reference-build";
        bool ready = fs::exists(judge_bin) && fs::exists(instructor_symbols_file());
        for (int k = assignment.first - 1; k <= assignment.last; ++k) {
            ready = ready && fs::exists(worker_of(reference_build, k));
        }
        if (!fs::exists(source / "judge" / "judge.cu") || !fs::exists(source / "solution")) {
            return ready ? "" : "the judge and the reference workers were never built, and their sources are gone";
        }
        const std::string jobs = build_jobs();
        ProcessResult r = run_process({"cmake", "-S", (source / "judge").string(), "-B", (trusted / "judge-build").string(),
                                       "-DCMAKE_BUILD_TYPE=Release"}, "", 600);
        if (r.exit_code == 0) r = run_process({"cmake", "--build", (trusted / "judge-build").string(), "--parallel", jobs}, "", options.build_timeout);
        if (r.exit_code != 0) return "the judge did not build:\n" + last_lines(r.output, 30);

        // The reference tree: the handed-out tree with the instructor's solutions in place.
        const fs::path reference_tree = trusted / "reference-tree";
        std::map<std::string, std::string> solutions;
        for (const std::string& path : list_files(source / "solution")) solutions[path] = read_file(source / "solution" / path);
        sync_files(source / "student_tree", reference_tree, solutions);
        const std::string workers = stage_list(assignment.first - 1, assignment.last);
        std::vector<std::string> make = {"cmake", "--build", reference_build.string(), "--parallel", jobs, "--target"};
        for (int k = assignment.first - 1; k <= assignment.last; ++k) make.push_back("grade_worker_" + stage_name(k));
        r = run_process({"cmake", "-S", reference_tree.string(), "-B", reference_build.string(), "-DCMAKE_BUILD_TYPE=Release",
                         "-DREDUCTION_BUILD_TESTS=OFF", "-DREDUCTION_GRADING_DIR=" + (source / "grading").string(),
                         "-DGRADING_WORKERS=" + workers}, "", 600);
        if (r.exit_code == 0) r = run_process(make, "", options.build_timeout);
        if (r.exit_code != 0) return "the reference workers did not build:\n" + last_lines(r.output, 30);
        // What the instructor's own kernels call (the harness among it): the compiled check
        // allows every submission the same.
        std::string symbols;
        for (int k = assignment.first - 1; k <= assignment.last; ++k) {
            const std::string name = stage_name(k);
            const fs::path object = reference_build / "CMakeFiles" / (name + "_kernel.dir") / name / "kernel.cu.o";
            RunSpec whole;
            whole.timeout_seconds = 120;
            whole.most_output = std::size_t{64} << 20;
            const ProcessResult nm = run_process({"nm", "-u", "-P", object.string()}, whole);
            if (nm.output_cut) return "nm's list of " + object.string() + " is too long to read";
            if (nm.exit_code != 0) return "nm could not read " + object.string() + ":\n" + last_lines(nm.output, 5);
            symbols += nm.output;
        }
        write_file(instructor_symbols_file(), symbols);
        return "";
    }
    fs::path instructor_symbols_file() const { return trusted / "instructor_symbols.txt"; }

    // Makes `to` hold exactly the files of `pristine`, with `replaced` (path -> text) in
    // place of some; unchanged files keep their timestamps, so rebuilds are incremental.
    static void sync_files(const fs::path& pristine, const fs::path& to, const std::map<std::string, std::string>& replaced) {
        // A link left in a folder the student's user owned would make the grader write
        // through it: remove every link first (the grader is then the only writer there).
        std::error_code ignored;
        std::vector<fs::path> links;
        for (auto it = fs::recursive_directory_iterator(to, ignored); it != fs::recursive_directory_iterator(); it.increment(ignored)) {
            if (it->is_symlink(ignored)) links.push_back(it->path());
        }
        for (const fs::path& link : links) fs::remove(link, ignored);
        std::set<std::string> wanted;
        for (const std::string& path : list_files(pristine)) {
            wanted.insert(path);
            const auto it = replaced.find(path);
            write_if_changed(to / path, it != replaced.end() ? it->second : read_file(pristine / path));
            fs::permissions(to / path, fs::status(pristine / path).permissions(), fs::perm_options::replace);
        }
        for (const auto& [path, text] : replaced) {
            if (!wanted.count(path)) {
                write_if_changed(to / path, text);
                wanted.insert(path);
            }
        }
        for (const std::string& path : list_files(to)) {
            if (!wanted.count(path)) fs::remove(to / path);  // left by an earlier grading
        }
    }

    // ------------------------------------------------------------ the student's build
    bool configure_submission(std::string& log) {
        // The worker's sources, where the student's user can read them (on Gradescope the
        // autograder folder is root's alone).
        const fs::path grading = options.work / "grading";
        std::map<std::string, std::string> none;
        sync_files(options.autograder / "grading", grading, none);
        const std::string workers = stage_list(assignment.first, assignment.last);
        for (const fs::path& p : {tree, build, grading}) {
            fs::create_directories(p);
            give_to(p.string(), options.run_as);
        }
        fs::create_directories(logs);  // the grader's: the judge writes the workers' logs there
        ProcessResult configured = run_student({"cmake", "-S", tree.string(), "-B", build.string(), "-DCMAKE_BUILD_TYPE=Release",
                                                "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",  // the compiled check's flags
                                                "-DREDUCTION_GRADING_DIR=" + grading.string(), "-DGRADING_WORKERS=" + workers},
                                               600);
        if (configured.exit_code != 0) {
            log = configured.timed_out ? "configure timed out\n" : "configure failed:\n" + last_lines(configured.output, 40);
            return false;
        }
        return true;
    }
    // Each stage's worker is built on its own (its kernel.cu and the harness, no other stage),
    // so that a link error costs only that stage (`unbuilt`: stage -> the compiler's words);
    // then the tree's own tests, which link every stage and earn nothing: their failure to
    // build is told in their feedback line (`tests_unbuilt`), never a lost stage. False when
    // the build's time ran out before every worker was built.
    bool build_submission(std::map<int, std::string>& unbuilt, std::string& log) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(options.build_timeout);
        auto build_target = [&](const std::string& target) {
            const auto left = std::chrono::duration_cast<std::chrono::seconds>(deadline - std::chrono::steady_clock::now());
            return run_student({"cmake", "--build", build.string(), "--parallel", build_jobs(), "--target", target},
                               std::max(1, static_cast<int>(left.count())));
        };
        for (int k : assignment.stages()) {
            const ProcessResult built = build_target("grade_worker_" + stage_name(k));
            if (built.timed_out) {
                log = "the build did not finish in time";
                return false;
            }
            if (built.exit_code != 0) {
                unbuilt[k] = "the build of " + stage_name(k) + "'s worker failed; the compiler says:\n" +
                             compiler_errors(built.output);
            }
        }
        const ProcessResult tests = build_target("gpu_tests");
        if (tests.timed_out) tests_unbuilt = "the tree's tests did not finish building in time";
        else if (tests.exit_code != 0) {
            tests_unbuilt = "the tree's tests (gpu_tests, which links every stage) did not build; the compiler says:\n" +
                            compiler_errors(tests.output);
        }
        // Built: the student's user may run what is there, no longer write it (a worker could
        // otherwise leave a note for a later step in the build folder).
        if (!options.run_as.empty()) {
            for (const fs::path& p : {tree, build, options.work / "grading"}) give_to(p.string(), "root");
        }
        return true;
    }

    // ------------------------------------------------------------ the compiled check
    // Each submitted kernel.cu compiled again with the tree's own flags, as the student's
    // user, keeping what the compiler read and made (compiled_check.h); read here only once
    // every process of that user is gone, and only as plain files of that user's.
    // Checks each stage not yet refused (`skip`) and returns stage -> why it is refused; sets
    // `infrastructure` when the check itself could not run. A file that does not compile
    // here is refused too: it is never built, so a file that compiles differently from one
    // run to the next gains nothing.
    std::map<int, std::string> compiled_problems(const SourcePolicy& policy, const std::map<int, std::string>& skip,
                                                 std::string& infrastructure) {
        std::map<int, std::string> refused;
        const fs::path compiled = options.work / "compiled";
        fs::remove_all(compiled);
        fs::create_directories(compiled);
        std::set<std::string> instructor = symbol_names(read_file(instructor_symbols_file()));
        const std::string commands = read_owned(build / "compile_commands.json");
        for (int k : assignment.stages()) {
            if (skip.count(k)) continue;
            const std::string path = stage_name(k) + "/kernel.cu";
            const fs::path keep = compiled / stage_name(k);
            fs::create_directories(keep);
            give_to(keep.string(), options.run_as);
            std::string directory;
            const fs::path source = fs::weakly_canonical(tree / path);
            const std::vector<std::string> command = compile_command(commands, source.string(), directory);
            if (command.empty()) {
                infrastructure = "the build's compile_commands.json has no command for " + source.string();
                return refused;
            }
            const ProcessResult compiled_again = run_student(keeping_command(command, keep.string()), 600, directory);
            if (compiled_again.exit_code != 0) {
                refused[k] = "did not compile (the handed-out stub was built in its place). Score 0 for " + stage_name(k) +
                             ". The compiler said:\n" + last_lines(compiled_again.output, 20);
                continue;
            }
            const fs::path object = keep / "kernel.o";
            // Read whole (reduce7's reference disassembles to about 3 MB): what is not read is
            // not checked, so an object past this is refused, not checked in part.
            constexpr std::size_t kMostChecked = std::size_t{64} << 20;
            const ProcessResult nm = run_student({"nm", "-u", "-P", object.string()}, 120, "", kMostChecked);
            const ProcessResult disassembly =
                run_student({"objdump", "-d", "--no-show-raw-insn", object.string()}, 300, "", kMostChecked);
            const ProcessResult tables = run_student({"readelf", "-S", "-s", "-r", "-W", object.string()}, 120, "", kMostChecked);
            if (nm.output_cut || disassembly.output_cut || tables.output_cut) {
                refused[k] = "refused by the compiled check: " + path + "'s object is too large to check (its symbols or "
                             "disassembly pass " + std::to_string(kMostChecked >> 20) + " MiB). Score 0 for " + stage_name(k) + ".";
                continue;
            }
            if (nm.exit_code != 0 || disassembly.exit_code != 0 || tables.exit_code != 0) {
                infrastructure = "the compiled check could not read " + path + "'s object (nm, objdump and readelf, binutils):\n" +
                                 last_lines(nm.output + disassembly.output + tables.output, 12);
                return refused;
            }
            CompiledFiles files;
            files.undefined_symbols = nm.output;
            files.disassembly = disassembly.output;
            files.elf_tables = tables.output;
            add_kept_files(keep.string(), files, [&](const std::string& file) { return read_owned(file); });
            std::string problems;
            for (const std::string& p : check_compiled(path, source.string(), files, k, policy, instructor)) problems += p + "\n";
            if (!problems.empty()) {
                refused[k] = "refused by the compiled check (what the compiler read from kernel.cu and what the object "
                             "calls: the handout and source_policy.txt). Score 0 for " + stage_name(k) + ":\n" + problems;
            }
        }
        fs::remove_all(compiled);  // the student's user wrote there; nothing of it stays
        return refused;
    }

    // A file the student's user wrote: read only if it is a plain file with one link (no
    // link to a file of root's), not through a symbolic link.
    std::string read_owned(const fs::path& path) const {
        const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st {};
        if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
            if (fd >= 0) close(fd);
            throw std::runtime_error(path.string() + " is not a plain file of the build's");
        }
        std::string text;
        char chunk[65536];
        for (ssize_t got; (got = read(fd, chunk, sizeof chunk)) > 0;) text.append(chunk, static_cast<std::size_t>(got));
        close(fd);
        return text;
    }

    // ------------------------------------------------------------ one stage
    // The tree's own tests: the student reads them; they earn nothing, because their
    // process contains the student's code and could say anything.
    void public_tests_feedback(int stage) {
        const std::string name = stage_name(stage);
        const std::string filter = public_tests_filter(stage);
        // Worth nothing, so it may not eat the budget of the parts that are (a test that
        // hangs keeps the machine's lock too): a few minutes at most.
        constexpr int kFeedbackSeconds = 180;
        if (!tests_unbuilt.empty()) {
            add(stage, "the tree's public tests (feedback, no points)", 0, false,
                "Feedback only (no points): " + tests_unbuilt, {"feedback"});
            return;
        }
        const ProcessResult r = run_student({(build / "bin" / "gpu_tests").string(), "--gtest_filter=" + filter,
                                             "--gtest_brief=1"}, std::min(options.test_timeout, kFeedbackSeconds));
        static const std::regex failure(R"(Failure|FAILED|not implemented|Expected|: got )");
        std::string output = "Feedback only (no points): the tree's own tests, gpu_tests --gtest_filter=" + filter + ". ";
        if (r.timed_out) {
            output += "They did not finish in time.";
        } else if (r.exit_code == 0) {
            output += "They report that they passed.";
        } else {
            output += "They report failures:\n" + matching_lines(r.output, failure, 25);
        }
        add(stage, "the tree's public tests (feedback, no points)", 0, r.exit_code == 0 && !r.timed_out, output, {"feedback"});
    }

    bool correctness(int stage, const std::string& worker) {
        const ProcessResult r = run_judge({"--correctness", "--worker", worker}, options.test_timeout * 3);
        std::map<std::string, std::pair<bool, std::string>> groups;  // group -> passed, details
        std::string pending;
        std::istringstream in(r.output);
        static const std::regex verdict(R"(^GROUP (\w+) (PASS|FAIL) (.*)$)");
        for (std::string line; std::getline(in, line);) {
            std::smatch m;
            if (std::regex_match(line, m, verdict)) {
                groups[m[1]] = {m[2] == "PASS", pending + m.str(3)};
                pending.clear();
            } else if (line.rfind("FAIL ", 0) == 0 || line.rfind("the worker ended", 0) == 0) {
                pending += line + "\n";
            }
        }
        const std::string missing =
            r.timed_out ? "the judge did not finish in time" : "not judged:\n" + last_lines(r.output, 6);
        auto verdict_of = [&](const std::string& group) {
            const auto it = groups.find(group);
            const bool passed = it != groups.end() && it->second.first;
            return std::make_pair(passed, it != groups.end() ? it->second.second : missing);
        };
        const auto pub = verdict_of("public");
        // How the worker held the judge's inputs (read-only where the driver allows it).
        std::string mapping;
        for (const std::string& m : lines_starting(r.output, "INFO the submission's worker mapped its inputs ")) mapping = m;
        // One name per part, whatever happened (batch's columns, Gradescope's tests).
        add(stage, "public cases", rubric.public_cases, pub.first,
            "The public tests' sizes, fresh inputs, checked by the grader: " + pub.second +
                (mapping.empty() ? "" : "\n(the worker mapped the inputs " + mapping + ")"),
            {"public"});
        for (const std::string& group : hidden_groups()) {
            const auto v = verdict_of(group);
            add(stage, "hidden cases, " + group, rubric.hidden_group, v.first, v.second, {"hidden", group}, "after_due_date");
        }
        // The sanitizers and the timing wait for the public cases alone: a visible line that
        // waited for the hidden ones too would tell, before the deadline, whether they passed.
        // Each of them checks its own sums.
        return pub.first;
    }

    void sanitizer_test(int stage, const std::string& tool, double points, bool correct, const std::string& worker) {
        if (!correct) {
            add(stage, tool, points, false, "not run: the stage must pass every public case first", {"sanitizer"});
            return;
        }
        if (sanitizer.empty()) {
            add(stage, tool, points, false, "compute-sanitizer not found on the grading machine (it ships with the CUDA Toolkit)",
                {"sanitizer"});
            infrastructure_failed = true;
            return;
        }
        const ProcessResult r = run_judge({"--sanitize", tool, "--sanitizer", sanitizer, "--worker", worker},
                                          options.test_timeout);
        const auto verdicts = lines_starting(r.output, "SANITIZER " + tool + " ");
        std::string output;
        bool clean = false;
        if (verdicts.empty()) {
            output = r.timed_out ? tool + " did not finish in time" : "no verdict:\n" + last_lines(r.output, 8);
        } else {
            const std::string& v = verdicts.back();
            clean = v.rfind("CLEAN ", 0) == 0;
            output = v.substr(v.find(' ') + 1);
            for (const std::string& d : lines_starting(r.output, "DETAIL ")) output += "\n" + d;
        }
        add(stage, tool, points, clean, output, {"sanitizer"});
    }

    // The judge's timing of the submission, the reference and the previous stage.
    struct Judged {
        ProcessResult run;
        std::map<std::string, Timing> t;
        bool complete() const { return t.count("submission") && t.count("reference") && t.count("previous"); }
        double vs_reference() const { return t.at("submission").median / t.at("reference").median; }
        double previous_vs_reference() const { return t.at("previous").median / t.at("reference").median; }
        // Where partial credit ends: the smaller of the previous stage's ratio in the rounds
        // and in the calibration (timed before any process of the submission existed, so that
        // slowing the previous stage's blocks cannot widen the credit).
        double previous_for_credit() const {
            static const std::regex line(R"(^CALIBRATED previous_vs_reference=([0-9.eE+-]+)$)");
            std::smatch m;
            for (const std::string& l : lines_starting(run.output, "CALIBRATED ")) {
                if (std::regex_match(l, m, line) && std::stod(m[1]) > 0) {
                    return std::min(previous_vs_reference(), std::stod(m[1]));
                }
            }
            return previous_vs_reference();
        }
        // The judge's FLOOR line when it says BROKEN (a request faster than the GPU's memory
        // can read its inputs), else "".
        std::string broken_floor() const {
            const auto floor = lines_starting(run.output, "FLOOR ");
            return !floor.empty() && floor.back().find("BROKEN") != std::string::npos ? floor.back() : "";
        }
    };
    Judged time_submission(int stage, const std::string& worker) {
        const fs::path reference_build = trusted / "reference-build";
        Judged j;
        j.run = run_judge({"--perf", "--worker", worker, "--reference", worker_of(reference_build, stage), "--previous",
                           worker_of(reference_build, stage - 1)},
                          options.test_timeout);
        j.t = parse_perf(j.run.output);
        return j;
    }

    void performance(int stage, bool correct, const std::string& worker) {
        const double full_at = rubric.threshold(stage);
        const double points = rubric.performance;
        const std::string title = "performance";
        if (!correct) {
            add(stage, title, points, false, "not measured: the stage must pass every public case first", {"performance"});
            return;
        }
        Judged j = time_submission(stage, worker);
        if (!j.complete()) {
            std::string why = j.run.timed_out ? "timed out\n" : "";
            for (const std::string& f : lines_starting(j.run.output, "PERF submission FAILED ")) why += f + "\n";
            add(stage, title, points, false, why + last_lines(j.run.output, 6), {"performance"});
            return;
        }
        // A timing the judge does not trust (the reference or the fixed cost departed from
        // their calibration, or the submission is faster than the reference's spread allows)
        // earns nothing and is no grade: the whole grading could not grade (exit 3, and on
        // Gradescope no results.json), with the judge's reason in the report.
        // (A submission that gave a wrong sum earns nothing whatever the timing: below.)
        auto untrusted = [&](const Judged& judged) {
            const auto trust = lines_starting(judged.run.output, "TRUST UNTRUSTED ");
            if (trust.empty() || !judged.t.at("submission").verified) return false;
            infrastructure_failed = true;
            add(stage, title, points, false,
                "could not grade: the grader does not trust this timing: " + trust.back() + "\n" +
                    // the judge's CALIBRATION, CALIBRATED, TRUST and FLOOR lines: the evidence
                    last_lines(judged.run.output, 4) + "\nThe instructor regrades it (docs/classroom.md, regrading).",
                {"performance"});
            return true;
        };
        if (untrusted(j)) return;
        double vs_reference = j.vs_reference();
        double previous_vs_reference = j.previous_for_credit();
        std::string again;
        // Near the threshold the judge's noise could decide: one more timing, the two averaged.
        // Only where the budget leaves room for twice the first timing: a second timing cut
        // short would cost the points the first earned (then the first stands, and says so).
        const bool near_threshold = rubric.remeasure_band > 0 && std::abs(vs_reference - full_at) <= rubric.remeasure_band &&
                                    j.t.at("submission").verified;
        if (near_threshold && remaining() - 15 < 2 * j.run.seconds) {
            again = "\nWithin " + fixed(rubric.remeasure_band, 2) + " of the threshold, but too little of the grading's "
                    "time budget was left to time it again: this one timing stands.";
        } else if (near_threshold) {
            // The second timing is held to what the first was: incomplete is no points, a
            // wrong sum or a broken floor in either counts.
            const Judged second = time_submission(stage, worker);
            if (!second.complete()) {
                add(stage, title, points, false,
                    "timed a second time (within " + fixed(rubric.remeasure_band, 2) + " of the threshold), and that timing " +
                        "did not complete:\n" + last_lines(second.run.output, 6),
                    {"performance"});
                return;
            }
            if (untrusted(second)) return;
            if (!second.t.at("submission").verified || !second.broken_floor().empty()) j = second;
            again = "\nWithin " + fixed(rubric.remeasure_band, 2) + " of the threshold, so timed twice: " +
                    fixed(vs_reference, 3) + "x and " + fixed(second.vs_reference(), 3) + "x, averaged.";
            vs_reference = (vs_reference + second.vs_reference()) / 2;
            previous_vs_reference = (previous_vs_reference + second.previous_for_credit()) / 2;
        }
        const Timing& sub = j.t.at("submission");
        const Timing& ref = j.t.at("reference");
        const Timing& prev = j.t.at("previous");
        const double vs_previous = sub.median / prev.median;
        const std::string broken_floor = j.broken_floor();
        const double earned = sub.verified && broken_floor.empty()
                                  ? rubric.performance_points(stage, vs_reference, previous_vs_reference)
                                  : 0;
        std::ostringstream out;
        out << "median time " << fixed(sub.median * 1000, 1) << " us per reduction (" << fixed(sub.min * 1000, 1) << " - "
            << fixed(sub.max * 1000, 1) << " over the rounds): " << fixed(vs_reference, 3)
            << "x the reference solution's " << fixed(ref.median * 1000, 1) << " us and " << fixed(vs_previous, 3)
            << "x the previous stage's (" << stage_name(stage - 1) << ") " << fixed(prev.median * 1000, 1)
            << " us, on this GPU, each in its own process, timed by the grader." << again << "\nFull points at or below "
            << fixed(full_at, 2) << "x the reference; on this GPU the previous stage takes "
            << fixed(previous_vs_reference, 3) << "x the reference's time";
        if (rubric.partial_margin < 0 || previous_vs_reference - rubric.partial_margin <= full_at) {
            out << ".";
        } else {
            out << ", and points fall linearly to none at " << fixed(previous_vs_reference - rubric.partial_margin, 3)
                << "x (the previous stage's ratio less " << fixed(rubric.partial_margin, 2) << ").";
        }
        if (j.t.count("fixed")) {
            const Timing& f = j.t.at("fixed");
            out << "\nEach time is a request's time less the protocol's fixed cost per request (" << fixed(f.median * 1000, 1)
                << " us, " << fixed(f.min * 1000, 1) << " - " << fixed(f.max * 1000, 1)
                << " over the rounds, measured on the instructor's workers alone), divided by the request's reductions.";
        }
        if (!sub.verified) {
            out << "\nA timed run gave a wrong sum: no points.";
            for (const std::string& f : lines_starting(j.run.output, "PERF_FAILURE submission ")) out << " " << f;
        }
        if (!broken_floor.empty()) out << "\nA timed request was faster than the GPU's memory can read its inputs: not credible, no points (" << broken_floor << ").";
        add_points(stage, title, points, earned, out.str(), {"performance"});
        ratios.push_back({stage, vs_reference, vs_previous, previous_vs_reference});
    }
    struct Ratio {
        int stage;
        double vs_reference, vs_previous, previous_vs_reference;
    };
    std::vector<Ratio> ratios;

    void grade_stage(int stage) {
        line_number = 0;
        current_min_block = grading_of(stage).min_block;
        const std::string worker = worker_of(build, stage);
        if (!out_of_time()) public_tests_feedback(stage);
        if (out_of_time()) {
            add_zeros(stage, out_of_time_text());
            return;
        }
        const bool correct = correctness(stage, worker);  // the public cases
        // With the gate off (rubric.txt) the parts after correctness run whatever the public
        // cases gave; each is skipped with the reason once the budget is spent.
        const bool gate_open = correct || !rubric.gate_on_public_cases;
        auto part = [&](const std::string& name, double points, const char* tag, auto&& run) {
            if (gate_open && out_of_time()) {
                add(stage, name, points, false, out_of_time_text(), {tag});
            } else {
                run();
            }
        };
        part("racecheck", rubric.racecheck, "sanitizer",
             [&] { sanitizer_test(stage, "racecheck", rubric.racecheck, gate_open, worker); });
        part("memcheck", rubric.memcheck, "sanitizer",
             [&] { sanitizer_test(stage, "memcheck", rubric.memcheck, gate_open, worker); });
        part("performance", rubric.performance, "performance", [&] { performance(stage, gate_open, worker); });
    }

    // Every stage's lines at zero: a refused stage for its own reason, the others for `why`
    // (a refusal of the whole submission, a failed build, no GPU).
    void zero_every_stage(const std::string& why, const std::map<int, std::string>& refused = {}) {
        for (int k : assignment.stages()) {
            line_number = 0;
            add_zeros(k, refused.count(k) ? refused.at(k) : why);
        }
    }
};

// Why a lock may not live in `folder` ("" when it may): another user who may write there
// could remove the lock (two gradings at once) or make it first (none at all).
std::string unsafe_lock_folder(const fs::path& folder) {
    struct stat st {};
    if (lstat(folder.c_str(), &st) != 0) return folder.string() + " does not exist";
    if (!S_ISDIR(st.st_mode)) return folder.string() + " is not a folder (or is a link)";
    if (st.st_uid != geteuid() && st.st_uid != 0) return folder.string() + " belongs to another user";
    if (st.st_mode & (S_IWGRP | S_IWOTH)) return folder.string() + " may be written by other users";
    return "";
}

// The lock's default place: as root /run/classroom (made 0700); otherwise the user's runtime
// folder ($XDG_RUNTIME_DIR) or home, else a folder of its own (0700) in the temporary
// folder; never a folder other users may write.
fs::path default_lock() {
    if (geteuid() == 0) {
        mkdir("/run/classroom", 0700);
        return kDefaultLock;
    }
    for (const char* variable : {"XDG_RUNTIME_DIR", "HOME"}) {
        const char* folder = std::getenv(variable);
        if (folder && *folder && unsafe_lock_folder(folder).empty()) return fs::path(folder) / ".classroom-grading.lock";
    }
    const fs::path own = fs::temp_directory_path() / ("classroom-grading-" + std::to_string(geteuid()));
    mkdir(own.c_str(), 0700);  // made by another user first, it is refused by MachineLock
    return own / "grading.lock";
}

// The machine's grading lock: an exclusive flock on a file only its owner may open, in a
// folder no other user may write (so a student's process can neither take it first nor
// remove it), waited for up to `wait_seconds`.
struct MachineLock {
    int fd = -1;
    double waited = 0;
    std::string problem;  // why it could not be taken; "" when held
    MachineLock(const fs::path& path, int wait_seconds) {
        problem = unsafe_lock_folder(path.parent_path().empty() ? fs::path(".") : path.parent_path());
        if (!problem.empty()) {
            problem = "the grading lock " + path.string() + " cannot be trusted: " + problem;
            return;
        }
        fd = open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        struct stat st {};
        if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_uid != geteuid())) {
            close(fd);  // a file someone else made: not ours to trust
            fd = -1;
            problem = path.string() + " belongs to another user; remove it, or give --lock another path";
            return;
        }
        if (fd < 0) {
            problem = "cannot open the grading lock " + path.string() + ": " + std::strerror(errno);
            return;
        }
        const auto start = std::chrono::steady_clock::now();
        while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            if (waited >= wait_seconds) {
                problem = "another grading held " + path.string() + " for " + std::to_string(wait_seconds) + " s";
                close(fd);
                fd = -1;
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
        }
    }
    ~MachineLock() {
        if (fd >= 0) close(fd);  // closing releases the flock
    }
    MachineLock(const MachineLock&) = delete;
    MachineLock& operator=(const MachineLock&) = delete;
};

std::string find_sanitizer(const std::string& given) {
    if (!given.empty()) return find_program(given);
    std::string found = find_program("compute-sanitizer");
    if (found.empty() && access("/usr/local/cuda/bin/compute-sanitizer", X_OK) == 0) {
        found = "/usr/local/cuda/bin/compute-sanitizer";
    }
    return found;
}

SourcePolicy source_policy_of(const fs::path& autograder) {
    if (!fs::exists(autograder / "source_policy.txt")) return default_source_policy();
    return read_source_policy(read_file(autograder / "source_policy.txt"));
}

}  // namespace

std::map<int, std::string> refuse_stages(const fs::path& autograder, const SourcePolicy& policy,
                                         std::map<std::string, std::string>& editable) {
    std::map<int, std::string> refused;
    for (const std::string& path : editable_paths(parse_manifest(read_file(autograder / "manifest.txt")))) {
        const int stage = stage_of(path);
        const auto submitted = editable.find(path);
        if (submitted == editable.end()) {
            refused[stage] = "not submitted: the submission has no " + path + " (upload the tree or a zip of it, with its "
                             "reduceN/ folders). Score 0 for " + stage_name(stage) + ".";
        } else {
            std::string problems;
            for (const std::string& p : check_source(path, submitted->second, stage,
                                                     local_headers(autograder / "student_tree", stage), policy)) {
                problems += p + "\n";
            }
            if (problems.empty()) continue;
            refused[stage] = "refused by the source check (what a kernel.cu may contain: the handout and "
                             "source_policy.txt). Score 0 for " + stage_name(stage) + ":\n" + problems;
        }
        // The handed-out stub builds in its place, so that the other stages can be graded.
        editable[path] = read_file(autograder / "student_tree" / path);
    }
    return refused;
}

// The folder the submission's tree starts in: the submission itself, or the one folder a
// zip of the tree unpacked into (`my-reduce/reduce3/kernel.cu`).
fs::path submission_root(const fs::path& submission, const std::vector<std::string>& paths) {
    for (const std::string& p : paths) {
        if (fs::exists(fs::symlink_status(submission / p))) return submission;
    }
    std::error_code ignored;
    std::vector<fs::path> entries;
    for (const auto& entry : fs::directory_iterator(submission, ignored)) {
        const std::string name = entry.path().filename().string();
        if (name != "__MACOSX" && name.rfind('.', 0) != 0) entries.push_back(entry.path());
    }
    if (entries.size() == 1 && !fs::is_symlink(fs::symlink_status(entries[0])) && fs::is_directory(entries[0])) {
        return entries[0];
    }
    return submission;
}

std::string check_submission(const fs::path& autograder, const fs::path& uploaded,
                             std::map<std::string, std::string>& editable, std::vector<std::string>* ignored) {
    const auto entries = parse_manifest(read_file(autograder / "manifest.txt"));
    const std::vector<std::string> paths = editable_paths(entries);
    const fs::path submission = submission_root(uploaded, paths);
    for (const ManifestEntry& e : entries) {
        const fs::path file = submission / e.path;
        // A link could point the grader (root, on Gradescope) at a file of its own.
        for (fs::path p = file; p != submission && p.has_parent_path(); p = p.parent_path()) {
            if (fs::is_symlink(fs::symlink_status(p))) {
                return "refused: " + e.path + " is (or lies under) a symbolic link; submit plain files. Score 0.";
            }
        }
        if (!fs::is_regular_file(file)) continue;  // not submitted: the handed-out file is used
        if (e.role == "editable") {
            editable[e.path] = read_file(file);
        } else if (ignored && sha256_hex(read_file(file)) != e.hash) {
            // Never used (the grader builds the handed-out file), so nothing is at stake:
            // a note in the report, not a refusal (a line added to a README, a CRLF checkout).
            ignored->push_back(e.path);
        }
    }
    // A Gradescope upload of the one file of a one-stage assignment arrives without its folder.
    if (editable.empty() && paths.size() == 1 && !fs::is_symlink(fs::symlink_status(submission / "kernel.cu")) &&
        fs::is_regular_file(submission / "kernel.cu")) {
        editable[paths[0]] = read_file(submission / "kernel.cu");
    }
    // A stage that is missing costs only itself (refuse_stages); nothing at all is a refusal.
    if (editable.empty()) {
        std::string expected;
        for (const std::string& p : paths) expected += (expected.empty() ? "" : ", ") + p;
        return "refused: the submission has no " + expected + " (upload " +
               (paths.size() == 1 ? "the file itself, or " : "") + "the tree or a zip of it). Score 0.";
    }
    return "";
}

const char* const kDefaultLock = "/run/classroom/grading.lock";

std::string prepare(const GradeOptions& options) {
    Grader g(options, parse_assignment(trimmed(read_file(options.autograder / "assignment.txt"))));
    g.trusted = trusted_folder(options);
    return g.prepare_trusted();
}

Graded grade(const GradeOptions& options) {
    Graded graded;
    Grader g(options, parse_assignment(trimmed(read_file(options.autograder / "assignment.txt"))));
    g.tree = options.work / "tree";
    g.build = options.work / "build";
    g.logs = options.work / "logs";
    g.trusted = trusted_folder(options);
    g.sanitizer = find_sanitizer(options.sanitizer);
    g.seed = options.seed;
    if (g.seed == 0) {
        std::random_device device;
        g.seed = (std::uint64_t(device()) << 32 | device()) % 1000000000000ULL + 1;
    }
    std::ostringstream header;
    header << "Assignment " << g.assignment.name() << ", graded " << utc_now() << ", seed " << g.seed << ".";
    auto finish = [&](int status) {
        // Checked last of all (after every step's processes were ended), so a failure that
        // other processes of the user caused is never recorded as the student's.
        if (!g.machine_untrusted().empty()) {
            header << "\nThe grader could not grade: " << g.untrusted_machine << ".";
            status = 3;
        }
        g.results.output = header.str();
        g.results.execution_time = std::chrono::duration<double>(std::chrono::steady_clock::now() - g.start).count();
        graded.results = g.results;
        graded.exit_status = status;
        return graded;
    };
    // One grading at a time on this machine, before anything of the student's user is
    // started or killed (a second grading's kills would reach the first's processes).
    // The wait counts against the time budget, so it may take a fifth of it at most; past
    // that the grading could not grade (never zeros for a wait that was not the student's).
    const fs::path lock_path = options.lock.empty() ? default_lock() : options.lock;
    const MachineLock lock(lock_path, options.time_budget > 0 ? options.time_budget / 5 : 600);
    if (!lock.problem.empty()) {
        header << "\nThe grader could not grade: " << lock.problem << ".";
        g.zero_every_stage("not graded: " + lock.problem);
        return finish(3);
    }
    if (lock.waited >= 1) header << "\nWaited " << static_cast<int>(lock.waited) << " s for another grading on this machine.";
    become_subreaper();  // nothing a step starts outlives it (kill_leftovers after each)
    g.end_step();  // nor anything of an earlier grading's
    if (!g.machine_untrusted().empty()) {
        g.zero_every_stage("not graded: " + g.untrusted_machine);
        return finish(3);
    }
    const bool isolated = !options.run_as.empty() && geteuid() == 0;
    if (isolated) {
        // The grader's folders must be its own: a folder the student's user made or may
        // write could hold a judge of theirs.
        for (const fs::path& p : {options.work, g.trusted}) {
            struct stat st {};
            if (lstat(p.c_str(), &st) == 0 && (S_ISLNK(st.st_mode) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))) {
                throw std::invalid_argument(p.string() + " must be a folder of root's that no one else may write (--work, --trusted)");
            }
        }
    }
    const std::string isolation =
        isolated ? "the submission was built and run as the user " + options.run_as +
                       ", apart from the grader; every point was decided by the grader's own process"
                 : "the submission ran as the grader's own user (not root, or no --run-as): it could read the "
                   "autograder's files, rewrite the sanitizer's log, or replace the grader's own programs (the judge, "
                   "in --trusted) before they ran, so no point is safe from it; grade as root with --run-as where the "
                   "points count";
    header << "\nIsolation: " << isolation << ".";
    g.results.extra_data.push_back({"seed", std::to_string(g.seed)});
    g.results.extra_data.push_back({"isolated", isolated ? "true" : "false"});

    std::map<std::string, std::string> editable;
    std::vector<std::string> ignored;
    std::string refusal = check_submission(options.autograder, options.submission, editable, &ignored);
    if (!ignored.empty()) {
        std::string list;
        for (const std::string& p : ignored) list += (list.empty() ? "" : ", ") + p;
        header << "\nIgnored: " << list << (ignored.size() == 1 ? " differs" : " differ")
               << " from the handed-out tree; the handed-out " << (ignored.size() == 1 ? "file was" : "files were")
               << " used (only the kernel.cu files are graded).";
    }
    // The rubric is the autograder's (the instructor's file), never the submission's.
    if (fs::exists(options.autograder / "rubric.txt")) {
        try {
            g.rubric = read_rubric(read_file(options.autograder / "rubric.txt"), g.assignment);
        } catch (const std::invalid_argument& e) {
            header << "\nThe grader could not grade: the autograder's " << e.what();
            g.zero_every_stage("not graded: the autograder's rubric.txt cannot be read");
            return finish(3);
        }
    }
    // A refusal of the whole submission (a link, nothing submitted): every stage at zero.
    auto refuse = [&](const std::string& why) {
        header << "\n" << why;
        g.zero_every_stage(why);
        return finish(1);
    };
    if (!refusal.empty()) return refuse(refusal);
    // A refusal of one stage costs only that stage: its lines at zero with the reason, the
    // handed-out stub built in its place, and the other stages graded.
    const SourcePolicy policy = source_policy_of(options.autograder);
    std::map<int, std::string> refused = refuse_stages(options.autograder, policy, editable);
    for (const auto& [stage, why] : refused) header << "\n" << stage_name(stage) << ": " << why;
    if (refused.size() == g.assignment.stages().size()) {
        g.zero_every_stage("", refused);
        return finish(1);
    }
    const std::string unprepared = g.prepare_trusted();
    if (!unprepared.empty()) {
        header << "\nThe grader could not grade: " << unprepared;
        g.zero_every_stage("not graded: the grader's own programs are not ready");
        return finish(3);
    }
    g.sync_files(options.autograder / "student_tree", g.tree, editable);
    // Configure, the compiled check (nothing built or run yet), then the build.
    std::string build_log;
    bool built = g.configure_submission(build_log);
    if (built && policy.enabled) {
        std::string infrastructure;
        const std::map<int, std::string> problems = g.compiled_problems(policy, refused, infrastructure);
        if (!infrastructure.empty()) {
            header << "\nThe grader could not grade: " << infrastructure;
            g.zero_every_stage("not graded: " + infrastructure);
            return finish(3);
        }
        for (const auto& [stage, why] : problems) {
            header << "\n" << stage_name(stage) << ": " << why;
            refused[stage] = why;
            const std::string path = stage_name(stage) + "/kernel.cu";
            editable[path] = read_file(options.autograder / "student_tree" / path);
        }
        if (!problems.empty()) g.sync_files(options.autograder / "student_tree", g.tree, editable);
    }
    if (refused.size() == g.assignment.stages().size()) {
        g.zero_every_stage("", refused);
        return finish(1);
    }
    std::map<int, std::string> unbuilt;  // stage -> why its worker did not build
    if (built) built = g.build_submission(unbuilt, build_log);
    for (int k : g.assignment.stages()) {
        g.line_number = 0;
        const bool stage_built = built && !unbuilt.count(k);
        const std::string what = !built            ? build_log
                                 : unbuilt.count(k) ? unbuilt.at(k)
                                 : refused.count(k) ? "built the handed-out stub in its place (refused)"
                                                    : "built";
        g.results.tests.push_back(TestResult{std::to_string(k) + ".0", stage_name(k) + ": build", 0, 0, stage_built, what,
                                             "visible", {stage_name(k), "build"}});
    }
    for (const auto& [k, why] : unbuilt) {
        if (refused.count(k)) continue;
        refused[k] = "not run: " + stage_name(k) + "'s worker did not build (its build line says why)";
        header << "\n" << stage_name(k) << ": its build failed (see its build line). Score 0 for " << stage_name(k) << ".";
    }
    if (!built || unbuilt.size() == g.assignment.stages().size()) {
        g.zero_every_stage("not run: the build failed", refused);
        header << "\nThe build failed: see the build test's output for the compiler's errors.";
        return finish(1);
    }
    const ProcessResult device = g.run_judge({"--device"}, 120);
    const std::string gpu = last_lines(device.output, 1);
    header << "\nGPU: " << (device.exit_code == 0 ? gpu : "none usable: " + gpu);
    g.results.extra_data.push_back({"gpu", json_escape(trimmed(gpu))});
    if (device.exit_code != 0) {
        g.zero_every_stage("not graded: no usable GPU: " + gpu);
        return finish(3);
    }
    for (int k : g.assignment.stages()) {
        if (refused.count(k)) {
            g.line_number = 0;
            g.add_zeros(k, refused.at(k));
        } else {
            g.grade_stage(k);
        }
    }
    std::string ratios;
    for (const auto& r : g.ratios) {
        ratios += std::string(ratios.empty() ? "" : ", ") + json_escape(stage_name(r.stage)) + ": {\"vs_reference\": " +
                  fixed(r.vs_reference, 4) + ", \"vs_previous\": " + fixed(r.vs_previous, 4) +
                  ", \"previous_vs_reference\": " + fixed(r.previous_vs_reference, 4) + "}";
        g.results.leaderboard.push_back({stage_name(r.stage) + " time / reference", r.vs_reference, true});
    }
    g.results.extra_data.push_back({"time_ratios", "{" + ratios + "}"});
    const bool full = g.results.score() == g.results.max_score();
    return finish(g.infrastructure_failed ? 3 : (full ? 0 : 1));
}

}  // namespace classroom
