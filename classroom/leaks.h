// The leak check: no line of an assignment's solution may reach its student tree.
//
// The solution lines are the code lines inside the assignment's solution regions, less
// the ones a student is handed anyway (a line that also stands in the harness, in a given
// stage, in a stub or outside the regions of the assigned stages), less lines with nothing
// to give away (braces, blank lines, `#pragma unroll`). The check compares whole lines,
// trimmed, and in Markdown also the lines of a quoted diff without their +/- sign, in
// every file of the tree: code, docs, diagrams and results alike.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "assignment.h"
#include "files.h"
#include "generator.h"

namespace classroom {

// The lines that must not appear, computed from the repository (not from a generated tree).
std::set<std::string> solution_lines(const fs::path& repo, const Assignment& assignment);

struct Leak {
    std::string path;
    std::size_t line = 0;  // 1-based
    std::string text;
};

std::vector<Leak> find_leaks(const Tree& tree, const std::set<std::string>& solution);

// Prose: the sentences of the assigned stages' prose regions (markers.h), as every run of
// kPhraseWords consecutive words (lower case, punctuation and symbols dropped), less the
// runs a student is handed anyway. A file of the tree that holds one restates the solution
// in words, though no line of it matches: a handout's sentence, a header left unmarked.
constexpr std::size_t kPhraseWords = 7;
std::set<std::string> solution_phrases(const fs::path& repo, const Assignment& assignment);
// Each place in the tree where a run of the phrases stands (a leak per line, its first word's).
std::vector<Leak> find_phrase_leaks(const Tree& tree, const std::set<std::string>& phrases);

// The form in which lines are compared: trimmed; in Markdown, a leading diff sign dropped.
std::string comparable(const std::string& line, bool markdown);

}  // namespace classroom
