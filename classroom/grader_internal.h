// The grader's inside (grader.cpp: `classroom grade`), shared by its files:
//   grader.cpp        grade() and the checks of a submission before anything of it runs
//   grader_steps.cpp  the Grader's set-up: the trusted programs, the student's build, the
//                     compiled check; and the text helpers below
//   grade_stage.cpp   one stage's steps: public tests, correctness, sanitizers, performance
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "assignment.h"
#include "grader.h"
#include "process.h"
#include "source_check.h"

namespace classroom::grading_steps {

// The last `count` lines of a text.
std::string last_lines(const std::string& text, std::size_t count);
// The lines of a text that match `pattern`, at most `count` of them, and how many there were.
std::string matching_lines(const std::string& text, const std::regex& pattern, std::size_t count);
// The compiler's complaints, for the student: the lines that say error, with the one after.
std::string compiler_errors(const std::string& log);
std::string fixed(double value, int decimals);
std::string utc_now();
// One program's median time and its spread over the rounds, from judge --perf.
struct Timing {
    double median = 0, min = 0, max = 0;
    bool verified = false;
};
// Also "fixed": the protocol's cost per request that the judge subtracted (FIXED line).
std::map<std::string, Timing> parse_perf(const std::string& output);
// The lines of the judge's output that start with `prefix`, the prefix cut off.
std::vector<std::string> lines_starting(const std::string& output, const std::string& prefix);
// The headers of a stage's folder in the handed-out tree (a submission may include them).
std::set<std::string> local_headers(const fs::path& pristine, int stage);
// Where the judge and the reference workers are built: --trusted, or <work>/trusted.
fs::path trusted_folder(const GradeOptions& options);
// "reduce3;reduce4": the stages first..last, as a CMake list.
std::string stage_list(int first, int last);

// One grading: its options, its folders, its results so far, and the steps that add to them.
struct Grader {
    Grader(const GradeOptions& o, const Assignment& a) : options(o), assignment(a) {}
    const GradeOptions& options;
    Assignment assignment;
    GradingRubric rubric;  // the autograder's rubric.txt
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
    std::string build_jobs() const;

    std::string worker_of(const fs::path& build_dir, int stage) const;

    // Seconds left of the time budget (a large number when there is none).
    int remaining() const;
    int step_timeout(int wanted) const { return std::max(1, std::min(wanted, remaining() - 15)); }
    bool out_of_time() const { return remaining() < 30; }
    std::string out_of_time_text() const;

    void add(int stage, const std::string& name, double max, bool passed, const std::string& output,
             std::vector<std::string> tags, const std::string& visibility = "visible");
    // A line that may earn part of its points (performance, with partial credit).
    void add_points(int stage, const std::string& name, double max, double points, const std::string& output,
                    std::vector<std::string> tags, const std::string& visibility = "visible");

    // Nothing earned: every line of a stage listed with zero, so the maximum stays visible.
    void add_zeros(int stage, const std::string& why);

    // A step that runs the student's code (the build, the tree's tests): as the student's
    // user when there is one, and nothing it leaves behind survives the step.
    ProcessResult run_student(const std::vector<std::string>& argv, int timeout, const std::string& directory = "",
                              std::size_t most_output = RunSpec{}.most_output);

    // After every step: nothing of the student's user lives on, and nothing it wrote where
    // a later step could read it stays (the shared folders, System V IPC).
    // A process of the user that outlives SIGKILL could still write into a later step, so
    // the grading is then not trusted (exit 3: could not grade).
    void end_step();
    // The grading can be trusted only while the user's task slots are free enough (they
    // are counted across the whole host, student_user.h): checked before anything of the
    // student's runs and again at the end. Returns the reason when it cannot ("" if it can).
    std::string machine_untrusted();

    // The judge: ours, run as the grader's own user; the seed reaches it through its
    // environment, which only that user can read (a command line is readable by all).
    ProcessResult run_judge(std::vector<std::string> args, int timeout);
    int current_min_block = 32;

    // ------------------------------------------------------------ the trusted programs
    // The judge, and the workers of the instructor's solutions (the reference and the
    // previous stage), built from the autograder alone: no file of the submission is in
    // these builds. On Gradescope setup.sh builds them (classroom prepare) and then removes
    // their sources; "" when they are ready, else why not.
    std::string prepare_trusted();
    fs::path instructor_symbols_file() const { return trusted / "instructor_symbols.txt"; }

    // Makes `to` hold exactly the files of `pristine`, with `replaced` (path -> text) in
    // place of some; unchanged files keep their timestamps, so rebuilds are incremental.
    static void sync_files(const fs::path& pristine, const fs::path& to, const std::map<std::string, std::string>& replaced);

    // ------------------------------------------------------------ the student's build
    bool configure_submission(std::string& log);
    // Each stage's worker is built on its own (its kernel.cu and the harness, no other stage),
    // so that a link error costs only that stage (`unbuilt`: stage -> the compiler's words);
    // then the tree's own tests, which link every stage and earn nothing: their failure to
    // build is told in their feedback line (`tests_unbuilt`), never a lost stage. False when
    // the build's time ran out before every worker was built.
    bool build_submission(std::map<int, std::string>& unbuilt, std::string& log);

    // ------------------------------------------------------------ the compiled check
    // Each submitted kernel.cu compiled again with the tree's own flags, as the student's
    // user, keeping what the compiler read and made (compiled_check.h); read here only once
    // every process of that user is gone, and only as plain files of that user's.
    // Checks each stage not yet refused (`skip`) and returns stage -> why it is refused; sets
    // `infrastructure` when the check itself could not run. A file that does not compile
    // here is refused too: it is never built, so a file that compiles differently from one
    // run to the next gains nothing.
    std::map<int, std::string> compiled_problems(const SourcePolicy& policy, const std::map<int, std::string>& skip,
                                                 std::string& infrastructure);

    // A file the student's user wrote: read only if it is a plain file with one link (no
    // link to a file of root's), not through a symbolic link.
    std::string read_owned(const fs::path& path) const;

    // ------------------------------------------------------------ one stage
    // The tree's own tests: the student reads them; they earn nothing, because their
    // process contains the student's code and could say anything.
    void public_tests_feedback(int stage);

    bool correctness(int stage, const std::string& worker);

    void sanitizer_test(int stage, const std::string& tool, double points, bool correct, const std::string& worker);

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
    Judged time_submission(int stage, const std::string& worker);

    void performance(int stage, bool correct, const std::string& worker);
    struct Ratio {
        int stage;
        double vs_reference, vs_previous, previous_vs_reference;
    };
    std::vector<Ratio> ratios;

    void grade_stage(int stage);

    // Every stage's lines at zero: a refused stage for its own reason, the others for `why`
    // (a refusal of the whole submission, a failed build, no GPU).
    void zero_every_stage(const std::string& why, const std::map<int, std::string>& refused = {});
};

}  // namespace classroom::grading_steps
