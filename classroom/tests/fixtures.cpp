// Submissions made from the instructor's own files, for the grading tests on a GPU
// (test_grading.cpp: in process; test_gradescope.cpp: through Gradescope's scripts as root).
#include "fixtures.h"

#include <regex>
#include <stdexcept>

#include "assignment.h"
#include "batch.h"
#include "markers.h"

namespace classroom_fixtures {

using namespace classroom;

std::string gpu_missing() {
    const std::string missing = classroom::gpu_missing();
    return missing.empty() ? "" : missing + ": grading tests skipped";
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
        text.replace(at, from.size(), to);
    }
    return text;
}

// The kernel name a stage registers: "first_add_during_load" for reduce3, from its record's
// `.name = "reduce3",` and `.kernel = "first_add_during_load",` lines.
std::string kernel_name(const std::string& kernel_cu, int stage) {
    const std::regex registered("\\.name = \"" + stage_name(stage) + "\",\\s*\\.kernel = \"(\\w+)\"");
    std::smatch m;
    if (!std::regex_search(kernel_cu, m, registered)) throw std::runtime_error("no Stage in " + stage_name(stage));
    return m[1];
}

// A file that includes a header of its own folder, with the header pasted in: a submission
// is its kernel.cu alone.
std::string inline_local_includes(std::string text, const fs::path& folder) {
    // The line may end in a comment (`#include "shared_running_sum.cuh"  // --running-sum shared`).
    static const std::regex local(R"re(#include "([\w.]+)"[^\n]*\n)re");
    std::smatch m;
    std::string out;
    while (std::regex_search(text, m, local)) {
        const fs::path header = folder / m.str(1);
        out += m.prefix().str() + (fs::exists(header) ? read_file(header) : m.str(0));
        text = m.suffix().str();
    }
    return out + text;
}

fs::path submission_with(const fs::path& dir, int stage, const std::string& kernel) {
    fs::remove_all(dir);
    write_file(dir / stage_name(stage) / "kernel.cu", kernel);
    return dir;
}

// The reference with `extra` put in before its Stage record: a fixture that does the work
// and something more.
std::string before_stage(const std::string& kernel, int stage, const std::string& extra) {
    const std::string record = "extern const Stage " + stage_name(stage) + "_stage = {";  // the whole line's start
    const std::string changed = replace_all(kernel, record, extra + "\n" + record);
    if (changed == kernel) throw std::runtime_error("no Stage record in " + stage_name(stage));
    return changed;
}

// The reference's launcher replaced, in the Stage record, by `launcher` (defined in
// `definition`), for int, float and double.
std::string with_launcher(const std::string& kernel, int stage, const std::string& launcher, const std::string& definition) {
    // The launcher the record registers: `.sum_int = X<int>, .sum_float = X<float>, .sum_double = X<double>,`.
    static const std::regex registered(R"(\.sum_int = (\w+)<int>,(\s*)\.sum_float = \1<float>,(\s*)\.sum_double = \1<double>)");
    std::smatch m;
    if (!std::regex_search(kernel, m, registered)) {
        throw std::runtime_error("no launcher in the Stage record of " + stage_name(stage));
    }
    const std::string original = m[1];
    const std::string swapped = m.prefix().str() + ".sum_int = " + launcher + "<int>," + m.str(2) + ".sum_float = " +
                                launcher + "<float>," + m.str(3) + ".sum_double = " + launcher + "<double>" +
                                m.suffix().str();
    return before_stage(swapped, stage, replace_all(definition, "ORIGINAL", original));
}

// The stub with its launcher replaced by a call of another stage's (`other`: "reduce3"),
// declared as a student would declare it: it compiles, and only the link can refuse it.
std::string borrowing(const std::string& stub, int stage, const std::string& other) {
    return with_launcher(stub, stage, "borrowed_sum",
                         "extern const Stage " + other + "_stage;  // defined in " + other + "/kernel.cu\n"
                         "template <typename T>\n"
                         "void borrowed_sum(const T* in, std::size_t n, T* out, void* w, const RunConfig& c, cudaStream_t s) {\n"
                         "    " + other + "_stage.sum<T>()(in, n, out, w, c, s);\n}\n");
}

// The previous stage's reference solution, renamed to hand in as `stage`'s kernel.cu:
// correct, but not this stage's speed (it deserves everything but the performance points).
std::string previous_stage_in_place(const fs::path& solutions, int stage) {
    const std::string name = stage_name(stage);
    const std::string reference = read_file(solutions / name / "kernel.cu");
    const std::string previous = read_file(solutions / stage_name(stage - 1) / "kernel.cu");
    std::string slow = inline_local_includes(previous, solutions / stage_name(stage - 1));
    // Less the pasted header's warning switches (reduce4's legacy_last_warp.cuh), which the
    // source check refuses in a kernel.cu: they silence a warning and change no code.
    slow = std::regex_replace(slow, std::regex(R"(#pragma nv_diag_(suppress|default) \d+\n)"), "");
    slow = replace_all(slow, kernel_name(previous, stage - 1), kernel_name(reference, stage));
    slow = replace_all(slow, stage_name(stage - 1) + "_stage", name + "_stage");
    return replace_all(slow, "\"" + stage_name(stage - 1) + "\"", "\"" + name + "\"");
}

// Sabotage of the instructor's timing (docs/classroom.md, the threat model, class 8): the
// previous stage's code, with something that keeps the GPU busy while the submission's
// worker waits between its requests, so that the instructor's workers, timed meanwhile,
// look slow. `how`: "thread" (a thread of the worker's), "timer" (a POSIX timer's
// SIGEV_THREAD callbacks), "daemon" (a process of its own session, forked before main, which
// outlives the worker unless every process of the student's user is killed). Each starts at the first
// request of the judge's timed size, so the other steps run as they would.
std::string sabotage(const std::string& previous_code, int stage, const std::string& how) {
    std::string busy =
        "#include <atomic>\n#include <chrono>\n#include <csignal>\n#include <cstdlib>\n#include <ctime>\n"
        "#include <thread>\n#include <unistd.h>\n"
        "__global__ void keep_busy(long long cycles) {\n"
        "    const long long t0 = clock64();\n    while (clock64() - t0 < cycles) {}\n}\n"
        "static long long now_us() {\n"
        "    return std::chrono::duration_cast<std::chrono::microseconds>(\n"
        "        std::chrono::steady_clock::now().time_since_epoch()).count();\n}\n"
        "static std::atomic<long long> last_call_us{0};\nstatic std::atomic<bool> started{false};\n"
        // One spinner at a time on one stream: a timer's SIGEV_THREAD callbacks each get a
        // new thread, and while a slow (sanitized) kernel runs, thousands would pile up.
        "static std::atomic<bool> spinning{false};\n"
        "static void spin_while_idle() {  // one warp, about a millisecond at a time, whenever idle\n"
        "    if (spinning.exchange(true)) return;\n"
        "    static cudaStream_t s = [] { cudaStream_t t; cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking); return t; }();\n"
        "    if (now_us() - last_call_us.load() > 2000) { keep_busy<<<1, 32, 0, s>>>(2000000); cudaStreamSynchronize(s); }\n"
        "    spinning = false;\n"
        "}\n";
    if (how == "daemon") {
        busy +=
        // The daemon: a child forked before main (before the worker's CUDA context: a child
        // forked after it could not use the GPU), in a session of its own, which waits on a
        // pipe; the worker that reaches the timed size writes to it, and the child spins for a
        // minute. The worker's other processes end, the pipe closes and their children leave.
        // (Forked, not a program started again: a worker can run no other program,
        // worker/exec_filter.h.)
        "static int daemon_pipe[2] = {-1, -1};\n"
        "static const int daemon_body = [] {\n"
        "    if (pipe(daemon_pipe) != 0 || fork() != 0) return 0;  // the worker, or no daemon\n"
        "    setsid();\n    close(daemon_pipe[1]);\n    char go = 0;\n"
        "    if (read(daemon_pipe[0], &go, 1) != 1) std::_Exit(0);\n"
        "    const long long end = now_us() + 60000000;\n"
        "    cudaStream_t s; cudaStreamCreate(&s);\n"
        "    while (now_us() < end) { keep_busy<<<1, 32, 0, s>>>(2000000); cudaStreamSynchronize(s); }\n"
        "    std::_Exit(0);\n}();\n";
    }
    busy += "static void start_sabotage() {\n";
    if (how == "thread") {
        busy += "    std::thread([] { for (;;) { spin_while_idle(); std::this_thread::sleep_for(std::chrono::microseconds(100)); } }).detach();\n";
    } else if (how == "timer") {
        busy += "    sigevent e{};\n    e.sigev_notify = SIGEV_THREAD;\n"
                "    e.sigev_notify_function = [](sigval) { spin_while_idle(); };\n"
                "    timer_t t;\n    timer_create(CLOCK_MONOTONIC, &e, &t);\n"
                "    itimerspec every{{0, 1000000}, {0, 1000000}};\n    timer_settime(t, 0, &every, nullptr);\n";
    } else {
        busy += "    const char go = 1;\n    if (write(daemon_pipe[1], &go, 1) != 1) {}\n";
    }
    busy += "}\n"
            "template <typename T>\n"
            "void sabotaged_sum(const T* in, std::size_t n, T* out, void* w, const RunConfig& c, cudaStream_t s) {\n"
            "    last_call_us = now_us();\n"
            "    if (n >= (std::size_t{1} << 26) && !started.exchange(true)) start_sabotage();\n"
            "    ORIGINAL<T>(in, n, out, w, c, s);\n    cudaStreamSynchronize(s);\n    last_call_us = now_us();\n}\n";
    return with_launcher(previous_code, stage, "sabotaged_sum", busy);
}

// The body of reduce4's last warp in the reference: the first solution region of code (not
// the header's prose region) of the repository's reduce4/kernel.cu.
std::string last_warp_body(const path& repo) {
    const MarkedFile marked = parse_markers(read_file(repo / "reduce4/kernel.cu"), "reduce4/kernel.cu");
    for (const Region& region : marked.regions) {
        if (region.prose()) continue;
        std::string body;
        for (const std::string& line : region.reference) body += line + "\n";
        return body;
    }
    throw std::runtime_error("reduce4/kernel.cu has no solution region of code");
}

static std::string replaced_or_throw(const std::string& text, const std::string& from, const std::string& to) {
    const std::string changed = replace_all(text, from, to);
    if (changed == text) throw std::runtime_error("reduce4's last warp is not in the reference");
    return changed;
}

std::string racy_last_warp(const std::string& reference, const path& repo) {
    return replaced_or_throw(reference, last_warp_body(repo),
                             "    return legacy_last_warp_sum<LastWarp::LegacyVolatile>(shared, tid);\n");
}

std::string shuffle_last_warp(const std::string& reference, const path& repo) {
    return replaced_or_throw(reference, last_warp_body(repo),
                             "    sum += shared[tid + 32];\n"
                             "    for (unsigned s = 16; s > 0; s >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, s);\n"
                             "    return sum;\n");
}

}  // namespace classroom_fixtures
