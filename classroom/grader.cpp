#include "grader.h"
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


namespace classroom {

using namespace grading_steps;  // the Grader and its helpers (grader_internal.h)

namespace {

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
    try {
        if (!fs::exists(options.autograder / "rubric.txt")) throw std::invalid_argument("rubric.txt is missing");
        g.rubric = read_rubric(read_file(options.autograder / "rubric.txt"), g.assignment);
    } catch (const std::invalid_argument& e) {
        header << "\nThe grader could not grade: the autograder's " << e.what();
        g.zero_every_stage("not graded: the autograder's rubric.txt cannot be read");
        return finish(3);
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

