#include "leaks.h"

#include <cctype>
#include <sstream>

#include "markers.h"

namespace classroom {

namespace {

bool says_something(const std::string& line) {
    if (line == "#pragma unroll") return false;
    int alphanumeric = 0;
    for (unsigned char c : line) alphanumeric += std::isalnum(c) ? 1 : 0;
    return alphanumeric >= 3;
}

void add_lines(std::set<std::string>& lines, const std::string& text, bool markdown) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.insert(comparable(line, markdown));
}

}  // namespace

std::string comparable(const std::string& line, bool markdown) {
    std::string t = trimmed(line);
    if (markdown && !t.empty() && (t[0] == '+' || t[0] == '-') && (t.size() < 2 || (t[1] != '+' && t[1] != '-'))) {
        t = trimmed(t.substr(1));
    }
    return t;
}

std::set<std::string> solution_lines(const fs::path& repo, const Assignment& a) {
    std::set<std::string> solution, given;
    for (const std::string& path : list_files(repo)) {
        // Only the sources a tree is made of: not build folders, not classroom/, and not a
        // generated handout/autograder folder inside the repository, whose solutions would
        // otherwise count as "given" and hide a leak.
        const bool source = starts_with(path, "common/") || starts_with(path, "runner/") ||
                            starts_with(path, "tests/") || starts_with(path, "tools/") || stage_of(path) >= 0;
        if (!source || !has_markers(path)) continue;
        const MarkedFile file = parse_markers(read_file(repo / path), path);
        // The solution: the reference lines of the assigned stages' regions.
        for (const Region& region : file.regions) {
            if (region.assignment >= a.first && region.assignment <= a.last) {
                for (const std::string& line : region.reference) solution.insert(comparable(line, false));
            }
        }
        // What a student gets anyway: the file with the assigned regions stubbed, where the
        // file itself is handed out (the stages before the assignment, and its own).
        if (stage_of(path) > a.last) continue;  // a later stage: not in the tree
        add_lines(given, render(file,
                                [&](int k) {
                                    if (k < a.first) return RegionAs::Reference;
                                    return k <= a.last ? RegionAs::Stub : RegionAs::Removed;
                                }),
                  false);
    }
    std::set<std::string> out;
    for (const std::string& line : solution) {
        if (says_something(line) && !given.count(line)) out.insert(line);
    }
    return out;
}

std::vector<Leak> find_leaks(const Tree& tree, const std::set<std::string>& solution) {
    std::vector<Leak> leaks;
    for (const auto& [path, file] : tree) {
        if (!is_text(file.text)) continue;
        const bool markdown = ends_with(path, ".md");
        std::istringstream in(file.text);
        std::size_t number = 0;
        for (std::string line; std::getline(in, line);) {
            ++number;
            const std::string c = comparable(line, markdown);
            if (solution.count(c)) leaks.push_back({path, number, c});
        }
    }
    return leaks;
}

}  // namespace classroom
