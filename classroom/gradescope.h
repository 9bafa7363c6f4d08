// The grader's two outputs: Gradescope's results.json and a report for people.
//
// results.json follows Gradescope's autograder specification
// (gradescope-autograders.readthedocs.io, "Autograder Specifications"): a top-level score,
// output and execution time, and one entry per test with its name, score, max_score,
// status, output and visibility ("visible", or "after_due_date" for the hidden cases).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace classroom {

struct TestResult {
    std::string name;
    double score = 0, max_score = 0;
    bool passed = false;
    std::string output;
    std::string visibility = "visible";  // "after_due_date": hidden until the deadline has passed
};

struct GradeResults {
    std::vector<TestResult> tests;
    std::string output;         // for the whole submission: GPU, seed, refusals
    double execution_time = 0;  // seconds
    double score() const;
    double max_score() const;
};

std::string json_escape(const std::string& text);  // a JSON string literal, quotes included
std::string results_json(const GradeResults& results);
void write_report(std::ostream& out, const GradeResults& results);

}  // namespace classroom
