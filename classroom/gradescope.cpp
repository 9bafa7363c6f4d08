#include "gradescope.h"

#include <cstdio>
#include <numeric>

namespace classroom {

namespace {

// Points (in hundredths: partial performance credit is rounded to them) and time ratios, to
// six decimals without trailing zeros: 100, 87.5, 199.97, 1.012. (Four significant digits
// would print a total of 199.97 as 200.)
std::string number(double value) {
    char text[64];
    std::snprintf(text, sizeof text, "%.6f", value);
    std::string s = text;
    while (s.size() > 1 && s.back() == '0' && s.find('.') != std::string::npos) s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s == "-0" ? "0" : s;
}

}  // namespace

double GradeResults::score() const {
    return std::accumulate(tests.begin(), tests.end(), 0.0, [](double s, const TestResult& t) { return s + t.score; });
}

double GradeResults::max_score() const {
    return std::accumulate(tests.begin(), tests.end(), 0.0,
                           [](double s, const TestResult& t) { return s + t.max_score; });
}

std::string json_escape(const std::string& text) {
    std::string out = "\"";
    for (unsigned char c : text) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            case '\r': out += "\\r"; break;
            default:
                if (c >= 0x80) {
                    out += '?';  // a byte of another encoding: results.json must stay valid UTF-8
                } else if (c < 0x20) {
                    char escaped[8];
                    std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
                    out += escaped;
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    return out + "\"";
}

std::string results_json(const GradeResults& results) {
    std::string out = "{\n";
    out += "  \"score\": " + number(results.score()) + ",\n";
    out += "  \"execution_time\": " + number(results.execution_time) + ",\n";
    out += "  \"output\": " + json_escape(results.output) + ",\n";
    out += "  \"stdout_visibility\": \"hidden\",\n";
    if (!results.leaderboard.empty()) {
        out += "  \"leaderboard\": [";
        for (std::size_t i = 0; i < results.leaderboard.size(); ++i) {
            const LeaderboardEntry& e = results.leaderboard[i];
            out += std::string(i ? ", " : "") + "{\"name\": " + json_escape(e.name) + ", \"value\": " + number(e.value) +
                   (e.ascending ? ", \"order\": \"asc\"}" : "}");
        }
        out += "],\n";
    }
    if (!results.extra_data.empty()) {
        out += "  \"extra_data\": {";
        for (std::size_t i = 0; i < results.extra_data.size(); ++i) {
            out += std::string(i ? ", " : "") + json_escape(results.extra_data[i].first) + ": " + results.extra_data[i].second;
        }
        out += "},\n";
    }
    out += "  \"tests\": [";
    for (std::size_t i = 0; i < results.tests.size(); ++i) {
        const TestResult& t = results.tests[i];
        out += i ? ",\n    {" : "\n    {";
        if (!t.number.empty()) out += "\"number\": " + json_escape(t.number) + ", ";
        out += "\"name\": " + json_escape(t.name) + ", ";
        out += "\"score\": " + number(t.score) + ", ";
        out += "\"max_score\": " + number(t.max_score) + ", ";
        out += "\"status\": " + json_escape(t.passed ? "passed" : "failed") + ", ";
        out += "\"visibility\": " + json_escape(t.visibility) + ", ";
        if (!t.tags.empty()) {
            out += "\"tags\": [";
            for (std::size_t k = 0; k < t.tags.size(); ++k) out += (k ? ", " : "") + json_escape(t.tags[k]);
            out += "], ";
        }
        out += "\"output\": " + json_escape(t.output) + "}";
    }
    out += results.tests.empty() ? "]\n" : "\n  ]\n";
    return out + "}\n";
}

void write_report(std::ostream& out, const GradeResults& results) {
    out << results.output << "\n\n";
    // One line per test; its output below it, indented.
    for (const TestResult& t : results.tests) {
        char line[256];
        std::snprintf(line, sizeof line, "%-6s %5s / %-4s %s%s", t.passed ? "pass" : "FAIL", number(t.score).c_str(),
                      number(t.max_score).c_str(), t.name.c_str(),
                      t.visibility == "visible" ? "" : "   (hidden from students until after the deadline)");
        out << line << "\n";
        if (!t.output.empty()) {
            std::string indented = "         ";
            for (char c : t.output) indented += c == '\n' ? std::string("\n         ") : std::string(1, c);
            out << indented << "\n";
        }
    }
    out << "\ntotal: " << number(results.score()) << " / " << number(results.max_score()) << "\n";
}

}  // namespace classroom
