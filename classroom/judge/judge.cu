// judge: the grader's trusted GPU program. It never links or loads a submission.
//
// It makes every input (from a secret seed it reads from the environment, never from its
// command line, which other users can read), puts it in GPU memory that it shares with a
// worker process (grade_worker_reduceN, protocol.h), asks the worker to reduce it, reads
// the sums back and checks them itself; for performance it keeps the time on its own
// side of the socket. A worker's exit status means only "did not crash".
//
//   judge --device                          the GPU in one line; exit 3 without one
//   judge --correctness --worker W          the public and the hidden groups, one verdict each
//   judge --sanitize racecheck|memcheck --worker W --sanitizer PATH
//   judge --perf --worker W --reference R --previous P
//   judge --exec-as USER PROGRAM ARGS...    (itself, between the sanitizer and the worker)
// Options: --min-block B (the handout's smallest block), --run-as USER (as root: the
// student's worker runs as USER), --logs DIR (the workers' output), --timeout SECONDS.
// Seed: CLASSROOM_SEED in the environment. Exit: 0 graded (the verdicts are in the
// output), 2 usage, 3 could not grade (no GPU, a broken worker binary of the instructor's).
//
// Every line this program prints is the grader's own: classroom grade reads the verdicts
// from it. The hidden cases are defined here, so that on Gradescope this file is compiled
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "judge.h"
#include "worker_process.h"

namespace judge {

Device open_device() {
    Device d;
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    if (count == 0) throw CouldNotGrade("no CUDA device");
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(nullptr));
    CHECK(cudaGetDeviceProperties(&d.prop, 0));
    int clock_khz = 0, bus_bits = 0;
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, 0);
    cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0);
    if (clock_khz > 0 && bus_bits > 0) {
        d.peak_bytes_per_s = clock_khz * 1e3 * 2.0 * bus_bits / 8.0;
        d.peak_source = "memory clock x 2 x bus width";
    }
    return d;
}

std::string describe(const Device& d) {
    char text[512];
    std::snprintf(text, sizeof text, "%s (compute capability %d.%d, %d SMs, %.0f GB/s theoretical)", d.prop.name,
                  d.prop.major, d.prop.minor, d.prop.multiProcessorCount, d.peak_bytes_per_s / 1e9);
    return text;
}

// ---------------------------------------------------------------- correctness
std::string Judge::log_path(const std::string& role) {
    return o.logs + "/worker-" + role + "-" + std::to_string(++worker_starts) + ".log";
}

std::unique_ptr<Worker> Judge::start_worker(const std::string& role, std::vector<std::string> argv, const std::string& run_as,
                                     const SharedMemory& memory, std::string& error) {
    auto w = std::make_unique<Worker>(role, std::move(argv), run_as, log_path(role));
    error = w->start(memory, device.id, std::max(o.timeout, 120));
    if (!error.empty()) w->stop();
    return w;
}

int Judge::correctness() {
    std::size_t most = 0;
    for (const std::string& g : kGroups) {
        for (const Case& c : group_cases(g, o)) most = std::max(most, (c.n + c.offset) * type_size(c.type));
    }
    SharedMemory memory(most + 256, device.id);
    std::unique_ptr<Worker> worker;
    bool said_mapping = false;
    for (std::size_t g = 0; g < kGroups.size(); ++g) {
        const std::string& group = kGroups[g];
        const std::vector<Case> cases = group_cases(group, o);
        int failed = 0;
        std::vector<std::string> lines;
        for (std::size_t k = 0; k < cases.size(); ++k) {
            const Case& c = cases[k];
            std::string failure;
            if (!worker || !worker->running()) {
                // A fresh worker for each group after a crash: one group's crash costs
                // only that group.
                std::string error;
                worker = start_worker("student", {o.worker}, o.run_as, memory, error);
                if (error.empty() && !said_mapping) {
                    std::printf("INFO the submission's worker mapped its inputs %s\n", worker->mapping().c_str());
                    said_mapping = true;
                }
                if (!error.empty()) failure = "the worker did not start: " + error;
            }
            if (failure.empty()) failure = run_case(*worker, memory, c, mix(o.seed, g * 100000 + k));
            if (!failure.empty()) {
                ++failed;
                if (lines.size() < 12) lines.push_back("FAIL " + case_text(c) + ": " + failure);
                if (!worker->running()) {
                    // Dead: the rest of this group is not run.
                    failed += static_cast<int>(cases.size() - k - 1);
                    lines.push_back("the worker ended (" + worker->stop() + "); the group's remaining " +
                                    std::to_string(cases.size() - k - 1) + " cases count as wrong");
                    worker.reset();
                    break;
                }
            }
        }
        for (const std::string& line : lines) std::printf("%s\n", line.c_str());
        std::printf("GROUP %s %s %d of %zu cases wrong\n", group.c_str(), failed ? "FAIL" : "PASS", failed,
                    cases.size());
        std::fflush(stdout);
    }
    if (worker) worker->stop();
    return 0;
}

bool Judge::unchanged(const SharedMemory& memory, const std::vector<char>& region) {
    std::vector<char> now(region.size());
    CHECK(cudaMemcpy(now.data(), memory.at<char>(0), now.size(), cudaMemcpyDeviceToHost));
    return now == region;
}

std::string Judge::run_case(Worker& worker, const SharedMemory& memory, const Case& c, std::uint64_t seed, bool copy_in,
                            const std::vector<char>* replay) {
    long long exact = 0;
    const std::size_t size = type_size(c.type);
    std::vector<char> bytes(c.n * size);
    if (c.type == Type::Int) {
        auto v = case_values<int>(c.n, seed, exact);
        std::memcpy(bytes.data(), v.data(), bytes.size());
    } else if (c.type == Type::Float) {
        auto v = case_values<float>(c.n, seed, exact);
        std::memcpy(bytes.data(), v.data(), bytes.size());
    } else {
        auto v = case_values<double>(c.n, seed, exact);
        std::memcpy(bytes.data(), v.data(), bytes.size());
    }
    // Poison what lies around the input, so a read past either end adds garbage.
    std::vector<char> region(std::min(memory.bytes, (c.n + c.offset + 64) * size), 0x5A);
    std::copy(bytes.begin(), bytes.end(), region.begin() + static_cast<std::ptrdiff_t>(c.offset * size));
    CHECK(cudaMemcpy(memory.at<char>(0), region.data(), region.size(), cudaMemcpyHostToDevice));
    Request q;
    q.type = wire_type(c.type);
    q.offset = c.offset * size;
    q.n = c.n;
    q.block = static_cast<std::uint32_t>(c.block);
    q.repeats = 2;  // the second run reuses the workspace, as a caller would
    // Half the aligned cases on an exactly sized private copy, as the sanitizers' are, so
    // that a private copy does not mark a sanitizer's run.
    if (c.offset == 0 && (copy_in || ((seed >> 7) & 1))) q.flags = kCopyIn;
    if (replay) q.op = kReplay;
    std::vector<double> got;
    std::string error;
    if (!worker.ask(q, got, error, o.timeout, replay ? *replay : std::vector<char>{})) return error;
    if (!unchanged(memory, region)) return kWroteInput;
    for (int run = 0; run < 2; ++run) {
        if (!(std::isfinite(got[run]) && got[run] == static_cast<double>(exact))) {
            return "expected " + std::to_string(exact) + ", got " + got_text(got[run]) + " (run " +
                   std::to_string(run + 1) + " of 2)";
        }
    }
    return "";
}

// ---------------------------------------------------------------- sanitizers
// Two phases, never at once. First the submission's worker, a plain one like every other,
// runs a sequence of cases and sends back, with each request's sums, the record of what its
// launcher asked of the GPU (worker/recorder.cu); then every process of the student's user
// is killed, and the judge's replay (replay.cu), started under compute-sanitizer, repeats
// the records in order with the worker's kernels, at the worker's addresses, on the same
// inputs. No host code of the submission's runs under the sanitizer, so none can look for
// it (the attack reviews' 28 and 30-34 read the sanitizer's traces in their process), and
// no process of the student's runs while the replay does. The sanitizer's verdict is its
// own exit status (--error-exitcode) and its own log file, never what the process under it
// prints; and the replay's sums must be right too, so a record that leaves out work, or
// kernels whose result hangs on something the replay does not repeat, gain nothing.
int Judge::sanitize() {
    const bool race = o.tool == "racecheck";
    // A size and a block drawn from the seed, near 2^16 (racecheck is slow) or near 10^6
    // with a partial last block and tail.
    const std::uint64_t pick = mix(o.seed, race ? 77 : 78);
    const std::size_t n = race ? (std::size_t{1} << 16) - 1000 + pick % 2000 : 999000 + pick % 2000;
    const std::vector<int> all = blocks(o);
    const int block = all[(pick >> 20) % all.size()];
    // The worker is not told what its records are for: it records every request, in every
    // step. Its run holds the public cases, drawn from the seed, with the sanitizer's own
    // case at a drawn place among them, more launcher calls than a whole timed block makes,
    // and last a reduction of the timed size, so that neither a call count nor the timed n
    // sets this worker apart (the attack review's 01 and 02 ran clean code on a process's
    // first call only). The public cases only: this step's line is visible before the
    // deadline, and a hidden case failing here would show there (the attack review's 09).
    std::vector<Case> decoys;
    for (const Case& c : group_cases("public", o)) {
        if (c.n > 0 && c.n <= (race ? std::size_t{1} << 14 : std::size_t{1} << 18)) decoys.push_back(c);
    }
    for (std::size_t i = decoys.size(); i > 1; --i) std::swap(decoys[i - 1], decoys[mix(pick, 1000 + i) % i]);
    // 60 cases, 120 calls: more than a timed block's worker ever makes (40 of warm-up and
    // 60 timed), so no count of calls tells the two apart.
    decoys.resize(std::min<std::size_t>(decoys.size(), 60));
    struct Step {
        Case c;
        std::uint64_t seed;
        bool own;  // the sanitizer's own case: on an exactly sized private copy
        std::vector<char> record;
    };
    std::vector<Step> steps;
    for (std::size_t i = 0; i < decoys.size(); ++i) steps.push_back({decoys[i], mix(pick, 2000 + i), false, {}});
    const std::size_t own_place = (pick >> 32) % (decoys.size() + 1);
    const Case own_case{Type::Int, n, block, 0};
    steps.insert(steps.begin() + static_cast<std::ptrdiff_t>(own_place), Step{own_case, mix(pick, 1), true, {}});
    const Case timed_size{Type::Int, std::size_t{1} << o.perf_log2n, 256, 0};
    steps.push_back({timed_size, mix(pick, 3000), false, {}});
    std::size_t bytes = 0;
    for (const Step& step : steps) bytes = std::max(bytes, (step.c.n + step.c.offset + 64) * type_size(step.c.type));
    SharedMemory memory(bytes, device.id);
    // Each phase starts from the same memory: zeros, then the same cases written in the same
    // order, so that no word of it differs between the worker's step and the replay's
    // (review18/38 read a word the worker's steps had not yet reached: zero there, and in
    // the replay still holding the last case's values).
    auto clear = [&] {
        CHECK(cudaMemset(memory.at<char>(0), 0, memory.bytes));
        CHECK(cudaDeviceSynchronize());  // done before any worker reads it
    };
    clear();

    // 1. The submission's worker, recording.
    std::string error;
    bool sums_right = true;
    {
        auto worker = start_worker("student", {o.worker}, o.run_as, memory, error);
        sums_right = error.empty();
        for (Step& step : steps) {
            if (!sums_right) break;
            const std::string failure = run_case(*worker, memory, step.c, step.seed, step.own);
            if (!failure.empty()) {
                sums_right = false;
                error = "a case of the run replayed under " + o.tool + " (" + case_text(step.c) + "): " + failure;
            }
            step.record = worker->last_record;
        }
        worker->stop();
        kill_every_process_of(o.run_as);  // nothing of the student's runs while the sanitizer does
    }

    if (!sums_right) {
        std::printf("SANITIZER %s ERROR %s\n", o.tool.c_str(), error.c_str());
        return 0;
    }

    // 2. The replay, under the sanitizer. It runs as the judge's user (root on Gradescope)
    // and only its target, the replay, as the student's: `judge --exec-as USER` drops the
    // rights between the two, so that the submission's kernels run in no process of root's.
    // The log is a fresh file in the judge's own folder, which no process of the student's
    // user may write, and the exit status is the judge's child's. `all` follows the replay
    // past that exec; without a user to drop to, `application-only` follows it alone.
    const std::string log = o.logs + "/" + o.tool + ".log";
    const int log_fd = create_fresh(log, 0600);  // read back through this descriptor, below
    std::vector<std::string> argv = {o.sanitizer, "--tool", o.tool, "--error-exitcode", "86", "--log-file", log,
                                     "--target-processes", o.run_as.empty() ? "application-only" : "all"};
    if (race) argv.insert(argv.end(), {"--racecheck-report", "analysis"});
    if (!o.run_as.empty()) {
        const std::string refused = new_processes_deniable();
        if (!refused.empty()) throw CouldNotGrade(refused);
        argv.insert(argv.end(), {self_path(), "--exec-as", o.run_as});
    }
    argv.insert(argv.end(), {replay_path(), "--device-code", o.worker});
    if (race) argv.push_back("--copy-guard");  // as the worker has it; memcheck sees a read past a copy's end
    const auto one_process = watch_for_a_second_process(o.run_as);
    clear();
    auto worker = start_worker("replay-" + o.tool, argv, "", memory, error);
    if (!error.empty()) throw CouldNotGrade("the replay did not start: " + error);
    for (const Step& step : steps) {
        const std::string failure = run_case(*worker, memory, step.c, step.seed, step.own, &step.record);
        if (!failure.empty()) {
            sums_right = false;
            error = "the replay of the launcher's work under " + o.tool + " (" + case_text(step.c) +
                    ") did not give the worker's sums: " + failure;
            break;
        }
    }
    const std::string ended = worker->stop(120);
    const int status = worker->exit_status();
    const std::string second_process = one_process ? one_process->stop() : "";
    kill_every_process_of(o.run_as);  // before the log is read: nothing of the student's may rewrite it
    // The whole log, every summary in it: the sanitizer writes its own last, after its
    // target has ended, so a summary written by anything else (review6/15 wrote one
    // through a descriptor its worker inherited) can add a line but never hide the
    // sanitizer's. Clean means every summary says none.
    constexpr std::size_t kMostLog = std::size_t{256} << 20;
    struct stat log_stat {};
    const bool log_whole = fstat(log_fd, &log_stat) == 0 && std::size_t(log_stat.st_size) <= kMostLog;
    // As many bytes as the log holds (read_through sizes its buffer by its bound).
    const std::string text = log_whole ? read_through(log_fd, std::size_t(log_stat.st_size)) : "";
    close(log_fd);
    const std::string summary_key = race ? "RACECHECK SUMMARY:" : "ERROR SUMMARY:";
    std::string summary;  // the last one, or the first that is not zero
    bool every_summary_zero = true;
    std::istringstream lines(text);
    std::vector<std::string> details;
    for (std::string line; std::getline(lines, line);) {
        if (line.find(summary_key) != std::string::npos) {
            const bool zero = line.find(race ? ": 0 hazard" : ": 0 error") != std::string::npos;
            if (every_summary_zero) summary = line;
            every_summary_zero = every_summary_zero && zero;
        } else if ((line.find("azard") != std::string::npos || line.find("Invalid") != std::string::npos ||
                  line.find("rror") != std::string::npos) && details.size() < 12) {
            details.push_back(line.substr(0, 200));
        }
    }
    const bool zero = !summary.empty() && every_summary_zero;
    std::string verdict;
    if (!second_process.empty()) {
        verdict = "ERROR " + second_process + "; the sanitizer watches its target alone, so the work of another process goes unseen";
    } else if (!log_whole) {
        verdict = "ERROR the sanitizer's log is larger than 256 MiB";
    } else if (status == 86 || (!summary.empty() && !zero)) {
        // Before the sums: a replay that memcheck stopped at a bad access gives none.
        verdict = "FOUND " + (summary.empty() ? std::string("errors (exit 86)") : summary);
    } else if (!sums_right) {
        verdict = "ERROR " + error;
    } else if (status == 0 && zero) {
        verdict = "CLEAN " + summary + " (" + case_text({Type::Int, n, block, 0}) + ")";
    } else {
        verdict = "ERROR the sanitizer ended with " + ended + (summary.empty() ? ", no summary in its log" : "");
    }
    for (const std::string& d : details) std::printf("DETAIL %s\n", d.c_str());
    std::printf("SANITIZER %s %s\n", o.tool.c_str(), verdict.c_str());
    return 0;
}

int usage(const std::string& why) {
    std::fprintf(stderr, "judge: %s\n", why.c_str());
    return 2;
}


}  // namespace judge

int main(int argc, char** argv) {
    using namespace judge;
    if (argc > 1 && std::strcmp(argv[1], "--exec-as") == 0) return exec_as(argc, argv);
    // Every kernel of the judge's loaded now, not at its first launch, when a submission's
    // worker could be holding all the GPU's memory.
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&](const char* name) -> std::string {
            if (i + 1 >= argc) throw std::invalid_argument(std::string(name) + " needs a value");
            return argv[++i];
        };
        try {
            if (a == "--device" || a == "--correctness" || a == "--perf") o.mode = a;
            else if (a == "--sanitize") { o.mode = a; o.tool = value("--sanitize"); }
            else if (a == "--worker") o.worker = value("--worker");
            else if (a == "--reference") o.reference = value("--reference");
            else if (a == "--previous") o.previous = value("--previous");
            else if (a == "--sanitizer") o.sanitizer = value("--sanitizer");
            else if (a == "--run-as") o.run_as = value("--run-as");
            else if (a == "--logs") o.logs = value("--logs");
            else if (a == "--min-block") o.min_block = std::stoi(value("--min-block"));
            else if (a == "--timeout") o.timeout = std::stoi(value("--timeout"));
            else if (a == "--perf-log2n") o.perf_log2n = std::stoi(value("--perf-log2n"));
            else if (a == "--perf-batch") o.perf_batch = std::stoi(value("--perf-batch"));
            else if (a == "--perf-small") o.perf_small = std::stoi(value("--perf-small"));
            else if (a == "--perf-rounds") o.perf_rounds = std::stoi(value("--perf-rounds"));
            else return usage("unknown argument '" + a + "'");
        } catch (const std::exception& e) {
            return usage(e.what());
        }
    }
    if (const char* seed = std::getenv("CLASSROOM_SEED")) o.seed = std::strtoull(seed, nullptr, 10);
    if (o.mode.empty()) return usage("give --device, --correctness, --sanitize TOOL or --perf");
    if (o.mode != "--device" && o.worker.empty()) return usage("give --worker");
    if (o.mode == "--perf" && (o.reference.empty() || o.previous.empty())) return usage("--perf needs --reference and --previous");
    if (o.mode == "--sanitize" && (o.sanitizer.empty() || (o.tool != "racecheck" && o.tool != "memcheck"))) {
        return usage("--sanitize takes racecheck or memcheck, and needs --sanitizer PATH");
    }
    if (o.perf_log2n < 10 || o.perf_log2n > 30 || o.perf_batch < 2 || o.perf_batch > static_cast<int>(kMaxBatch) ||
        o.perf_small < 1 || o.perf_small >= o.perf_batch || o.perf_rounds < 1 || o.perf_rounds > 99) {
        return usage("--perf-log2n takes 10..30, --perf-batch 2..64, --perf-small 1..(batch - 1), --perf-rounds 1..99");
    }
    if (o.min_block < 1 || o.min_block > o.max_block || (o.min_block & (o.min_block - 1))) return usage("bad --min-block");
    if (!o.run_as.empty() && geteuid() != 0) return usage("--run-as needs the judge to run as root");
    try {
        Judge judge{o, open_device()};
        if (o.mode == "--device") {
            std::printf("%s\n", describe(judge.device).c_str());
            return 0;
        }
        if (o.mode == "--correctness") return judge.correctness();
        if (o.mode == "--sanitize") return judge.sanitize();
        return judge.perf();
    } catch (const CouldNotGrade& e) {
        std::printf("COULD_NOT_GRADE %s\n", e.what());
        return 3;
    }
}
