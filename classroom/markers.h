// Solution markers: the lines of a stage that a student writes, marked in the reference.
//
//     // solution (assignment 4): what to write, in one line (becomes the student's TODO)
//     ...the reference code...
//     // stub: code the student's copy has instead (one line each; at least one)
//     // end solution
//
// The reference builds and runs as it is: the markers and the stub are comments. In a
// student tree (classroom generate) the region becomes
//
//     // TODO (assignment 4): what to write, in one line
//     code the student's copy has instead
//
// In a stage's kernel.cu every region belongs to that stage's assignment, and its stub
// calls not_implemented() (common/stage.h), so the student's copy compiles, runs and fails
// verification with a message that names the assignment. A region of comments only (a
// prose region: the sentences of a stage's header that say how its idea is done) has
// comment stubs instead, which say what the student is to work out, and becomes just those
// lines, no TODO line:
//
//     // solution (assignment 2): how, in the header
//     // ...the sentences that give the answer...
//     // stub: // ...a sentence that says what to work out...
//     // end solution
//
// Regions elsewhere (the tests whose expectations are an assignment's answer) may have no
// stub: they are left out.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace classroom {

struct MarkerError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Region {
    int assignment = 0;               // N of "solution (assignment N)"
    std::string todo;                 // the text after "solution (assignment N): "
    std::string indent;               // the opening marker's indentation
    std::size_t open = 0, close = 0;  // line indices of the two markers
    std::vector<std::string> reference;  // the lines between them, stub lines excepted
    std::vector<std::string> stub;       // the stub lines' code, "// stub: " removed
    // Every reference line a comment: a prose region (its stubs are comments too).
    bool prose() const;
};

struct MarkedFile {
    std::vector<std::string> lines;
    std::vector<Region> regions;
};

// Splits text into lines and finds the regions. Throws MarkerError naming `path` and the
// line for an unbalanced, nested or malformed marker.
MarkedFile parse_markers(const std::string& text, const std::string& path);

// What a region becomes in the copy being written.
enum class RegionAs { Reference, Stub, Removed };

// The file with every region rendered as choose(region.assignment) says. Reference keeps
// the code and drops the markers; Stub writes the TODO line and the stub; Removed drops
// the region entirely.
template <typename Choose>
std::string render(const MarkedFile& file, Choose&& choose);

// The checks a kernel file of stage `stage` (reduce`stage`/kernel.cu) must pass, as a list
// of problems (empty: fine): every region belongs to `stage`, has reference code and a stub
// that calls not_implemented() with a message naming the stage and its assignment (a prose
// region: stubs that are comments).
std::vector<std::string> check_stage_regions(const MarkedFile& file, int stage, const std::string& path);

// The text's lines, without their newlines.
std::vector<std::string> split_lines(const std::string& text);

// "  code" -> "code"; the comparison form of a line for the leak check.
std::string trimmed(const std::string& line);

// ---------------------------------------------------------------- implementation
std::string render_lines(const MarkedFile& file, const std::vector<RegionAs>& as);

template <typename Choose>
std::string render(const MarkedFile& file, Choose&& choose) {
    std::vector<RegionAs> as;
    for (const Region& region : file.regions) as.push_back(choose(region.assignment));
    return render_lines(file, as);
}

}  // namespace classroom
