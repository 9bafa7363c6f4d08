// classroom grade: grades a student tree or a submission folder against an autograder.
//
// 1. Tamper check: every handed-out file the submission contains, other than the files the
//    student edits, must hash as the generator recorded (manifest.txt); else the grader
//    refuses with one line and a zero. Only the editable files are taken from it.
// 2. Build: the autograder's own copy of the student tree, with the editable files in
//    place, plus the grading programs (grading/), under a time limit; compiler errors are
//    shown to the student.
// 3. Correctness: the tree's public GPU tests of each stage, then the hidden groups, each
//    under a time limit, with a fresh seed every grading.
// 4. Races: compute-sanitizer racecheck and memcheck on the stage, once it is correct.
// 5. Performance, once it is correct: the median time against the reference solution and
//    against the previous stage, in one process on this GPU.
// 6. The report, Gradescope's results.json, and the exit status: 0 full marks, 1 points
//    lost, 2 a usage error, 3 the grader could not grade (no GPU, no compute-sanitizer,
//    a broken autograder).
#pragma once

#include <cstdint>
#include <map>
#include <string>

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
};

struct Graded {
    GradeResults results;
    int exit_status = 0;
};

Graded grade(const GradeOptions& options);

// The tamper check alone: "" when the submission may be graded, else the one-line reason.
// `editable` receives the submission's copy of each editable file (path -> text).
std::string check_submission(const fs::path& autograder, const fs::path& submission,
                             std::map<std::string, std::string>& editable);

}  // namespace classroom
