#include "assignment.h"

#include "files.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace classroom {

std::vector<int> Assignment::stages() const {
    std::vector<int> stages;
    for (int s = first; s <= last; ++s) stages.push_back(s);
    return stages;
}

std::string Assignment::name() const {
    return first == last ? stage_name(first) : stage_name(first) + ".." + stage_name(last);
}

std::string stage_name(int stage) { return "reduce" + std::to_string(stage); }

Assignment parse_assignment(const std::string& text) {
    static const std::regex form(R"(^(?:reduce)?(\d+)(?:\.\.(?:reduce)?(\d+))?$)");
    std::smatch m;
    if (!std::regex_match(text, m, form)) {
        throw std::invalid_argument("an assignment is a stage or a run of stages, such as reduce4 or reduce1..reduce4, not '" +
                                    text + "'");
    }
    Assignment a;
    a.first = std::stoi(m[1]);
    a.last = m[2].matched ? std::stoi(m[2]) : a.first;
    if (a.first < 1 || a.last > 9 || a.first > a.last) {
        throw std::invalid_argument("assignments are stages reduce1 ... reduce9, in order (reduce0 is the given baseline), not '" +
                                    text + "'");
    }
    return a;
}

StageFacts stage_facts(const std::filesystem::path& repo, int stage) {
    const std::filesystem::path kernel = repo / stage_name(stage) / "kernel.cu";
    if (!std::filesystem::is_regular_file(kernel)) throw std::runtime_error("no stage folder " + stage_name(stage) + " in " + repo.string());
    const std::string text = read_file(kernel);
    // The record: `extern const Stage reduceN_stage = { .name = "reduceN", ... };`
    const auto record = text.find("extern const Stage " + stage_name(stage) + "_stage");
    if (record == std::string::npos) throw std::runtime_error(kernel.string() + ": no record " + stage_name(stage) + "_stage");
    const std::string fields = text.substr(record, text.find("};", record) - record);
    // A field's value: `.NAME = VALUE` where VALUE matches `value` (one group).
    const auto field = [&](const std::string& name, const std::string& value) -> std::string {
        std::smatch m;
        if (!std::regex_search(fields, m, std::regex("\\." + name + " = " + value))) {
            throw std::runtime_error(kernel.string() + ": the record has no ." + name);
        }
        return m[1];
    };
    StageFacts facts;
    facts.idea = field("idea", R"re("([^"]+)")re");
    facts.min_block = std::stoi(field("min_block", R"((\d+))"));
    facts.chapter = field("chapter", R"re("([^"]+)")re");
    if (!std::filesystem::is_regular_file(repo / facts.chapter)) {
        throw std::runtime_error(kernel.string() + ": the record's chapter " + facts.chapter + " is not in " + repo.string());
    }
    return facts;
}

std::vector<int> stages_in(const std::filesystem::path& repo) {
    std::vector<int> stages;
    for (int k = 0; k <= 9; ++k) {
        if (std::filesystem::is_regular_file(repo / stage_name(k) / "kernel.cu")) stages.push_back(k);
    }
    return stages;
}

std::string public_tests_filter(int stage) {
    const std::string filter = "Stages/*/" + stage_name(stage) + "_*";
    return stage == 7 ? filter + ":Reduce7*" : filter;
}

double GradingRubric::stage_total() const {
    return public_cases + hidden_groups().size() * hidden_group + racecheck + memcheck + performance;
}

double GradingRubric::threshold(int stage) const {
    const auto it = full_points_at.find(stage);
    if (it == full_points_at.end()) throw std::out_of_range("the rubric has no full-points-at for " + stage_name(stage));
    return it->second;
}

int GradingRubric::min_block(int stage) const {
    const auto it = smallest_block.find(stage);
    if (it == smallest_block.end()) throw std::out_of_range("the rubric has no smallest-block for " + stage_name(stage));
    return it->second;
}

double GradingRubric::performance_points(int stage, double vs_reference, double previous_vs_reference) const {
    const double full_at = threshold(stage);
    if (vs_reference <= full_at) return performance;
    const double none_at = previous_vs_reference - partial_margin;
    if (partial_margin < 0 || none_at <= full_at || vs_reference >= none_at) return 0;
    // Linear between the two, in whole points' hundredths (a score a person can read).
    return std::round(performance * (none_at - vs_reference) / (none_at - full_at) * 100) / 100;
}

namespace {

std::string number(double value) {
    std::ostringstream out;
    out << value;
    return out.str();
}

}  // namespace

std::string rubric_file(const GradingRubric& r, const Assignment& a) {
    std::ostringstream out;
    out << "# The rubric of " << a.name() << ", read by the grader at every grading. `classroom generate\n"
        << "# --rubric FILE` writes it with the handouts' tables to match; after an edit here, `classroom pack`\n"
        << "# rebuilds the zip (and the handouts you gave out no longer show these numbers).\n"
        << "#\n"
        << "# points PART N: the points of each part of every stage (hidden-group: each of the four groups).\n"
        << "points public-cases " << number(r.public_cases) << "\n"
        << "points hidden-group " << number(r.hidden_group) << "\n"
        << "points racecheck " << number(r.racecheck) << "\n"
        << "points memcheck " << number(r.memcheck) << "\n"
        << "points performance " << number(r.performance) << "\n"
        << "# gate on: the sanitizers and the timing run only once every public case passes (off: always).\n"
        << "gate " << (r.gate_on_public_cases ? "on" : "off") << "\n"
        << "# full-points-at STAGE RATIO: full performance points at or below RATIO times the reference's time.\n";
    for (int k : a.stages()) out << "full-points-at " << stage_name(k) << " " << number(r.threshold(k)) << "\n";
    out << "# smallest-block STAGE BLOCK: the smallest block of every case the grader runs (a power of two up to 1024).\n";
    for (int k : a.stages()) out << "smallest-block " << stage_name(k) << " " << r.min_block(k) << "\n";
    out << "# partial-credit MARGIN: performance points fall linearly from full at the threshold to none at the\n"
        << "# previous stage's own ratio, measured in the same grading, less MARGIN (so that the previous stage's\n"
        << "# code earns none: it came out up to 0.031 below that ratio in 24 judgings on an H100); off: all or nothing.\n"
        << "partial-credit " << (r.partial_margin < 0 ? std::string("off") : number(r.partial_margin)) << "\n"
        << "# remeasure BAND: a ratio within BAND of the threshold is timed once more and the two averaged; 0: never.\n"
        << "remeasure " << number(r.remeasure_band) << "\n";
    return out.str();
}

namespace {

// Reads the lines over `base`; `complete`: every stage of `a` must then be named.
GradingRubric read_rubric_lines(const std::string& text, const Assignment& a, const GradingRubric& base, bool complete) {
    GradingRubric r = base;
    std::istringstream lines(text);
    int line_number = 0;
    for (std::string line; std::getline(lines, line);) {
        ++line_number;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        const auto fail = [&](const std::string& why) {
            throw std::invalid_argument("rubric.txt line " + std::to_string(line_number) + ": " + why + ": '" + line + "'");
        };
        std::istringstream words(line);
        std::string verb;
        if (!(words >> verb) || verb[0] == '#') continue;
        std::vector<std::string> args;
        for (std::string w; words >> w;) args.push_back(w);
        const auto value = [&](const std::string& word, double low) {
            std::size_t used = 0;
            double v = 0;
            try {
                v = std::stod(word, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used != word.size() || !std::isfinite(v) || v < low) fail("'" + word + "' is not a number of at least " + number(low));
            return v;
        };
        if (verb == "points") {
            if (args.size() != 2) fail("points takes a part and a number");
            const double v = value(args[1], 0);
            if (args[0] == "public-cases") r.public_cases = v;
            else if (args[0] == "hidden-group") r.hidden_group = v;
            else if (args[0] == "racecheck") r.racecheck = v;
            else if (args[0] == "memcheck") r.memcheck = v;
            else if (args[0] == "performance") r.performance = v;
            else fail("the parts are public-cases, hidden-group, racecheck, memcheck and performance");
        } else if (verb == "gate") {
            if (args.size() != 1 || (args[0] != "on" && args[0] != "off")) fail("gate is on or off");
            r.gate_on_public_cases = args[0] == "on";
        } else if (verb == "full-points-at" || verb == "smallest-block") {
            if (args.size() != 2) fail(verb + " takes a stage and a " + (verb == "full-points-at" ? "ratio" : "block"));
            int stage = 0;
            try {
                const Assignment one = parse_assignment(args[0]);
                stage = one.first == one.last ? one.first : 0;
            } catch (const std::invalid_argument&) {
            }
            if (stage < a.first || stage > a.last) fail("not a stage of " + a.name());
            if (verb == "full-points-at") {
                r.full_points_at[stage] = value(args[1], 1.0);
            } else {
                const double block = value(args[1], 1);
                const int b = static_cast<int>(block);
                if (b != block || b > 1024 || (b & (b - 1)) != 0) fail("a block is a power of two up to 1024");
                r.smallest_block[stage] = b;
            }
        } else if (verb == "partial-credit") {
            if (args.size() != 1) fail("partial-credit takes a margin or off");
            r.partial_margin = args[0] == "off" ? -1 : value(args[0], 0);
        } else if (verb == "remeasure") {
            if (args.size() != 1) fail("remeasure takes a band (0: never)");
            r.remeasure_band = value(args[0], 0);
        } else {
            fail("unknown setting (points, gate, full-points-at, smallest-block, partial-credit, remeasure)");
        }
    }
    if (r.stage_total() <= 0) throw std::invalid_argument("rubric.txt: a stage is worth no points");
    for (int k : complete ? a.stages() : std::vector<int>{}) {
        if (!r.full_points_at.count(k)) throw std::invalid_argument("rubric.txt: no full-points-at for " + stage_name(k));
        if (!r.smallest_block.count(k)) throw std::invalid_argument("rubric.txt: no smallest-block for " + stage_name(k));
    }
    return r;
}

}  // namespace

GradingRubric read_rubric(const std::string& text, const Assignment& a, const GradingRubric& base) {
    return read_rubric_lines(text, a, base, true);
}

GradingRubric default_rubric(const std::filesystem::path& repo, const Assignment& a) {
    // The file may name stages outside `a`: read it for every stage it could name.
    const GradingRubric all = read_rubric_lines(read_file(repo / "classroom/default_rubric.txt"), Assignment{1, 9}, {}, false);
    GradingRubric r = all;
    r.full_points_at.clear();
    r.smallest_block.clear();
    for (int k : a.stages()) {
        if (!all.full_points_at.count(k)) {
            throw std::runtime_error("classroom/default_rubric.txt has no full-points-at for " + stage_name(k));
        }
        r.full_points_at[k] = all.full_points_at.at(k);
        r.smallest_block[k] = all.smallest_block.count(k)
                                  ? all.smallest_block.at(k)
                                  : std::max(stage_facts(repo, k).min_block, stage_facts(repo, k - 1).min_block);
    }
    return r;
}

std::string rubric_table(const GradingRubric& r, int stage) {
    const std::string once = r.gate_on_public_cases ? ", once the public cases pass" : "";
    std::ostringstream threshold;
    threshold << std::fixed << std::setprecision(2) << r.threshold(stage);
    std::ostringstream out;
    out << "| part | points | passes when |\n|---|---:|---|\n"
        << "| public cases: the sizes of your tree's public tests, on fresh inputs, checked by the grader | "
        << number(r.public_cases) << " | every case is exact |\n"
        << "| your tree's public tests, `gpu_tests --gtest_filter=" << public_tests_filter(stage)
        << "`, as feedback | 0 | (shown to you; no points) |\n";
    for (const std::string& group : hidden_groups()) {
        out << "| hidden cases, " << (group == "misaligned" ? "misaligned pointers (int, float, double)" : group) << " | "
            << number(r.hidden_group) << " | every case is exact |\n";
    }
    out << "| compute-sanitizer racecheck" << once << " | " << number(r.racecheck) << " | no hazard in any case it runs |\n"
        << "| compute-sanitizer memcheck" << once << " | " << number(r.memcheck) << " | no error in any case it runs |\n"
        << "| performance" << once << " | " << number(r.performance) << " | median time at most " << threshold.str()
        << " times the reference solution's"
        << (r.partial_margin < 0 ? " (all or nothing)" : " (fewer points above it: below)") << " |\n"
        << "| **total** | **" << number(r.stage_total()) << "** | |\n\n";
    if (r.gate_on_public_cases) {
        out << "\"Once the public cases pass\" means every public case is exact; until then the sanitizers and the\n"
            << "timing are not run. ";
    }
    out << "Each part but performance is all or nothing. Performance earns full points at or below\n"
        << threshold.str() << " times the reference solution's time";
    if (r.partial_margin < 0) {
        out << ", and none above it.";
    } else {
        out << ", then fewer, linearly, down to none at the previous\n"
            << "stage's own time (measured in the same grading) less " << number(r.partial_margin)
            << " of the reference's: handing in the\nprevious stage's code earns none.";
    }
    if (r.remeasure_band > 0) {
        out << " A ratio within " << number(r.remeasure_band) << " of " << threshold.str()
            << " is timed twice and the two averaged.";
    }
    out << "\n";
    return out.str();
}

const std::vector<std::string>& hidden_groups() {
    static const std::vector<std::string> groups = {"int", "float", "double", "misaligned"};
    return groups;
}

}  // namespace classroom
