#include "markers.h"

#include <regex>
#include <sstream>

namespace classroom {

namespace {

const std::regex kOpen(R"(^(\s*)// solution \(assignment (\d+)\): (.+)$)");
const std::regex kStub(R"(^\s*// stub: (.*)$)");
const std::regex kClose(R"(^\s*// end solution\s*$)");
// Anything that starts like a marker but is not one of the three forms: a typo that would
// otherwise leave solution code in a student's copy.
const std::regex kLooksLikeMarker(R"(^\s*// (solution|stub|end solution)\b.*$)");

[[noreturn]] void fail(const std::string& path, std::size_t line, const std::string& what) {
    throw MarkerError(path + ":" + std::to_string(line + 1) + ": " + what);
}

}  // namespace

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

bool Region::prose() const {
    for (const std::string& line : reference) {
        if (trimmed(line).rfind("//", 0) != 0) return false;
    }
    return !reference.empty();
}

std::string trimmed(const std::string& line) {
    const auto first = line.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return "";
    const auto last = line.find_last_not_of(" \t\r\n");
    return line.substr(first, last - first + 1);
}

MarkedFile parse_markers(const std::string& text, const std::string& path) {
    MarkedFile file;
    file.lines = split_lines(text);
    Region* open = nullptr;
    for (std::size_t i = 0; i < file.lines.size(); ++i) {
        const std::string& line = file.lines[i];
        std::smatch m;
        if (std::regex_match(line, m, kOpen)) {
            if (open) fail(path, i, "a solution region opens inside the one opened at line " + std::to_string(open->open + 1));
            file.regions.push_back(Region{std::stoi(m[2]), m[3], m[1], i, 0, {}, {}});
            open = &file.regions.back();
        } else if (std::regex_match(line, m, kStub)) {
            if (!open) fail(path, i, "'// stub:' outside a solution region");
            open->stub.push_back(m[1]);
        } else if (std::regex_match(line, kClose)) {
            if (!open) fail(path, i, "'// end solution' without a region to close");
            if (open->reference.empty()) fail(path, i, "a solution region with no reference code");
            open->close = i;
            open = nullptr;
        } else if (std::regex_match(line, kLooksLikeMarker)) {
            fail(path, i, "not a marker, but looks like one: " + trimmed(line));
        } else if (open) {
            if (!open->stub.empty()) fail(path, i, "reference code after a '// stub:' line: stubs come last");
            open->reference.push_back(line);
        }
    }
    if (open) fail(path, open->open, "solution region never closed ('// end solution')");
    return file;
}

std::string render_lines(const MarkedFile& file, const std::vector<RegionAs>& as) {
    std::string out;
    std::size_t next = 0;  // the next line to copy
    for (std::size_t r = 0; r < file.regions.size(); ++r) {
        const Region& region = file.regions[r];
        for (; next < region.open; ++next) out += file.lines[next] + "\n";
        if (as[r] == RegionAs::Reference) {
            for (const std::string& line : region.reference) out += line + "\n";
        } else if (as[r] == RegionAs::Stub) {
            if (!region.prose()) {
                out += region.indent + "// TODO (assignment " + std::to_string(region.assignment) + "): " + region.todo + "\n";
            }
            for (const std::string& line : region.stub) out += region.indent + line + "\n";
        }
        next = region.close + 1;
    }
    for (; next < file.lines.size(); ++next) out += file.lines[next] + "\n";
    return out;
}

std::vector<std::string> check_stage_regions(const MarkedFile& file, int stage, const std::string& path) {
    std::vector<std::string> problems;
    const std::string name = "reduce" + std::to_string(stage);
    if (stage >= 1 && file.regions.empty()) problems.push_back(path + ": no solution region: nothing to assign");
    for (const Region& region : file.regions) {
        const std::string where = path + ":" + std::to_string(region.open + 1) + ": ";
        if (region.assignment != stage) {
            problems.push_back(where + "region of assignment " + std::to_string(region.assignment) + " in " + name);
        }
        if (region.prose()) {
            bool comments = !region.stub.empty();
            for (const std::string& line : region.stub) comments = comments && trimmed(line).rfind("//", 0) == 0;
            if (!comments) problems.push_back(where + "a region of comments needs stubs that are comments (\"// stub: // ...\")");
            continue;
        }
        std::string stub;
        for (const std::string& line : region.stub) stub += line + "\n";
        if (stub.find("not_implemented(") == std::string::npos) {
            problems.push_back(where + "the stub does not call not_implemented()");
        }
        if (stub.find("\"" + name + ": ") == std::string::npos ||
            stub.find("(assignment " + std::to_string(stage) + ")\"") == std::string::npos) {
            problems.push_back(where + "the stub's message must start with \"" + name + ": \" and end with \"(assignment " +
                               std::to_string(stage) + ")\"");
        }
    }
    return problems;
}

}  // namespace classroom
