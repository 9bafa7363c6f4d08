#include "grader_internal.h"

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


namespace classroom::grading_steps {

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

std::string Grader::build_jobs() const {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    return std::to_string(options.jobs > 0 ? options.jobs : static_cast<int>(cores));
}

std::string Grader::worker_of(const fs::path& build_dir, int stage) const {
    return (build_dir / "bin" / ("grade_worker_" + stage_name(stage))).string();
}

int Grader::remaining() const {
    if (options.time_budget <= 0) return 1 << 30;
    const double used = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return static_cast<int>(options.time_budget - used);
}

std::string Grader::out_of_time_text() const {
    return "not run: the grading's time budget (" + std::to_string(options.time_budget) + " s) ran out";
}

void Grader::add(int stage, const std::string& name, double max, bool passed, const std::string& output,
         std::vector<std::string> tags, const std::string& visibility) {
    add_points(stage, name, max, passed ? max : 0, output, std::move(tags), visibility);
}

void Grader::add_points(int stage, const std::string& name, double max, double points, const std::string& output,
                std::vector<std::string> tags, const std::string& visibility) {
    tags.insert(tags.begin(), stage_name(stage));
    TestResult t{std::to_string(stage) + "." + std::to_string(++line_number), stage_name(stage) + ": " + name,
                 points, max, points >= max, trimmed(output), visibility, tags};
    results.tests.push_back(t);
}

void Grader::add_zeros(int stage, const std::string& why) {
    add(stage, "public cases", rubric.public_cases, false, why, {"public"});
    for (const std::string& group : hidden_groups()) {
        add(stage, "hidden cases, " + group, rubric.hidden_group, false, why, {"hidden", group}, "after_due_date");
    }
    add(stage, "racecheck", rubric.racecheck, false, why, {"sanitizer"});
    add(stage, "memcheck", rubric.memcheck, false, why, {"sanitizer"});
    add(stage, "performance", rubric.performance, false, why, {"performance"});
}

ProcessResult Grader::run_student(const std::vector<std::string>& argv, int timeout, const std::string& directory,
                          std::size_t most_output) {
    RunSpec spec;
    spec.directory = directory;
    spec.most_output = most_output;
    spec.timeout_seconds = step_timeout(timeout);
    spec.run_as = options.run_as;
    ProcessResult r = run_process(argv, spec);
    end_step();
    return r;
}

void Grader::end_step() {
    const std::string problem = kill_leftovers(options.run_as);
    if (!problem.empty() && untrusted_machine.empty()) untrusted_machine = problem;
    remove_files_of(options.run_as);
}

std::string Grader::machine_untrusted() {
    if (untrusted_machine.empty() && !task_slots_free(options.run_as)) {
        untrusted_machine = "fewer than " + std::to_string(student_user::kTasksAGradingNeeds) + " of the " +
                            std::to_string(student_user::kTasks) + " task slots of the user " + options.run_as +
                            " are free: processes of the same user id elsewhere on this host (another grading's "
                            "container?) hold them, so a build or a worker could fail for a reason not the student's";
    }
    return untrusted_machine;
}

ProcessResult Grader::run_judge(std::vector<std::string> args, int timeout) {
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

std::string Grader::prepare_trusted() {
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
                     "-DREDUCTION_BUILD_TESTS=OFF", "-DREDUCTION_WORKER_DIR=" + (source / "worker").string(),
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

void Grader::sync_files(const fs::path& pristine, const fs::path& to, const std::map<std::string, std::string>& replaced) {
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

bool Grader::configure_submission(std::string& log) {
    // The worker's sources, where the student's user can read them (on Gradescope the
    // autograder folder is root's alone).
    const fs::path worker = options.work / "worker";
    std::map<std::string, std::string> none;
    sync_files(options.autograder / "worker", worker, none);
    const std::string workers = stage_list(assignment.first, assignment.last);
    for (const fs::path& p : {tree, build, worker}) {
        fs::create_directories(p);
        give_to(p.string(), options.run_as);
    }
    fs::create_directories(logs);  // the grader's: the judge writes the workers' logs there
    ProcessResult configured = run_student({"cmake", "-S", tree.string(), "-B", build.string(), "-DCMAKE_BUILD_TYPE=Release",
                                            "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",  // the compiled check's flags
                                            "-DREDUCTION_WORKER_DIR=" + worker.string(), "-DGRADING_WORKERS=" + workers},
                                           600);
    if (configured.exit_code != 0) {
        log = configured.timed_out ? "configure timed out\n" : "configure failed:\n" + last_lines(configured.output, 40);
        return false;
    }
    return true;
}

bool Grader::build_submission(std::map<int, std::string>& unbuilt, std::string& log) {
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
        for (const fs::path& p : {tree, build, options.work / "worker"}) give_to(p.string(), "root");
    }
    return true;
}

std::map<int, std::string> Grader::compiled_problems(const SourcePolicy& policy, const std::map<int, std::string>& skip,
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

std::string Grader::read_owned(const fs::path& path) const {
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

}  // namespace classroom::grading_steps
