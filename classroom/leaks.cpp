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

// The words of a text with the line each starts on: runs of letters, digits and '_', in
// lower case.
struct Words {
    std::vector<std::string> words;
    std::vector<std::size_t> lines;  // 1-based
};

Words words_of(const std::string& text) {
    Words w;
    std::string word;
    std::size_t line = 1, start = 1;
    for (const char c : text + "\n") {
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
            if (word.empty()) start = line;
            word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        } else if (!word.empty()) {
            w.words.push_back(word);
            w.lines.push_back(start);
            word.clear();
        }
        if (c == '\n') ++line;
    }
    return w;
}

// Every run of kPhraseWords words, each with the line its first word is on.
template <typename F>
void each_phrase(const std::string& text, F&& f) {
    const Words w = words_of(text);
    for (std::size_t i = 0; i + kPhraseWords <= w.words.size(); ++i) {
        std::string phrase = w.words[i];
        for (std::size_t k = 1; k < kPhraseWords; ++k) phrase += " " + w.words[i + k];
        f(phrase, w.lines[i]);
    }
}

// Each marked source file a tree is made of (not build folders, not classroom/, and not a
// generated handout/autograder folder inside the repository, whose solutions would
// otherwise count as "given" and hide a leak), parsed; with the text a student of `a` is
// handed of it (the assigned regions stubbed, later ones removed), or nullptr when the
// file is a later stage's, which is not in the tree.
template <typename F>
void each_marked_source(const fs::path& repo, const Assignment& a, F&& f) {
    for (const std::string& path : list_files(repo)) {
        const bool source = starts_with(path, "common/") || starts_with(path, "runner/") ||
                            starts_with(path, "tests/") || starts_with(path, "tools/") || stage_of(path) >= 0;
        if (!source || !has_markers(path)) continue;
        const MarkedFile file = parse_markers(read_file(repo / path), path);
        if (stage_of(path) > a.last) {
            f(file, static_cast<const std::string*>(nullptr));
            continue;
        }
        const std::string handed = render(file, [&](int k) {
            if (k < a.first) return RegionAs::Reference;
            return k <= a.last ? RegionAs::Stub : RegionAs::Removed;
        });
        f(file, &handed);
    }
}

}  // namespace

std::set<std::string> solution_phrases(const fs::path& repo, const Assignment& a) {
    std::set<std::string> solution, given;
    each_marked_source(repo, a, [&](const MarkedFile& file, const std::string* handed) {
        for (const Region& region : file.regions) {
            if (!region.prose() || region.assignment < a.first || region.assignment > a.last) continue;
            std::string text;
            for (const std::string& line : region.reference) text += line + "\n";
            each_phrase(text, [&](const std::string& phrase, std::size_t) { solution.insert(phrase); });
        }
        if (handed) each_phrase(*handed, [&](const std::string& phrase, std::size_t) { given.insert(phrase); });
    });
    std::set<std::string> out;
    for (const std::string& phrase : solution) {
        if (!given.count(phrase)) out.insert(phrase);
    }
    return out;
}

std::vector<Leak> find_phrase_leaks(const Tree& tree, const std::set<std::string>& phrases) {
    std::vector<Leak> leaks;
    for (const auto& [path, file] : tree) {
        if (!is_text(file.text)) continue;
        std::size_t last_line = 0;
        each_phrase(file.text, [&](const std::string& phrase, std::size_t line) {
            if (line != last_line && phrases.count(phrase)) {
                leaks.push_back({path, line, phrase});
                last_line = line;
            }
        });
    }
    return leaks;
}

std::string comparable(const std::string& line, bool markdown) {
    std::string t = trimmed(line);
    if (markdown && !t.empty() && (t[0] == '+' || t[0] == '-') && (t.size() < 2 || (t[1] != '+' && t[1] != '-'))) {
        t = trimmed(t.substr(1));
    }
    return t;
}

std::set<std::string> solution_lines(const fs::path& repo, const Assignment& a) {
    std::set<std::string> solution, given;
    each_marked_source(repo, a, [&](const MarkedFile& file, const std::string* handed) {
        // The solution: the reference lines of the assigned stages' regions.
        for (const Region& region : file.regions) {
            if (region.assignment >= a.first && region.assignment <= a.last) {
                for (const std::string& line : region.reference) solution.insert(comparable(line, false));
            }
        }
        // What a student gets anyway: the file as handed out.
        if (handed) add_lines(given, *handed, false);
    });
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
