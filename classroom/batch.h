// The instructor's commands around `classroom grade` (docs/classroom.md):
//
//   classroom batch       grades every submission of a class, each in a fresh work folder,
//                         each by a `classroom grade` of its own (a child process), into
//                         one report per student and scores.csv;
//   classroom selftest    grades the autograder's own reference (full marks expected) and
//                         the handed-out stub (0 expected) before the autograder is uploaded;
//   classroom similarity  exports every submission's kernels, with the stub as the base
//                         file, in the layouts JPlag and MOSS take.
//
// Each grading is a child process so that a submission that crashes the grader, or a
// process it leaves behind, cannot touch the next student's grading or the batch's table.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "files.h"

namespace classroom {

// "" when this machine shows a GPU (nvidia-smi -L lists one), else why not, in one line.
// Grading without one builds everything and then cannot grade (exit 3), so batch and
// selftest ask first.
std::string gpu_missing();

// Whether a batch may run student code with these rights: "" yes, else the refusal. As root
// without --run-as every submission would build and run as root, the risk the guide warns
// about; without root nothing keeps one student's code from the next student's grading (it
// runs as the grader's user and could replace the judge). --allow-unisolated accepts either
// risk, and `warning` then gets the line to print.
std::string isolation_refusal(bool running_as_root, const std::string& run_as, bool allow_unisolated, std::string& warning);

// One student's upload: an immediate subfolder of the submissions folder.
struct Submission {
    std::string name;  // the folder's name: the student, as the class's export named them
    fs::path folder;
};
// Every immediate subfolder, sorted by name (hidden folders and __MACOSX left out); a plain
// file at the top is not a submission, and goes to `ignored` for the caller to report.
std::vector<Submission> list_submissions(const fs::path& submissions, std::vector<std::string>* ignored = nullptr);

// What a child grader's results.json says: the score, the maximum (the sum of the tests'
// max_score) and each rubric part (the test's name as the grader wrote it, and its score).
struct ScoreSheet {
    double score = 0, max_score = 0;
    std::vector<std::pair<std::string, double>> parts;
};
ScoreSheet read_score_sheet(const fs::path& results_json);  // throws std::runtime_error naming the file

// One graded row of scores.csv. exit_status is the grader's: 0 full marks, 1 points lost,
// 3 could not grade, anything else a grader error (-1: it crashed or ran past its time);
// `sheet` is read only for 0 and 1, so a submission that was not graded never shows a zero.
struct BatchRow {
    std::string name;
    int exit_status = 3;
    ScoreSheet sheet;
    bool graded() const { return exit_status == 0 || exit_status == 1; }
};
// scores.csv: name, score, max, exit_status, then one column per rubric part, in the
// grader's numbering order; an ungraded row has its status and empty cells.
std::string scores_csv(const std::vector<BatchRow>& rows);

struct BatchOptions {
    fs::path classroom;    // the `classroom` executable each submission is graded by
    fs::path autograder;   // the folder classroom generate wrote
    fs::path submissions;  // one subfolder per student
    fs::path out;          // OUT/<name>/{report.txt,results.json,work/}, OUT/trusted, OUT/scores.csv
    std::string run_as;    // as root: the user each submission builds and runs as
    int time_budget = 0;   // seconds per submission (0: the grader's own step limits only)
    int jobs = 0;          // build jobs per grading (0: the machine's cores)
};
// Grades every submission, one after another; a line per student goes to `log`. Returns
// 0 when every submission was graded, 3 when one or more could not be (their rows say so).
int grade_batch(const BatchOptions& options, std::ostream& log);

// The reference solution must get full marks and the stub 0. Returns 0 when both hold,
// 1 when one does not, 3 when this machine cannot tell (no GPU, a grading that could not
// grade); one line per grading and a verdict line go to `out`.
int selftest(const fs::path& classroom, const fs::path& autograder, const std::string& run_as, std::ostream& out);

// Writes OUT/jplag/{submissions/<student>,base}/ and OUT/moss/{<student>,base}/ with each
// kernel as <reduceN>_kernel.cu, and OUT/README.txt with the commands and the list of
// students who handed in no kernel for a stage. Returns that list ("alice: reduce4/kernel.cu").
std::vector<std::string> export_for_similarity(const fs::path& autograder, const fs::path& submissions, const fs::path& out);

}  // namespace classroom
