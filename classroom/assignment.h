// The assignments: which stages a student writes, and how each stage is graded.
//
// An assignment is one stage ("reduce4") or a run of stages ("reduce1..reduce4"). Its
// student tree has every stage before the first complete, as references, the assigned
// stages as stubs, and no later stage (a later stage contains the earlier solutions).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace classroom {

struct Assignment {
    int first = 0, last = 0;  // stage numbers, 1 <= first <= last <= 9 (folders reduce1 ... reduce9)
    std::vector<int> stages() const;
    std::string name() const;  // "reduce4", "reduce1..reduce4"
};

// "reduce4", "4", "reduce1..reduce4", "1..4"; throws std::invalid_argument with the reason.
Assignment parse_assignment(const std::string& text);

std::string stage_name(int stage);  // 4 -> "reduce4"

// What a stage's folder declares: its record in reduceN/kernel.cu (common/stage.h's Stage:
// `.idea`, `.min_block`, `.chapter`), the chapter a file of the tree. Read from the instructor's
// tree (never from a submission); throws std::runtime_error, one line, where the folder, the
// record's field or the chapter is missing.
struct StageFacts {
    std::string idea;     // what the student builds, for the README
    int min_block = 0;    // the smallest block the stage's kernel supports
    std::string chapter;  // "docs/04-sync-removal.md", handed out after the deadline
};
StageFacts stage_facts(const std::filesystem::path& repo, int stage);
// The stage numbers of the tree's folders reduce0 ... reduce9 that hold a kernel.cu, in order.
std::vector<int> stages_in(const std::filesystem::path& repo);

// The tree's own GPU tests of a stage (the grader runs them as feedback, worth nothing).
std::string public_tests_filter(int stage);  // "Stages/*/reduce4_*"

// The rubric of one stage: 100 points, every one decided by the judge (classroom/judge),
// which never runs the student's code in its own process. The tree's own tests still run,
// for the student to read, and earn nothing: their process contains the student's code.
struct Rubric {
    static constexpr double kPublicTests = 20;     // the public tests' sizes, fresh inputs, checked by the judge
    static constexpr double kHiddenGroup = 10;     // each of the four hidden groups
    static constexpr double kRacecheck = 10;       // compute-sanitizer racecheck: no hazard
    static constexpr double kMemcheck = 5;         // compute-sanitizer memcheck: no error
    static constexpr double kPerformance = 25;     // the time ratio to the reference
    static constexpr double kTotal = kPublicTests + 4 * kHiddenGroup + kRacecheck + kMemcheck + kPerformance;
};

// The rubric an autograder grades by: `autograder/rubric.txt`, which `classroom generate`
// writes (the defaults above, or the instructor's --rubric FILE) and the grader reads.
// Its defaults are classroom/default_rubric.txt; the stage's title and chapter are never in it.
struct GradingRubric {
    // Points of each part of every stage.
    double public_cases = Rubric::kPublicTests;
    double hidden_group = Rubric::kHiddenGroup;  // each of the four hidden groups
    double racecheck = Rubric::kRacecheck;
    double memcheck = Rubric::kMemcheck;
    double performance = Rubric::kPerformance;
    // Full performance points at or below this ratio to the reference's time, per stage.
    std::map<int, double> full_points_at;
    // The smallest block of every case the grader runs, per stage (up to 1024, a power of two).
    std::map<int, int> smallest_block;
    // The sanitizers and the timing run only once every public case passes: a broken
    // kernel earns nothing for being race-free or fast.
    bool gate_on_public_cases = true;
    // Partial performance credit falls linearly from full at the threshold to none at the
    // previous stage's own ratio (measured in the same grading) less this margin, so that
    // the previous stage's code handed in still earns none; below 0: all or nothing.
    double partial_margin = 0.05;
    // A ratio this close to the threshold is timed once more and the two ratios averaged
    // (the judge's noise could otherwise decide it); 0: never.
    double remeasure_band = 0.02;

    double stage_total() const;  // every part once, the hidden groups each (hidden_groups())
    double threshold(int stage) const;  // throws std::out_of_range for a stage it does not name
    int min_block(int stage) const;     // likewise
    // The performance points of a verified timing.
    double performance_points(int stage, double vs_reference, double previous_vs_reference) const;
};

// The defaults for an assignment's stages: classroom/default_rubric.txt of the tree, each
// stage's smallest block from the records where the file names none.
GradingRubric default_rubric(const std::filesystem::path& repo, const Assignment& a);
// rubric.txt: what generate writes, with a comment on every setting.
std::string rubric_file(const GradingRubric& rubric, const Assignment& a);
// Reads a rubric file over `base`; every stage of `a` must then have its threshold and
// smallest block. Throws std::invalid_argument("rubric.txt line N: ..." or "rubric.txt: ...").
GradingRubric read_rubric(const std::string& text, const Assignment& a, const GradingRubric& base = {});
// The handout's "How it is graded" table of one stage, from the rubric.
std::string rubric_table(const GradingRubric& rubric, int stage);

// The hidden groups every stage is graded on (classroom/judge/judge.cu defines them).
const std::vector<std::string>& hidden_groups();  // "int", "float", "double", "misaligned"

}  // namespace classroom
