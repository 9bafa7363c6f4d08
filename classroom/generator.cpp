#include "generator.h"
#include "source_check.h"

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "markers.h"
#include "process.h"
#include "sha256.h"

#ifndef CLASSROOM_CMAKE_COMMAND
#define CLASSROOM_CMAKE_COMMAND "cmake"
#endif

namespace classroom {

namespace {

// Which files of the repository a student tree of `a` has (before stubbing). `chapters`: each
// stage's chapter (its record's .chapter) and the stage.
bool handed_out(const std::string& path, const Assignment& a, const std::map<std::string, int>& chapters) {
    static const std::regex diagram(R"(^docs/img/reduce(\d)_tree\.svg$)");
    static const std::regex handout(R"(^assignments/reduce(\d)\.md$)");
    std::smatch m;
    if (path == "CMakeLists.txt" || path == "CMakePresets.json" || path == ".gitignore") return true;
    for (const char* dir : {"common/", "runner/", "tests/", "tools/"}) {
        if (starts_with(path, dir)) return true;
    }
    if (path == "scripts/profile.sh" || path == "scripts/timeline.sh" || path == "scripts/make_diagrams.sh" ||
        path == "scripts/sass.sh") {
        return true;
    }
    if (stage_of(path) >= 0) return stage_of(path) <= a.last;
    if (path == "docs/00-overview.md" || path == "docs/08-profiling.md") return true;
    if (const auto chapter = chapters.find(path); chapter != chapters.end()) {  // it shows its stage's solution
        return chapter->second >= 1 && chapter->second < a.first;
    }
    if (std::regex_match(path, m, diagram)) return std::stoi(m[1]) < a.first;
    if (std::regex_match(path, m, handout)) return std::stoi(m[1]) >= a.first && std::stoi(m[1]) <= a.last;
    return false;
}

// How a region of assignment k appears in the student tree of `a`.
RegionAs region_as(const Region& region, const Assignment& a) {
    if (region.assignment < a.first) return RegionAs::Reference;  // a given stage
    if (region.assignment <= a.last && !region.stub.empty()) return RegionAs::Stub;
    return RegionAs::Removed;  // a test of an assigned stage's answer, or of a stage not in the tree
}

std::string render_for(const std::string& text, const std::string& path, const Assignment& a) {
    const MarkedFile file = parse_markers(text, path);
    std::vector<RegionAs> as;
    for (const Region& region : file.regions) as.push_back(region_as(region, a));
    return render_lines(file, as);
}

bool is_directory_in(const Tree& tree, const std::string& dir) {
    const std::string prefix = ends_with(dir, "/") ? dir : dir + "/";
    const auto it = tree.lower_bound(prefix);
    return it != tree.end() && starts_with(it->first, prefix);
}

// "docs/x/../y.md" -> "docs/y.md"; "" when it leaves the tree.
std::string normalize(const std::string& path) {
    std::vector<std::string> parts;
    std::istringstream in(path);
    for (std::string part; std::getline(in, part, '/');) {
        if (part.empty() || part == ".") continue;
        if (part == "..") {
            if (parts.empty()) return "";
            parts.pop_back();
        } else {
            parts.push_back(part);
        }
    }
    std::string out;
    for (const std::string& p : parts) out += (out.empty() ? "" : "/") + p;
    return out;
}

// Links to files the student tree does not have (later chapters, results, the instructor
// guide) become their plain text; pictures that are not there become their caption.
// Reference-style links too ([text][label], with "[label]: target" on a line of its own):
// a definition whose target is not there goes, and its uses become their text.
std::string drop_dead_links(const std::string& markdown, const std::string& path, const Tree& tree) {
    static const std::regex link(R"((!?)\[([^\]]*)\]\(([^)\s]+)(\s+"[^"]*")?\))");
    static const std::regex definition(R"(^\[([^\]\s]+)\]: (\S+)(\s+"[^"]*")?[ \t]*$)");
    static const std::regex use(R"(\[([^\]\[]+)\]\[([^\]\s]+)\])");
    const std::string dir = path.find('/') == std::string::npos ? "" : path.substr(0, path.rfind('/') + 1);
    const auto present = [&](const std::string& target) {
        const bool external = target.find("://") != std::string::npos || starts_with(target, "mailto:") ||
                              starts_with(target, "#");
        const std::string file = normalize(dir + target.substr(0, target.find('#')));
        return external || tree.count(file) > 0 || is_directory_in(tree, file);
    };
    std::set<std::string> dead;
    std::string text;
    {
        std::istringstream in(markdown);
        for (std::string line; std::getline(in, line);) {
            std::smatch m;
            if (std::regex_match(line, m, definition) && !present(m[2])) {
                dead.insert(m[1]);
                continue;
            }
            text += line + "\n";
        }
        if (!markdown.empty() && markdown.back() != '\n') text.pop_back();
    }
    if (!dead.empty()) {
        std::string kept;
        std::size_t copied = 0;
        for (auto it = std::sregex_iterator(text.begin(), text.end(), use); it != std::sregex_iterator(); ++it) {
            if (!dead.count((*it)[2])) continue;
            kept += text.substr(copied, static_cast<std::size_t>(it->position(0)) - copied) + (*it)[1].str();
            copied = static_cast<std::size_t>(it->position(0) + it->length(0));
        }
        text = kept + text.substr(copied);
    }
    std::string out;
    auto begin = std::sregex_iterator(text.begin(), text.end(), link);
    std::size_t copied = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
        const std::smatch& m = *it;
        const std::string target = m[3];
        out += text.substr(copied, static_cast<std::size_t>(m.position(0)) - copied);
        if (present(target)) {
            out += m.str(0);
        } else if (m[1] == "!") {
            out += "*(" + m.str(2) + ": not in this tree)*";
        } else {
            out += m.str(2);
        }
        copied = static_cast<std::size_t>(m.position(0) + m.length(0));
    }
    return out + text.substr(copied);
}

std::string student_readme(const fs::path& repo, const Assignment& a) {
    std::ostringstream out;
    const std::string first_name = stage_name(a.first);
    out << "# Assignment " << a.name() << ": ";
    if (a.first == a.last) {
        out << stage_facts(repo, a.first).idea << "\n\n";
    } else {
        out << "from " << stage_facts(repo, a.first).idea << " to " << stage_facts(repo, a.last).idea << "\n\n";
    }
    out << "Starter code for an assignment of a step-by-step tutorial on GPU parallel reduction in CUDA C++.\n"
        << "It has every stage before " << first_name << " complete, as references ("
        << (a.first == 1 ? std::string("reduce0") : "reduce0 ... " + stage_name(a.first - 1)) << "), and ";
    if (a.first == a.last) {
        out << first_name << " for you to finish: its `kernel.cu` has a `TODO (assignment " << a.first
            << ")` wherever code is missing.\n";
    } else {
        out << "the stages " << a.name() << " for you to finish: each `kernel.cu` has a `TODO (assignment N)` wherever "
            << "code is missing.\n";
    }
    out << "The handout";
    for (int k : a.stages()) out << (k == a.first ? " " : ", ") << "[`assignments/reduce" << k << ".md`](assignments/reduce" << k << ".md)";
    out << " says what to write, how to test and profile it, and how it is graded.\n\n";
    out << "## The two commands\n\n"
        << "Build every stage and run them all on your GPU, one table:\n\n"
        << "```\ncmake --preset release && cmake --build --preset release && build/release/bin/reduce_all\n```\n\n"
        << "Build and run the tests:\n\n"
        << "```\ncmake --preset release && cmake --build --preset release && ctest --preset release\n```\n\n"
        << "Until you have written the missing code, each stage you write fails verification, prints why, e.g.\n\n"
        << "```\n" << first_name << ": ... is not implemented yet (assignment " << a.first << ")\n```\n\n"
        << "and its tests fail. That is the starting point, not a broken setup.\n\n"
        << "## What you edit and hand in\n\n"
        << "You write the code where ";
    for (int k : a.stages()) out << (k == a.first ? "" : ", ") << "`reduce" << k << "/kernel.cu`";
    out << " says `TODO`. Only that file is graded;\n"
        << "every other file is the one handed out (an edited harness file, test or build file is never used; the\n"
        << "report says it was ignored). What a reduction kernel needs (kernels, shared memory, barriers, warp functions, atomics,\n"
        << "launches on the given stream) is never refused; the appendix lists what is.\n\n"
        << "Upload " << (a.stages().size() == 1 ? "the `kernel.cu` file itself, or " : "")
        << "this tree or a zip of it, with the `reduceN/` folders kept.\n\n"
        << "## Prerequisites\n\n"
        << "- An NVIDIA GPU of compute capability 7.5 or newer and its driver (without one everything builds,\n"
        << "  and the host tests and the `--explain` of reduce0 ... reduce3 run).\n"
        << "- The CUDA Toolkit 12.4 or newer (`nvcc`, and `compute-sanitizer` for the racecheck tests).\n"
        << "- CMake 3.24 or newer and a C++20 host compiler that your `nvcc` accepts.\n"
        << "- GoogleTest, for the tests: `sudo apt install libgtest-dev`, or `conda install -c conda-forge gtest`.\n";
    out << "\n## Layout\n\n```\n"
        << "reduceN/kernel.cu   one stage: its kernel, host launcher and the Stage it registers\n"
        << "reduceN/main.cu     three lines: hand the stage to the shared main\n"
        << "common/             the harness: error checks, timing, exact inputs and verification, options, output\n"
        << "runner/             reduce_all: every stage, CUB and a device copy in one table\n"
        << "tests/              GoogleTest: host tests and GPU tests of every stage\n"
        << "scripts/            profile.sh (Nsight Compute), timeline.sh (Nsight Systems)\n"
        << "docs/               the chapters of the stages you have, and the profiling guide\n"
        << "assignments/        the handout\n```\n\n"
        << "## Appendix: what a kernel.cu may not contain\n\n"
        << "Before building, the grader refuses (score 0 for that stage, with the line and the reason) a file that\n"
        << "has:\n\n"
        << "- an `#include` other than `\"stage.h\"` (the stage contract; `\"stages.h\"` too), the headers of your\n"
        << "  stage's own folder and a few standard and CUDA headers (`<cstdint>`, `<cuda/atomic>`,\n"
        << "  `<cooperative_groups.h>`, ...);\n"
        << "- a call that ends or starts a process, touches files or the environment, or loads a library (`exit`,\n"
        << "  `atexit`, `fork`, `system`, `fopen`, `getenv`, `dlopen`, ...), or a static constructor by attribute;\n"
        << "- a copy to the host or a synchronization (`cudaMemcpy`, `cudaDeviceSynchronize`, ...): a launcher only\n"
        << "  launches kernels, so that it can be timed;\n"
        << "- a library's reduction (CUB, Thrust, cooperative groups' `reduce`) or another stage's launcher;\n"
        << "- token pasting (`##`), digraphs, trigraphs or universal character names, line markers, or a line\n"
        << "  longer than 1000 characters;\n"
        << "- a clock or a timer: `clock64`, `__nanosleep`, CUDA events, host clocks (the assignment may allow\n"
        << "  the device clocks);\n"
        << "- a directive other than `#include`, `#define`, `#undef`, the `#if` family, `#error`, `#warning` and\n"
        << "  `#pragma unroll`/`once`; inline assembly; an attribute that takes a string (`section`, `alias`,\n"
        << "  `[[deprecated(\"...\")]]`); or an `operator&` of your own (a reduction needs none, and the\n"
        << "  registration of `__device__` variables, before `main`, would call it).\n\n"
        << "The grader then compiles the file again and refuses what the compiler read or made that breaks these\n"
        << "rules under another name: a call in the compiled object that is not on its list of what a launcher\n"
        << "needs, a clock in the PTX, a system call, or a name defined outside C++'s own (a function with\n"
        << "`extern \"C\"`, or a variable at file scope, `__device__` ones too: put yours in a namespace or make them\n"
        << "`static`). Comments are not checked. Every point is decided by the\n"
        << "grader's own program: it makes fresh inputs, sends them to a separate process that runs your launcher,\n"
        << "checks each sum itself and keeps the time; what your program prints or its exit status earn nothing.\n"
        << "The tests in this tree are for you: the grader runs them too, as feedback, worth no points.\n";
    return out.str();
}

Tree copy_files(const fs::path& repo, const std::vector<std::string>& paths) {
    Tree tree;
    for (const std::string& path : paths) {
        const fs::path source = repo / path;
        const auto perms = fs::status(source).permissions();
        tree[path] = TreeFile{read_file(source), (perms & fs::perms::owner_exec) != fs::perms::none};
    }
    return tree;
}

}  // namespace

int stage_of(const std::string& path) {
    static const std::regex stage_dir(R"(^reduce(\d)/.*)");
    std::smatch m;
    return std::regex_match(path, m, stage_dir) ? std::stoi(m[1]) : -1;
}

bool has_markers(const std::string& path) {
    return ends_with(path, ".cu") || ends_with(path, ".cuh") || ends_with(path, ".h") || ends_with(path, ".cpp") ||
           ends_with(path, ".cu.in");
}

bool is_editable(const std::string& path, const Assignment& a) {
    const int k = stage_of(path);
    return k >= a.first && k <= a.last && path == stage_name(k) + "/kernel.cu";
}

Tree make_student_tree(const fs::path& repo, const Assignment& a) {
    std::map<std::string, int> chapters;
    for (int k : stages_in(repo)) chapters[stage_facts(repo, k).chapter] = k;
    std::vector<std::string> paths;
    for (const std::string& path : list_files(repo)) {
        if (handed_out(path, a, chapters)) paths.push_back(path);
    }
    Tree tree = copy_files(repo, paths);
    for (auto& [path, file] : tree) {
        if (has_markers(path)) file.text = render_for(file.text, path, a);
    }
    tree["README.md"] = TreeFile{student_readme(repo, a), false};
    for (auto& [path, file] : tree) {
        if (ends_with(path, ".md")) file.text = drop_dead_links(file.text, path, tree);
    }
    return tree;
}

Tree solution_stage(const fs::path& repo, int stage) {
    Tree stage_files;
    const std::string prefix = stage_name(stage) + "/";
    for (const std::string& path : list_files(repo)) {
        if (!starts_with(path, prefix)) continue;
        std::string text = read_file(repo / path);
        if (has_markers(path)) {
            const MarkedFile file = parse_markers(text, path);
            text = render(file, [](int) { return RegionAs::Reference; });
        }
        stage_files[path] = TreeFile{text, false};
    }
    if (stage_files.empty()) throw std::runtime_error("no stage folder " + prefix + " in " + repo.string());
    return stage_files;
}

std::string manifest_text(const Tree& tree, const Assignment& a) {
    std::string out;
    for (const auto& [path, file] : tree) {
        out += sha256_hex(file.text) + "  " + (is_editable(path, a) ? "editable" : "protected") + "  " + path + "\n";
    }
    return out;
}

std::vector<ManifestEntry> parse_manifest(const std::string& text) {
    std::vector<ManifestEntry> entries;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        std::istringstream fields(line);
        ManifestEntry e;
        fields >> e.hash >> e.role;
        std::getline(fields >> std::ws, e.path);
        if (e.hash.size() != 64 || (e.role != "editable" && e.role != "protected") || e.path.empty()) {
            throw std::runtime_error("malformed manifest line: " + line);
        }
        entries.push_back(e);
    }
    return entries;
}

std::vector<std::string> editable_paths(const std::vector<ManifestEntry>& entries) {
    std::vector<std::string> paths;
    for (const ManifestEntry& e : entries) {
        if (e.role == "editable") paths.push_back(e.path);
    }
    return paths;
}

void write_tree(const Tree& tree, const fs::path& dir) {
    fs::remove_all(dir);
    for (const auto& [path, file] : tree) {
        write_file(dir / path, file.text);
        if (file.executable) {
            fs::permissions(dir / path, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                            fs::perm_options::add);
        }
    }
}

const char* const kRubricBegin =
    "<!-- The rubric: written from classroom's rubric (rubric_table in classroom/assignment.cpp). "
    "`classroom check` keeps it equal to the defaults; `classroom generate --rubric FILE` rewrites it. -->";
const char* const kRubricEnd = "<!-- end of the rubric -->";

std::string handout_with_rubric(const std::string& handout, const GradingRubric& rubric, int stage) {
    const auto begin = handout.find(kRubricBegin);
    const auto end = handout.find(kRubricEnd);
    if (begin == std::string::npos || end == std::string::npos || end < begin) {
        throw std::runtime_error("assignments/" + stage_name(stage) + ".md has no rubric block (" + kRubricBegin + " ... " +
                                 kRubricEnd + ")");
    }
    const auto body = begin + std::string(kRubricBegin).size();
    return handout.substr(0, body) + "\n" + rubric_table(rubric, stage) + handout.substr(end);
}

std::string settings_text(const AutograderSettings& settings) {
    return "# The settings chosen at classroom generate; setup.sh and run_autograder source this file.\n"
           "# After an edit, rebuild the zip: classroom pack AUTOGRADER_DIR (docs/classroom.md, \"Gradescope\").\n"
           "#\n"
           "# Seconds for one submission's grading, results included. Keep it below the assignment's time\n"
           "# limit on Gradescope (10 minutes unless changed), so that even a slow submission gets its\n"
           "# results.json. The environment's CLASSROOM_TIME_BUDGET overrides it.\n"
           "time_budget_seconds=" + std::to_string(settings.time_budget_seconds) + "\n"
           "# The GPU architectures to build for (CMake's CUDA_ARCHITECTURES: 90 for an H100), for an\n"
           "# image built without a GPU. Empty: the GPU nvidia-smi sees, else a list of common GPUs.\n"
           "cuda_architectures=\"" + settings.cuda_architectures + "\"\n";
}

// Gradescope wants a zip with setup.sh and run_autograder at its root.
void pack_autograder(const fs::path& autograder, const fs::path& zip) {
    for (const char* script : {"setup.sh", "run_autograder"}) {
        if (!fs::is_regular_file(autograder / script)) {
            throw std::invalid_argument(autograder.string() + " is not an autograder folder (no " + script + ")");
        }
    }
    std::vector<std::string> tar = {CLASSROOM_CMAKE_COMMAND, "-E", "tar", "cf", fs::absolute(zip).string(), "--format=zip"};
    for (const char* top : {"setup.sh", "run_autograder", "requirements.sh", "settings.sh", "manifest.txt",
                            "assignment.txt", "source_policy.txt", "rubric.txt", "student_tree", "solution", "worker", "judge", "tool"}) {
        if (!fs::exists(autograder / top)) {
            throw std::invalid_argument(autograder.string() + " has no " + top +
                                        ": it is not a whole autograder of this kit (classroom generate writes one)");
        }
        tar.push_back(top);
    }
    fs::remove(zip);
    fs::create_directories(fs::absolute(zip).parent_path());
    const ProcessResult zipped = run_process(tar, autograder.string(), 300);
    if (zipped.exit_code != 0) throw std::runtime_error("cmake -E tar could not write " + zip.string() + ": " + zipped.output);
}

std::string generate(const fs::path& repo, const Assignment& a, const fs::path& out, const AutograderSettings& settings) {
    const GradingRubric rubric = settings.rubric ? *settings.rubric : default_rubric(repo, a);
    Tree student = make_student_tree(repo, a);
    // The handouts show the rubric this autograder grades by.
    for (int k : a.stages()) {
        TreeFile& handout = student.at("assignments/" + stage_name(k) + ".md");
        handout.text = handout_with_rubric(handout.text, rubric, k);
    }
    write_tree(student, out / "student");

    // The autograder: everything a grader needs, nothing a student may see.
    Tree grader;
    for (const auto& [path, file] : student) grader["student_tree/" + path] = file;
    for (int k = a.first - 1; k <= a.last; ++k) {
        for (const auto& [path, file] : solution_stage(repo, k)) grader["solution/" + path] = file;
    }
    // worker/: the worker, built in the tree being graded (no secret in it); judge/: the
    // trusted program, with the hidden cases (removed on Gradescope once it is built).
    for (const char* name : {"CMakeLists.txt", "worker.cu", "recorder.cu", "recorder.h", "launch_record.h", "gpu_window.h",
                             "protocol.h", "exec_filter.h", "private_symbols.cmake"}) {
        grader[std::string("worker/") + name] = TreeFile{read_file(repo / "classroom/worker" / name), false};
    }
    for (const char* name : {"CMakeLists.txt", "judge.h", "judge.cu", "perf.cu", "cases.cpp", "worker_process.h",
                             "worker_process.cpp", "timing_model.h", "replay.cu"}) {
        grader[std::string("judge/") + name] = TreeFile{read_file(repo / "classroom/judge" / name), false};
    }
    // The judge's drop to the student's user is the grader's too (tool/ gets it below).
    grader["judge/student_user.h"] = TreeFile{read_file(repo / "classroom/student_user.h"), false};
    grader["source_policy.txt"] = TreeFile{source_policy_template(), false};
    grader["rubric.txt"] = TreeFile{rubric_file(rubric, a), false};
    std::string stages;
    for (int k : a.stages()) stages += (stages.empty() ? "" : " ") + stage_name(k);
    grader["worker/assignment.cmake"] =
        TreeFile{"# Written by classroom generate: the stages this autograder grades.\nset(GRADED_STAGES " + stages +
                     ")\n",
                 false};
    for (const std::string& path : list_files(repo / "classroom")) {
        if (path.find('/') == std::string::npos && (ends_with(path, ".cpp") || ends_with(path, ".h"))) {
            grader["tool/" + path] = TreeFile{read_file(repo / "classroom" / path), false};
        }
    }
    grader["tool/CMakeLists.txt"] = TreeFile{read_file(repo / "classroom/gradescope/tool.cmake"), false};
    grader["setup.sh"] = TreeFile{read_file(repo / "classroom/gradescope/setup.sh"), true};
    grader["run_autograder"] = TreeFile{read_file(repo / "classroom/gradescope/run_autograder"), true};
    grader["requirements.sh"] = TreeFile{read_file(repo / "classroom/gradescope/requirements.sh"), false};
    grader["settings.sh"] = TreeFile{settings_text(settings), false};
    grader["manifest.txt"] = TreeFile{manifest_text(student, a), false};
    grader["assignment.txt"] = TreeFile{a.name() + "\n", false};
    write_tree(grader, out / "autograder");
    pack_autograder(out / "autograder", out / "autograder.zip");

    std::ostringstream summary;
    summary << "assignment " << a.name() << ": " << student.size() << " files in " << (out / "student").string()
            << ", the autograder in " << (out / "autograder").string() << " and " << (out / "autograder.zip").string();
    return summary.str();
}

}  // namespace classroom
