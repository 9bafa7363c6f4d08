// The grader's two outputs: Gradescope's results.json and a report for people.
//
// results.json follows Gradescope's autograder specification
// (gradescope-autograders.readthedocs.io, "Autograder Specifications"): a top-level score,
// output and execution time, one entry per test with its number, name, score, max_score,
// status, tags, output and visibility ("visible", or "after_due_date" for the hidden
// cases), the leaderboard (here: each stage's time over the reference's) and extra_data
// (the seed, the GPU, the time ratios, the isolation in effect) for the instructor.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace classroom {

struct TestResult {
    std::string number;  // "4.3": stage 4, third rubric line
    std::string name;
    double score = 0, max_score = 0;
    bool passed = false;
    std::string output;
    std::string visibility = "visible";  // "after_due_date": hidden until the deadline has passed
    std::vector<std::string> tags;       // "reduce4", "hidden", "int"
};

struct LeaderboardEntry {
    std::string name;
    double value = 0;
    bool ascending = true;  // smaller is better (a time ratio)
};

struct GradeResults {
    std::vector<TestResult> tests;
    std::string output;         // for the whole submission: GPU, seed, refusals
    double execution_time = 0;  // seconds
    std::vector<LeaderboardEntry> leaderboard;
    std::vector<std::pair<std::string, std::string>> extra_data;  // key -> a JSON value, already encoded
    double score() const;
    double max_score() const;
};

std::string json_escape(const std::string& text);  // a JSON string literal, quotes included
std::string results_json(const GradeResults& results);
void write_report(std::ostream& out, const GradeResults& results);

}  // namespace classroom
