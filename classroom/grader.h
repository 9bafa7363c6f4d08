// classroom grade: grades a student tree or a submission folder against an autograder.
//
// No point comes from a process that contains the student's code (docs/classroom.md,
// "The threat model"):
// 1. Tamper check: only the files the student edits are taken from the submission (from
//    its top, or from its one top-level folder); every other handed-out file is the
//    autograder's copy, and one that differs in the submission is reported, never used.
// 2. Source check (source_check.h): what a kernel.cu may contain; refused with the line
//    and the reason, and a zero, before anything is compiled.
// 3. The trusted programs, built from the autograder alone (classroom prepare; on
//    Gradescope at setup, their sources then removed): the judge, and the workers of the
//    instructor's solutions; and the symbols the instructor's kernels use.
// 4. Configure a copy of the student tree with the submitted kernels, as the student's
//    user when the grader is root (--run-as); the compiled check (compiled_check.h) compiles
//    each submitted kernel.cu again with its flags and refuses what the compiler read or
//    made that the source check could not see; then the build, with the student's worker
//    (grade_worker_reduceN: the stage's kernel.cu and the harness, nothing else).
// 5. Per stage: the tree's own tests, as feedback worth no points; then the judge: the
//    public and hidden cases, racecheck and memcheck (the sanitizer, run as root with only
//    the worker as the student's user: its own exit status and log) and the time against
//    the reference and the previous stage, each program in its own worker. The judge makes
//    the inputs, checks every sum and every input after each request, and keeps the time.
// 6. Every step in its own process group, and whatever it leaves behind killed after it.
// 7. The report, Gradescope's results.json, and the exit status: 0 full marks, 1 points
//    lost, 2 a usage error, 3 the grader could not grade (no GPU, no compute-sanitizer,
//    a broken autograder).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "files.h"
#include "gradescope.h"

namespace classroom {

struct GradeOptions {
    fs::path autograder;   // the folder classroom generate wrote (or Gradescope's /autograder/source)
    fs::path submission;   // a student tree, or a folder with the edited kernel.cu files
    fs::path work;         // where to build; reused between gradings, so rebuilds are incremental
    fs::path results;      // results.json to write (empty: none)
    fs::path report;       // the report to write (empty: standard output only)
    std::uint64_t seed = 0;  // 0: a fresh random seed
    int jobs = 0;            // build jobs (0: the machine's cores)
    int build_timeout = 1800;
    int test_timeout = 600;
    std::string sanitizer;  // compute-sanitizer to use; empty: PATH, then /usr/local/cuda/bin
    fs::path trusted;       // the judge and the reference workers (empty: <work>/trusted)
    std::string run_as;     // as root: the user the student's build and workers run as
    int time_budget = 0;    // seconds for the whole grading, results included (0: none)
    // Held for the whole grading, so that two gradings on one machine never share its GPU
    // (nor kill each other's processes of the student's user). Empty: kDefaultLock as root,
    // else $XDG_RUNTIME_DIR's or $HOME's .classroom-grading.lock. Its folder must be one no
    // other user may write.
    // Gradings in separate containers on one GPU need a path on a folder they share.
    fs::path lock;
};
extern const char* const kDefaultLock;  // /run/classroom/grading.lock

struct Graded {
    GradeResults results;
    int exit_status = 0;
};

Graded grade(const GradeOptions& options);

// Builds the trusted programs (the judge and the reference workers) into options.trusted;
// "" when they are ready, else why not. `classroom prepare`, and the first grading.
std::string prepare(const GradeOptions& options);

// The tamper check alone: "" when the submission may be graded, else the one-line reason.
// `editable` receives the submission's copy of each editable file (path -> text), found at
// the submission's top or under its one top-level folder (a zip of the tree). A protected
// file that differs from the handed-out one is never used; its path goes to `ignored`.
std::string check_submission(const fs::path& autograder, const fs::path& submission,
                             std::map<std::string, std::string>& editable, std::vector<std::string>* ignored = nullptr);

// The stages refused before anything is built: each editable file the submission lacks or
// the source check refuses (stage -> the reason). The handed-out stub takes each refused
// file's place in `editable`, so that the other stages build and are graded: a refusal
// costs only its own stage.
struct SourcePolicy;
std::map<int, std::string> refuse_stages(const fs::path& autograder, const SourcePolicy& policy,
                                         std::map<std::string, std::string>& editable);

}  // namespace classroom
