#include "batch.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include <sys/stat.h>
#include <unistd.h>

#include "assignment.h"
#include "generator.h"
#include "grader.h"
#include "json.h"
#include "process.h"

namespace classroom {

namespace {

// The grader's own limits (the build's 30 minutes, each test's 10) end a grading long
// before this; it only stops a grader that hangs from holding the batch forever.
constexpr int kGradingWithoutBudgetSeconds = 6 * 3600;
// With --time-budget the grader stops itself; this is the time it gets to write its results.
constexpr int kBudgetGraceSeconds = 120;
// A row whose grader crashed, ran past its time or wrote no readable results.json.
constexpr int kGraderError = -1;

// The files a student edits: reduceN/kernel.cu of every assigned stage (the manifest's
// "editable" lines).
std::vector<std::string> editable_paths(const fs::path& autograder) {
    return editable_paths(parse_manifest(read_file(autograder / "manifest.txt")));
}

// "reduce4/kernel.cu" -> "reduce4_kernel.cu": one folder per student, every stage's kernel in it.
std::string flat_name(const std::string& path) {
    std::string name = path;
    std::replace(name.begin(), name.end(), '/', '_');
    return name;
}

std::string number_text(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.10g", value);
    return text;
}

// RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled
// (rubric parts are named "reduce4: hidden cases, int").
std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
    std::string quoted = "\"";
    for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

std::string status_meaning(int exit_status) {
    switch (exit_status) {
        case 0: return "full marks";
        case 1: return "points lost";
        case 3: return "could not grade";
        default: return "grader error";
    }
}

// A folder of its own under the system's temporary folder that others may pass through but
// not list (a --run-as user must reach the work folder inside it) and only this user writes.
fs::path fresh_temporary_folder(const std::string& prefix) {
    std::string pattern = (fs::temp_directory_path() / (prefix + "XXXXXX")).string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot make a folder like " + pattern);
    chmod(pattern.c_str(), 0711);
    return pattern;
}

// A folder this user makes (or finds) for the batch's output: passable by others (the
// --run-as user reaches its work folder), listable and writable by this user alone. As root
// it must be root's and no link: a folder another user made could redirect root's writes.
void make_private_folder(const fs::path& folder, mode_t mode) {
    fs::create_directories(folder);
    struct stat st {};
    if (lstat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
        throw std::invalid_argument(folder.string() + " must be a folder of this user's (not a link, not another user's)");
    }
    chmod(folder.c_str(), mode);
}

// What a grading leaves that others must not read: the report and results only this user's
// (they quote the student's code), the work folder (the built tree) gone.
void keep_only_results(const fs::path& folder) {
    fs::remove_all(folder / "work");
    for (const char* file : {"report.txt", "results.json"}) {
        if (fs::exists(folder / file)) chmod((folder / file).c_str(), 0600);
    }
}

// The budget the autograder's settings.sh gives a grading (0 when it names none).
int settings_budget(const fs::path& autograder) {
    if (!fs::is_regular_file(autograder / "settings.sh")) return 0;
    std::istringstream lines(read_file(autograder / "settings.sh"));
    for (std::string line; std::getline(lines, line);) {
        const std::string key = "time_budget_seconds=";
        if (line.rfind(key, 0) == 0) {
            try {
                return std::max(0, std::stoi(line.substr(key.size())));
            } catch (const std::exception&) {
                return 0;
            }
        }
    }
    return 0;
}

// Grades one submission by a `classroom grade` of its own, in OUT/<name>/work made fresh
// for it: nothing of an earlier student's build is there to see or to reuse. Without a GPU
// (`no_gpu` says why) the grader would build everything and then not grade, so it is not
// started; the row says "could not grade" and the report why.
BatchRow grade_one(const BatchOptions& options, const Submission& submission, const std::string& no_gpu,
                   std::ostream& log) {
    const fs::path folder = options.out / submission.name;
    const fs::path work = folder / "work";
    const fs::path report = folder / "report.txt";
    const fs::path results = folder / "results.json";
    fs::remove_all(work);
    fs::remove(report);
    fs::remove(results);
    make_private_folder(folder, 0711);
    fs::create_directories(work);

    BatchRow row;
    row.name = submission.name;
    std::string problem;  // why there is no score, for the log line
    if (!no_gpu.empty()) {
        row.exit_status = 3;
        problem = "not graded: " + no_gpu;
        write_file(report, problem + "\n");
    } else {
        std::vector<std::string> argv = {options.classroom.string(), "grade",
                                         "--autograder", options.autograder.string(),
                                         "--submission", submission.folder.string(),
                                         "--work", work.string(),
                                         // The judge and the reference workers, built once from the
                                         // autograder alone: no student's code is in them.
                                         "--trusted", (options.out / "trusted").string(),
                                         "--results", results.string(),
                                         "--report", report.string()};
        if (!options.run_as.empty()) argv.insert(argv.end(), {"--run-as", options.run_as});
        // The budget given, else the autograder's own (settings.sh), so that one submission
        // that hangs cannot hold the batch for hours.
        const int budget = options.time_budget > 0 ? options.time_budget : settings_budget(options.autograder);
        if (budget > 0) argv.insert(argv.end(), {"--time-budget", std::to_string(budget)});
        if (options.jobs > 0) argv.insert(argv.end(), {"--jobs", std::to_string(options.jobs)});
        const int limit = budget > 0 ? budget + kBudgetGraceSeconds : kGradingWithoutBudgetSeconds;
        const ProcessResult graded = run_process(argv, "", limit);
        row.exit_status = graded.started && !graded.timed_out ? graded.exit_code : kGraderError;
        if (!graded.started) problem = "the grader could not be started: " + options.classroom.string();
        if (graded.timed_out) problem = "the grader ran past " + std::to_string(limit) + " seconds and was stopped";
        if (row.graded()) {
            try {
                row.sheet = read_score_sheet(results);
            } catch (const std::exception& e) {
                row.exit_status = kGraderError;
                problem = std::string("the grader exited as if it had graded, but ") + e.what();
            }
        } else if (problem.empty()) {
            problem = status_meaning(row.exit_status) + " (exit " + std::to_string(row.exit_status) + "): see " +
                      report.string();
        }
        // The grader's report is the student's; when it wrote none (it crashed, or stopped at a
        // usage error), the report is what it printed, so that the reason is on file.
        if (!fs::exists(report) || row.exit_status == kGraderError) {
            const std::string written = fs::exists(report) ? read_file(report) : "";
            write_file(report, written + (written.empty() ? "" : "\n") + "classroom batch: " + problem +
                                   "\nThe grader's output:\n" + graded.output);
        }
    }
    keep_only_results(folder);
    log << submission.name << ": ";
    if (row.graded()) {
        log << number_text(row.sheet.score) << "/" << number_text(row.sheet.max_score) << " (exit " << row.exit_status
            << ", " << status_meaning(row.exit_status) << ")\n";
    } else {
        log << "no score (exit " << row.exit_status << ", " << status_meaning(row.exit_status) << "): " << problem << "\n";
    }
    return row;
}

std::vector<BatchRow> grade_each(const BatchOptions& options, const std::vector<Submission>& submissions,
                                 const std::string& no_gpu, std::ostream& log) {
    std::vector<BatchRow> rows;
    for (const Submission& s : submissions) rows.push_back(grade_one(options, s, no_gpu, log));
    return rows;
}

}  // namespace

std::string gpu_missing() {
    const ProcessResult smi = run_process({"nvidia-smi", "-L"}, "", 60);
    if (!smi.started) return "no GPU on this machine (nvidia-smi not found: no NVIDIA driver)";
    if (smi.exit_code != 0 || smi.output.find("GPU 0") == std::string::npos) {
        const std::string said = smi.output.substr(0, smi.output.find('\n'));
        return "no GPU on this machine (nvidia-smi -L: " + (said.empty() ? "lists none" : said) + ")";
    }
    return "";
}

std::string isolation_refusal(bool running_as_root, const std::string& run_as, bool allow_unisolated, std::string& warning) {
    warning.clear();
    if (running_as_root && !run_as.empty()) return "";
    const std::string risk =
        running_as_root ? "every student's code would build and run as root"
                        : "every student's code would run as you, and could replace the grader's own programs (the "
                          "judge) for every later student";
    if (!allow_unisolated) {
        return "refusing to grade a batch unisolated: " + risk + "; run as root with --run-as USER (an unprivileged " +
               "user who cannot read the autograder), or give --allow-unisolated to accept the risk";
    }
    warning = "warning: grading unisolated: " + risk;
    return "";
}

std::vector<Submission> list_submissions(const fs::path& submissions, std::vector<std::string>* ignored) {
    std::vector<Submission> found;
    for (const auto& entry : fs::directory_iterator(submissions)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind('.', 0) == 0 || name == "__MACOSX") continue;
        if (entry.is_directory()) {
            found.push_back({name, fs::absolute(entry.path())});
        } else if (ignored) {
            ignored->push_back(name);
        }
    }
    std::sort(found.begin(), found.end(), [](const Submission& a, const Submission& b) { return a.name < b.name; });
    return found;
}

ScoreSheet read_score_sheet(const fs::path& results_json) {
    if (!fs::is_regular_file(results_json)) throw std::runtime_error("it wrote no " + results_json.string());
    try {
        const Json results = parse_json(read_file(results_json));
        ScoreSheet sheet;
        sheet.score = results.at("score").number;
        for (const Json& test : results.at("tests").array) {
            sheet.max_score += test.at("max_score").number;
            sheet.parts.emplace_back(test.at("name").string, test.at("score").number);
        }
        return sheet;
    } catch (const std::exception& e) {
        throw std::runtime_error(results_json.string() + " is not a grader's results.json (" + e.what() + ")");
    }
}

std::string scores_csv(const std::vector<BatchRow>& rows) {
    // The columns in the grader's order: a built submission's results list every part, a
    // refused one only the rubric lines; the row with the most parts leads, others add theirs.
    std::vector<const BatchRow*> by_parts;
    for (const BatchRow& row : rows) by_parts.push_back(&row);
    std::stable_sort(by_parts.begin(), by_parts.end(),
                     [](const BatchRow* a, const BatchRow* b) { return a->sheet.parts.size() > b->sheet.parts.size(); });
    std::vector<std::string> columns;
    std::set<std::string> seen;
    for (const BatchRow* row : by_parts) {
        for (const auto& part : row->sheet.parts) {
            if (seen.insert(part.first).second) columns.push_back(part.first);
        }
    }
    std::string csv = "name,score,max,exit_status";
    for (const std::string& c : columns) csv += "," + csv_field(c);
    csv += "\n";
    for (const BatchRow& row : rows) {
        const std::map<std::string, double> parts(row.sheet.parts.begin(), row.sheet.parts.end());
        csv += csv_field(row.name) + "," + (row.graded() ? number_text(row.sheet.score) : "") + "," +
               (row.graded() ? number_text(row.sheet.max_score) : "") + "," + std::to_string(row.exit_status);
        for (const std::string& c : columns) {
            csv += ",";
            if (row.graded() && parts.count(c)) csv += number_text(parts.at(c));
        }
        csv += "\n";
    }
    return csv;
}

int grade_batch(const BatchOptions& options, std::ostream& log) {
    std::vector<std::string> ignored;
    const std::vector<Submission> submissions = list_submissions(options.submissions, &ignored);
    for (const std::string& name : ignored) log << "ignored: " << name << " is not a folder (one folder per student)\n";
    if (submissions.empty()) throw std::invalid_argument(options.submissions.string() + " has no submission folders");
    for (const Submission& s : submissions) {
        if (s.name == "trusted") {
            throw std::invalid_argument("a submission folder is named 'trusted', which is the judge's folder in OUT: rename it");
        }
    }
    const std::string no_gpu = gpu_missing();
    if (!no_gpu.empty()) log << "classroom batch: " << no_gpu << ": every submission is recorded as could not grade (3)\n";
    make_private_folder(options.out, 0711);
    make_private_folder(options.out / "trusted", 0700);  // the judge and the reference workers: never the students'
    const std::vector<BatchRow> rows = grade_each(options, submissions, no_gpu, log);
    write_file(options.out / "scores.csv", scores_csv(rows));
    chmod((options.out / "scores.csv").c_str(), 0600);  // every student's score: the instructor's alone
    int ungraded = 0;
    for (const BatchRow& row : rows) ungraded += row.graded() ? 0 : 1;
    log << "classroom batch: " << rows.size() - ungraded << " of " << rows.size() << " submissions graded; "
        << (options.out / "scores.csv").string() << "\n";
    return ungraded ? 3 : 0;
}

int selftest(const fs::path& classroom, const fs::path& autograder, const std::string& run_as, std::ostream& out) {
    const std::string no_gpu = gpu_missing();
    if (!no_gpu.empty()) {
        out << "classroom selftest: cannot self-test without a GPU: " << no_gpu << "\n";
        return 3;
    }
    // The two submissions as a student hands them in: only the edited kernel.cu files.
    // The solutions are in it: a folder no one else may list, the submissions' folder only
    // this user's, and nothing of them left behind whatever the verdict (the reports stay,
    // this user's alone).
    const fs::path folder = fresh_temporary_folder("classroom-selftest-");
    make_private_folder(folder / "submissions", 0700);
    make_private_folder(folder / "graded", 0711);
    make_private_folder(folder / "graded/trusted", 0700);
    for (const std::string& path : editable_paths(autograder)) {
        write_file(folder / "submissions/reference" / path, read_file(autograder / "solution" / path));
        write_file(folder / "submissions/stub" / path, read_file(autograder / "student_tree" / path));
    }
    BatchOptions options;
    options.classroom = classroom;
    options.autograder = autograder;
    options.submissions = folder / "submissions";
    options.out = folder / "graded";
    options.run_as = run_as;
    std::ostringstream progress;  // the lines below say it better
    const std::vector<BatchRow> rows = grade_each(options, list_submissions(options.submissions), "", progress);
    fs::remove_all(options.submissions);
    fs::remove_all(options.out / "trusted");

    bool could_not_grade = false, as_expected = true;
    for (const BatchRow& row : rows) {
        const bool reference = row.name == "reference";
        const bool holds = row.graded() && (reference ? row.sheet.score == row.sheet.max_score && row.sheet.max_score > 0
                                                      : row.sheet.score == 0);
        out << (reference ? "reference solution (solution/): " : "handed-out stub (student_tree/): ");
        if (row.graded()) {
            out << "got " << number_text(row.sheet.score) << "/" << number_text(row.sheet.max_score);
        } else {
            out << "got no grade";
        }
        out << " (exit " << row.exit_status << ", " << status_meaning(row.exit_status) << "), expected "
            << (reference ? "full marks" : "0") << (holds ? "" : "  <-- NOT AS EXPECTED") << "\n";
        could_not_grade = could_not_grade || !row.graded();
        as_expected = as_expected && holds;
    }
    if (could_not_grade) {
        out << "classroom selftest: could not grade; the reports are in " << options.out.string() << "\n";
        return 3;
    }
    if (!as_expected) {
        out << "classroom selftest: FAILED, do not upload this autograder; the reports are in " << options.out.string()
            << "\n";
        return 1;
    }
    fs::remove_all(folder);
    out << "classroom selftest: passed: the reference gets full marks and the stub 0\n";
    return 0;
}

std::vector<std::string> export_for_similarity(const fs::path& autograder, const fs::path& submissions, const fs::path& out) {
    const std::vector<std::string> paths = editable_paths(autograder);
    const std::vector<Submission> students = list_submissions(submissions);
    for (const Submission& s : students) {
        if (s.name == "base") {
            throw std::invalid_argument("a submission folder is named 'base', which is the base code's folder in both "
                                        "layouts: rename it");
        }
    }
    fs::remove_all(out / "jplag");  // a student removed since an earlier export must not linger
    fs::remove_all(out / "moss");
    for (const std::string& path : paths) {
        const std::string stub = read_file(autograder / "student_tree" / path);
        write_file(out / "jplag/base" / flat_name(path), stub);
        write_file(out / "moss/base" / flat_name(path), stub);
    }
    std::vector<std::string> missing;
    for (const Submission& s : students) {
        // The kernels as `classroom grade` finds them: a tree, a zip's one folder, or a lone kernel.cu.
        std::map<std::string, std::string> kernels;
        check_submission(autograder, s.folder, kernels);
        for (const std::string& path : paths) {
            if (!kernels.count(path)) {
                missing.push_back(s.name + ": " + path);
                continue;
            }
            write_file(out / "jplag/submissions" / s.name / flat_name(path), kernels.at(path));
            write_file(out / "moss" / s.name / flat_name(path), kernels.at(path));
        }
    }

    std::string base_files;
    for (const std::string& path : paths) base_files += " -b base/" + flat_name(path);
    std::string readme =
        "The kernels of every submission in " + fs::absolute(submissions).string() + ", exported by classroom similarity\n"
        "for plagiarism checkers. The base code is the handed-out stub of each stage: code every student was\n"
        "given is not counted as a match. Submissions: " + std::to_string(students.size()) + ".\n"
        "\n"
        "JPlag (version 4 or later), from the jplag folder:\n"
        "    cd jplag\n"
        "    java -jar jplag.jar -l cpp -p .cu -bc base submissions\n"
        "  -l cpp: the C++ front end; -p .cu: the files' suffix (the cpp front end's own list has no .cu);\n"
        "  -bc base: the base code folder; submissions: one folder per student.\n"
        "\n"
        "MOSS (the moss script from https://theory.stanford.edu/~aiken/moss/, with your user id), from the moss\n"
        "folder, in bash:\n"
        "    cd moss\n"
        "    shopt -s extglob    # for !(base): every folder but the base code's\n"
        "    moss -l cc" + base_files + " -d !(base)/*.cu\n"
        "  -l cc: C++; -b: a base file (one name per -b, one -b per stage); -d: each folder is one student's program.\n"
        "\n"
        "Submissions with no kernel for a stage (nothing exported for it):\n";
    for (const std::string& m : missing) readme += "    " + m + "\n";
    if (missing.empty()) readme += "    none\n";
    write_file(out / "README.txt", readme);
    return missing;
}

}  // namespace classroom
