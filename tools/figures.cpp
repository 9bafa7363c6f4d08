#include "figures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "figures_query.h"

namespace figures {

namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------- the figure's text
struct Shown {
    std::string number;             // as written, e.g. "32,948,224" or "51.3"
    std::string unit;               // "ns", "us", "GB/s", "%", "x", or ""
    std::string low, high;          // the spread, when shown: "50.9", "51.6"
};

const std::regex kShown(
    R"(^([-+]?[0-9][0-9,]*(?:\.[0-9]+)?) ?(ns|us|ms|s|GB/s|TB/s|%|x|MB|GB|ulp)?(?: \(([0-9][0-9,]*(?:\.[0-9]+)?) ?(?:-|–|to) ?([0-9][0-9,]*(?:\.[0-9]+)?)\))?$)");

Shown parse_shown(const std::string& text) {
    std::smatch m;
    if (!std::regex_match(text, m, kShown)) {
        throw QueryError("a figure's text is a number with an optional unit and (low-high) spread, not '" + text + "'");
    }
    return Shown{m[1], m[2], m[3], m[4]};
}

int decimals(const std::string& number) {
    const auto dot = number.find('.');
    return dot == std::string::npos ? 0 : static_cast<int>(number.size() - dot - 1);
}

// The factor from a column's unit to the unit shown.
double scale(const std::string& column, const std::string& unit) {
    const std::string from = unit_of(column);
    if (from == "ms" && unit == "us") return 1000;
    if (from == "ms" && unit == "ns") return 1e6;
    if (from == "us" && unit == "ns") return 1000;
    if (from == "ms" && unit == "s") return 1e-3;
    if (from == "GB/s" && unit == "TB/s") return 1e-3;
    return 1;
}

std::string format_like(double value, const std::string& like) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals(like), value);
    std::string out = text;
    if (like.find(',') != std::string::npos) {  // thousands separators, as shown
        const auto dot = out.find('.');
        const auto end = dot == std::string::npos ? out.size() : dot;
        const std::size_t first = out[0] == '-' ? 1 : 0;
        for (auto i = static_cast<long>(end) - 3; i > static_cast<long>(first); i -= 3) out.insert(i, ",");
    }
    return out;
}

bool shows(const std::string& number, double value) {
    const double shown = number_of(number);
    const double half = 0.5 * std::pow(10.0, -decimals(number));
    return std::fabs(shown - value) <= half * (1 + 1e-9) + 1e-12 * std::fabs(value);
}

// ---------------------------------------------------------------- pages
struct Link {
    std::size_t begin, end;  // the whole [text](target "query") or [text][label] in the page
    std::string text, target, query;
    std::size_t line;
    std::string label;  // a reference-style figure's label ("" for an inline one)
};

const std::regex kFigureLink(R"(\[([^\]\[]+)\]\(([^)\s]*results/[^)\s]+) \"([^\"]+)\"\))");
// A reference-style figure's definition, alone on its line: [LABEL]: TARGET "QUERY".
const std::regex kFigureDefinition(R"(^\[([^\]\s]+)\]: (\S*results/\S+) \"([^\"]+)\"[ \t]*$)");
// A use of a reference-style link: [TEXT][LABEL] (a figure when LABEL is defined as one).
const std::regex kReferenceUse(R"(\[([^\]\[]+)\]\[([^\]\s]+)\])");

struct Definition {
    std::string target, query;
    std::size_t line;
};

// The page's figure definitions, by label.
std::map<std::string, Definition> figure_definitions(const std::string& page) {
    std::map<std::string, Definition> defined;
    std::istringstream in(page);
    std::size_t number = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        std::smatch m;
        if (std::regex_match(line, m, kFigureDefinition)) defined[m[1]] = {m[2], m[3], number};
    }
    return defined;
}

std::size_t line_at(const std::string& page, std::size_t offset) {
    return static_cast<std::size_t>(std::count(page.begin(), page.begin() + static_cast<long>(offset), '\n')) + 1;
}

// Every figure of the page, inline and reference-style, in the order they stand.
std::vector<Link> figure_links(const std::string& page) {
    std::vector<Link> links;
    for (auto it = std::sregex_iterator(page.begin(), page.end(), kFigureLink); it != std::sregex_iterator(); ++it) {
        const std::size_t begin = static_cast<std::size_t>(it->position(0));
        links.push_back({begin, begin + static_cast<std::size_t>(it->length(0)), (*it)[1], (*it)[2], (*it)[3],
                         line_at(page, begin), ""});
    }
    const std::map<std::string, Definition> defined = figure_definitions(page);
    for (auto it = std::sregex_iterator(page.begin(), page.end(), kReferenceUse); it != std::sregex_iterator(); ++it) {
        const auto d = defined.find((*it)[2]);
        if (d == defined.end()) continue;  // not a figure: another reference link, or code
        const std::size_t begin = static_cast<std::size_t>(it->position(0));
        links.push_back({begin, begin + static_cast<std::size_t>(it->length(0)), (*it)[1], d->second.target,
                         d->second.query, line_at(page, begin), (*it)[2]});
    }
    std::sort(links.begin(), links.end(), [](const Link& a, const Link& b) { return a.begin < b.begin; });
    return links;
}

fs::path source_of(const std::string& root, const std::string& path, const std::string& target) {
    return (fs::path(root) / fs::path(path).parent_path() / target).lexically_normal();
}

// "" when the figure matches its source, else why not.
std::string verify(const std::string& root, const std::string& path, const Link& link, std::string* updated) {
    try {
        const Shown shown = parse_shown(link.text);
        const fs::path source = source_of(root, path, link.target);
        if (source.extension() != ".csv") {
            if (link.query.rfind("line: ", 0) != 0) return "a text source needs the query 'line: TEXT'";
            // "line: TEXT" names the line of the file that holds TEXT; "line: A >> B >> TEXT"
            // the first line holding TEXT after the first line holding B after the first
            // line holding A (sections of a log: the stage's block, then the kernel's line).
            // Where several lines hold TEXT they must all show the number.
            std::vector<std::string> path_parts;
            std::string rest = link.query.substr(6);
            for (std::size_t arrow; (arrow = rest.find(" >> ")) != std::string::npos;) {
                path_parts.push_back(rest.substr(0, arrow));
                rest = rest.substr(arrow + 4);
            }
            const std::string needle = rest;
            std::istringstream in(read(source));
            std::vector<std::string> holding;
            std::size_t reached = 0;  // section markers passed
            for (std::string line; std::getline(in, line);) {
                if (reached < path_parts.size()) {
                    if (line.find(path_parts[reached]) != std::string::npos) ++reached;
                    continue;
                }
                if (line.find(needle) != std::string::npos) {
                    holding.push_back(line);
                    if (!path_parts.empty()) break;
                }
            }
            if (holding.empty()) {
                return "no line of " + link.target + " holds '" + needle + "'" +
                       (path_parts.empty() ? "" : " after '" + path_parts.back() + "'");
            }
            const std::regex token("(^|[^0-9.,])" + std::regex_replace(shown.number, std::regex(R"([.+])"), R"(\$&)") +
                                   "($|[^0-9])");
            const auto showing = std::count_if(holding.begin(), holding.end(),
                                               [&](const std::string& l) { return std::regex_search(l, token); });
            if (showing == 0) return "the line of " + link.target + " that holds '" + needle + "' does not show " + shown.number;
            // Several lines may hold the needle where every one shows the number (a line the
            // file repeats); where they differ, the figure could be any of them.
            if (static_cast<std::size_t>(showing) < holding.size()) {
                return std::to_string(holding.size()) + " lines of " + link.target + " hold '" + needle +
                       "', and not all show " + shown.number + ": name one (more of the line, or 'line: AFTER >> TEXT')";
            }
            return "";
        }
        const Value v = evaluate(table_of(source), link.query);
        const double k = scale(v.column, shown.unit);
        const bool spread = link.query.find(":spread") != std::string::npos;
        if (spread != !shown.low.empty()) return "a :spread query needs the text 'M (LOW-HIGH)', and only it";
        std::string expected = format_like(v.median * k, shown.number) + (shown.unit.empty() ? "" : " " + shown.unit);
        if (spread) expected += " (" + format_like(v.min * k, shown.low) + "-" + format_like(v.max * k, shown.high) + ")";
        if (updated) {  // same format as written: the unit glued to the number or not
            std::string text = link.text;
            const auto at = text.find(shown.number);
            text.replace(at, shown.number.size(), format_like(v.median * k, shown.number));
            if (spread) {
                const auto open = text.rfind('(');
                text = text.substr(0, open) + "(" + format_like(v.min * k, shown.low) + "-" +
                       format_like(v.max * k, shown.high) + ")";
            }
            *updated = text;
        }
        const bool ok = shows(shown.number, v.median * k) &&
                        (!spread || (shows(shown.low, v.min * k) && shows(shown.high, v.max * k)));
        if (ok) return "";
        const bool computed = std::regex_search(link.query, std::regex(" [/*+-] "));
        return "shows " + link.text + ", the data say " + expected +
               (computed && k != 1 ? " (a computed figure keeps its column's unit: no '* 1000' for ms in us)" : "");
    } catch (const std::exception& e) {
        return e.what();
    }
}

// The page without fenced code blocks, inline code and figure links, for the coverage rule.
std::string prose_of(std::string page) {
    std::string out;
    std::istringstream in(page);
    bool fenced = false;
    for (std::string line; std::getline(in, line);) {
        if (trim(line).rfind("```", 0) == 0) {
            fenced = !fenced;
            out += "\n";
            continue;
        }
        out += (fenced || std::regex_match(line, kFigureDefinition) ? "" : line) + "\n";
    }
    out = std::regex_replace(out, kFigureLink, "FIGURE");
    // A reference-style figure too, but not [text][label] whose label is no figure's.
    const std::map<std::string, Definition> defined = figure_definitions(page);
    std::string kept;
    std::size_t copied = 0;
    for (auto it = std::sregex_iterator(out.begin(), out.end(), kReferenceUse); it != std::sregex_iterator(); ++it) {
        if (!defined.count((*it)[2])) continue;
        kept += out.substr(copied, static_cast<std::size_t>(it->position(0)) - copied) + "FIGURE";
        copied = static_cast<std::size_t>(it->position(0) + it->length(0));
    }
    out = kept + out.substr(copied);
    out = std::regex_replace(out, std::regex("`[^`\n]*`"), "CODE");
    return out;
}

// Fenced blocks preceded by <!-- excerpt: results/FILE -->: the block's lines are lines of
// that file, in its order, and where the block leaves out lines of the file between two of
// its own (other than blank ones and SASS's encoding comments) it says so with a "..." line: an excerpt never reads as
// the file where it is not.
void check_excerpts(const std::string& root, const std::string& path, const std::string& page,
                    std::vector<Problem>& problems) {
    static const std::regex marker(R"(<!-- excerpt: (\S+) -->)");
    std::istringstream in(page);
    std::string source;
    bool fenced = false;
    std::size_t number = 0;
    std::vector<std::string> file_lines;
    std::size_t next = 0;          // the file line after the last one matched
    bool matched_any = false;      // a line of this block has been found in the file
    bool gap_marked = false;       // a "..." since the last matched line
    for (std::string line; std::getline(in, line);) {
        ++number;
        std::smatch m;
        if (std::regex_search(line, m, marker)) {
            source = m[1];
            continue;
        }
        if (trim(line).rfind("```", 0) == 0) {
            fenced = !fenced;
            if (fenced && !source.empty()) {
                file_lines.clear();
                try {
                    std::istringstream file(read(source_of(root, path, source)));
                    for (std::string l; std::getline(file, l);) file_lines.push_back(l);
                } catch (const std::exception& e) {
                    problems.push_back({path + ":" + std::to_string(number), e.what()});
                }
                next = 0;
                matched_any = gap_marked = false;
            }
            if (!fenced) source.clear();
            continue;
        }
        if (!fenced || source.empty() || trim(line).empty()) continue;
        if (trim(line) == "...") {
            gap_marked = true;
            continue;
        }
        std::size_t at = next;
        while (at < file_lines.size() && file_lines[at].find(line) == std::string::npos) ++at;
        if (at == file_lines.size()) {
            const bool anywhere = std::any_of(file_lines.begin(), file_lines.end(),
                                              [&](const std::string& l) { return l.find(line) != std::string::npos; });
            problems.push_back({path + ":" + std::to_string(number),
                                (anywhere ? "this excerpt line is out of the order of " : "this excerpt line is not in ") +
                                    source + ": " + line});
            continue;
        }
        bool skipped = false;  // blank lines and SASS's encoding lines (/* 0x... */) do not count
        for (std::size_t k = next; k < at; ++k) {
            const std::string t = trim(file_lines[k]);
            const bool encoding = t.rfind("/*", 0) == 0 && t.size() >= 4 && t.compare(t.size() - 2, 2, "*/") == 0;
            skipped |= !t.empty() && !encoding;
        }
        if (matched_any && skipped && !gap_marked) {
            problems.push_back({path + ":" + std::to_string(number),
                                "the excerpt leaves out lines of " + source + " before this one without a \"...\" line: " + line});
        }
        next = at + 1;
        matched_any = true;
        gap_marked = false;
    }
}

}  // namespace

std::vector<Problem> check_page(const std::string& root, const std::string& path, const std::string& page) {
    std::vector<Problem> problems;
    std::set<std::string> used;
    for (const Link& link : figure_links(page)) {
        used.insert(link.label);
        const std::string why = verify(root, path, link, nullptr);
        if (!why.empty()) problems.push_back({path + ":" + std::to_string(link.line), "[" + link.text + "]: " + why});
    }
    for (const auto& [label, d] : figure_definitions(page)) {
        if (!used.count(label)) {
            problems.push_back({path + ":" + std::to_string(d.line), "the figure definition [" + label + "] is used by no figure"});
        }
    }
    // Coverage: a number with a unit of measurement outside code must be a figure.
    // "x" counts only glued to its number ("1.49x"): "2 x 5120-bit" is arithmetic.
    static const std::regex measured(
        R"((^|[^\w.^/-])([0-9][0-9,]*(?:\.[0-9]+)?)(?: ?(ns|us|ms|GB/s|TB/s)|(%|x))(?![\w/]))");
    const std::string prose = prose_of(page);
    std::istringstream in(prose);
    std::size_t number = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        if (line.find("<!--") != std::string::npos) continue;
        for (auto it = std::sregex_iterator(line.begin(), line.end(), measured); it != std::sregex_iterator(); ++it) {
            problems.push_back({path + ":" + std::to_string(number),
                                "'" + (*it)[2].str() + (*it)[3].str() + (*it)[4].str() +
                                    "' is a measured-looking number that is not a figure link to its source "
                                    "(tools/figures.h)"});
        }
    }
    check_excerpts(root, path, page, problems);
    return problems;
}

std::string update_page(const std::string& root, const std::string& path, const std::string& page,
                        std::vector<Problem>& problems) {
    std::string out;
    std::size_t copied = 0;
    for (const Link& link : figure_links(page)) {
        std::string text = link.text;
        const bool csv = source_of(root, path, link.target).extension() == ".csv";
        const std::string why = csv ? verify(root, path, link, &text) : verify(root, path, link, nullptr);
        // A figure that matches stays as written: at a tie (1.655 shown as 1.65 or 1.66)
        // rewriting it would churn a page whose data did not change.
        if (why.empty()) text = link.text;
        if (!why.empty() && (!csv || why.rfind("shows ", 0) != 0)) {
            problems.push_back({path + ":" + std::to_string(link.line), "[" + link.text + "]: " + why});
            text = link.text;
        }
        out += page.substr(copied, link.begin - copied) + "[" + text + "]" +
               (link.label.empty() ? "(" + link.target + " \"" + link.query + "\")" : "[" + link.label + "]");
        copied = link.end;
    }
    return out + page.substr(copied);
}

std::size_t count_figures(const std::string& page) { return figure_links(page).size(); }

std::vector<std::string> pages(const std::string& root) {
    std::vector<std::string> out;
    if (fs::exists(fs::path(root) / "README.md")) out.push_back("README.md");
    for (const char* dir : {"docs", "assignments", "classroom/answer-key"}) {
        if (!fs::is_directory(fs::path(root) / dir)) continue;
        for (const auto& entry : fs::directory_iterator(fs::path(root) / dir)) {
            if (entry.path().extension() == ".md") out.push_back(std::string(dir) + "/" + entry.path().filename().string());
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace figures
