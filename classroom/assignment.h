// The assignments: which stages a student writes, and how each stage is graded.
//
// An assignment is one stage ("reduce4") or a run of stages ("reduce1..reduce4"). Its
// student tree has every stage before the first complete, as references, the assigned
// stages as stubs, and no later stage (a later stage contains the earlier solutions).
#pragma once

#include <string>
#include <vector>

namespace classroom {

struct Assignment {
    int first = 0, last = 0;  // stage numbers, 1 <= first <= last <= 7
    std::vector<int> stages() const;
    std::string name() const;  // "reduce4", "reduce1..reduce4"
};

// "reduce4", "4", "reduce1..reduce4", "1..4"; throws std::invalid_argument with the reason.
Assignment parse_assignment(const std::string& text);

std::string stage_name(int stage);  // 4 -> "reduce4"

// How one stage is graded (docs/classroom.md justifies the numbers).
struct StageGrading {
    int stage;
    const char* title;       // what the student builds, for the README and the report
    const char* chapter;     // its chapter in docs/, handed out after the deadline
    // Performance: full points when the submission's median time is at most this many
    // times the reference solution's, each in its own worker, timed by the judge.
    double max_time_ratio;
    // The smallest block the stage must support (up to 1024): reduce4 on need two warps;
    // reduce7's reference also runs 32-thread blocks, but the assignment asks for 64.
    int min_block;
};
const StageGrading& grading_of(int stage);

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

// The hidden groups every stage is graded on (classroom/judge/judge.cu defines them).
const std::vector<std::string>& hidden_groups();  // "int", "float", "double", "misaligned"

}  // namespace classroom
