// classroom generate: an assignment's student tree and its autograder.
//
// The student tree is a standalone project (the two README commands work in it): the
// harness, the runner, the tests and the tools; every stage before the assignment
// complete, as references; the assigned stages with their solution regions replaced by
// stubs; no later stage; the chapters of the given stages and the handouts. The
// autograder holds what the student must not see: the solutions, the hidden cases and the
// hash of every file handed out (docs/classroom.md).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "assignment.h"
#include "files.h"

namespace classroom {

struct TreeFile {
    std::string text;
    bool executable = false;
};
using Tree = std::map<std::string, TreeFile>;  // relative path -> file

// The student tree, in memory. Throws MarkerError for a malformed marker in the repository.
Tree make_student_tree(const fs::path& repo, const Assignment& assignment);

// The files of a stage folder with every region rendered as the reference (markers
// dropped): what the autograder compiles as the solution.
Tree solution_stage(const fs::path& repo, int stage);

// "<sha256>  <editable|protected>  <path>" per file: the tamper check's record.
std::string manifest_text(const Tree& tree, const Assignment& assignment);
bool is_editable(const std::string& path, const Assignment& assignment);  // reduceK/kernel.cu of an assigned stage

struct ManifestEntry {
    std::string hash, role, path;
};
std::vector<ManifestEntry> parse_manifest(const std::string& text);
// The files a student edits: the manifest's `editable` paths (reduceN/kernel.cu), in order.
std::vector<std::string> editable_paths(const std::vector<ManifestEntry>& entries);

// Writes a tree into `dir` (which is emptied first).
void write_tree(const Tree& tree, const fs::path& dir);

// What the instructor chooses at generate time, written to the autograder's settings.sh,
// which setup.sh and run_autograder source (an instructor may edit it, then `classroom pack`).
struct AutograderSettings {
    // Seconds for one submission's grading, results included: below Gradescope's default
    // limit of 10 minutes a submission, so that even a slow submission gets its results.json.
    int time_budget_seconds = 540;
    // CMake's CUDA architectures ("90", "80-real;90a"), exported as CUDAARCHS by setup.sh for
    // an image built without a GPU; empty: the build asks nvidia-smi for the GPU.
    std::string cuda_architectures;
    // The rubric (autograder/rubric.txt and the handouts' tables); empty: the defaults.
    std::optional<GradingRubric> rubric;
};
std::string settings_text(const AutograderSettings& settings);

// Writes <out>/student, <out>/autograder and <out>/autograder.zip; returns a summary. The
// rubric goes into the autograder (rubric.txt) and into the handouts' tables.
std::string generate(const fs::path& repo, const Assignment& assignment, const fs::path& out,
                     const AutograderSettings& settings = {});

// Writes the zip Gradescope takes (setup.sh and run_autograder at its root) from an
// autograder folder: what generate does last, and `classroom pack` after an edit. Throws
// std::invalid_argument, one line, for a folder that is not a whole autograder.
void pack_autograder(const fs::path& autograder, const fs::path& zip);

// A handout (assignments/reduceN.md) with its rubric block, between the lines
// kRubricBegin and kRubricEnd, written from `rubric`; throws if it has no such block.
extern const char* const kRubricBegin;
extern const char* const kRubricEnd;
std::string handout_with_rubric(const std::string& handout, const GradingRubric& rubric, int stage);

// The stage a path belongs to: 4 for "reduce4/...", -1 for anything else.
int stage_of(const std::string& path);

// The source files whose solution markers the generator reads: C++ and CUDA sources.
bool has_markers(const std::string& path);

}  // namespace classroom
