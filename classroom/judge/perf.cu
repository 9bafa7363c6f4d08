// judge --perf: the submission, the reference and the previous stage timed in rounds
// (the comment above Judge::perf says how, and why it can be trusted).
#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "judge.h"
#include "timing_model.h"
#include "worker_process.h"

namespace judge {

// Fresh inputs on the GPU for one timed request: every buffer new, from its own seed.
__global__ void fill_inputs(int* data, std::size_t n, std::size_t stride, unsigned batch, std::uint64_t seed) {
    const std::size_t total = n * batch;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < total;
         i += std::size_t(gridDim.x) * blockDim.x) {
        const std::size_t k = i / n, j = i % n;  // input k of the batch, its element j
        data[k * stride + j] = static_cast<int>(signed_value(mix(seed + k * 0x9E3779B97F4A7C15ULL, j), 8));
    }
}

// How many values of a request's inputs differ from what fill_inputs wrote: the worker
// must leave its inputs as it found them.
__global__ void count_changed_inputs(const int* data, std::size_t n, std::size_t stride, unsigned batch,
                                     std::uint64_t seed, unsigned* changed) {
    const std::size_t total = n * batch;
    unsigned local = 0;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < total;
         i += std::size_t(gridDim.x) * blockDim.x) {
        const std::size_t k = i / n, j = i % n;
        local += data[k * stride + j] != static_cast<int>(signed_value(mix(seed + k * 0x9E3779B97F4A7C15ULL, j), 8));
    }
    if (local) atomicAdd(changed, local);
}

// Writes (and reads) twice the L2's size, so no line of the last input is left in it.
__global__ void flush_l2(int4* scratch, std::size_t count) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x) {
        int4 v = scratch[i];
        v.x += 1;
        scratch[i] = v;
    }
}

using timing_model::median;

// The submission, the reference and the previous stage, each in its own worker under the
// same protocol: round after round, in a rotated order, each timed request a batch of
// reductions of fresh inputs none of the workers has seen, the L2 flushed before it,
// timed on this side from the request to the answer, every sum checked.
//
// No process of the submission exists while an instructor's worker is timed. The
// instructor's workers are started and timed alone first (the calibration); in the rounds
// the submission's worker is started for its own block (warmed up like the others), timed,
// and ended before anything else is timed, with every process of the student's user (as
// root) or of its session. What a submission's process could do while it lives (threads
// that keep the GPU or the CPUs busy) then meets only its own timing; what would outlive it
// shows as the reference or the fixed cost departing from the calibration, and the timing
// is not trusted (timing_model.h).
//
// A request's time is its reductions' plus a fixed cost that is no reduction's: the
// socket's round trip, the worker waking up, the GPU switching from this process's context
// to the worker's, the copy of the sums back. On the H100 it is 0.22-0.27 ms (judge_timing.csv),
// about a sixth of a 16-reduction request, and left in, it pulls every ratio towards 1. So
// every worker also answers small requests (kSmall inputs), and the fixed cost follows, on
// the instructor's two workers only, from the two sizes: T(B) = fixed + B * t gives fixed = (L*T(S) - S*T(L)) / (L - S).
// It is measured on trusted workers only (the submission's code cannot move it) and
// subtracted from every program's large requests; the large requests time the whole batch,
// so work moved from one reduction of a request to another gains nothing.
int Judge::perf() {
    // 2^26 int (256 MiB) an input, far more than any L2.
    const std::size_t kN = std::size_t{1} << o.perf_log2n;
    const unsigned kLarge = static_cast<unsigned>(o.perf_batch), kSmall = static_cast<unsigned>(o.perf_small);
    const int kRounds = o.perf_rounds, kCalibration = 3, kPerRound = 3, kWarmup = 2;
    const std::size_t stride = kN * sizeof(int) + 256;  // each input on its own 256-byte boundary
    // The submission's inputs in an allocation of their own, never mapped by an
    // instructor's worker; every worker's inputs are checked after each request.
    SharedMemory instructor_memory(stride * kLarge, device.id), submission_memory(stride * kLarge, device.id);
    auto memory_of = [&](int w) -> const SharedMemory& { return w == 0 ? submission_memory : instructor_memory; };
    unsigned* changed_d = nullptr;
    CHECK(cudaMalloc(&changed_d, sizeof(unsigned)));
    const std::size_t scratch_count = 2 * static_cast<std::size_t>(device.prop.l2CacheSize) / sizeof(int4) + 1;
    int4* scratch = nullptr;
    CHECK(cudaMalloc(&scratch, scratch_count * sizeof(int4)));
    CHECK(cudaMemset(scratch, 0, scratch_count * sizeof(int4)));
    int* expected_d = nullptr;
    CHECK(cudaMalloc(&expected_d, kLarge * sizeof(int)));
    std::size_t cub_bytes = 0;
    CHECK(cub::DeviceReduce::Sum(nullptr, cub_bytes, instructor_memory.at<int>(0), expected_d, static_cast<int>(kN)));
    void* cub_scratch = nullptr;
    CHECK(cudaMalloc(&cub_scratch, cub_bytes));

    const char* roles[3] = {"submission", "reference", "previous"};
    const std::string programs[3] = {o.worker, o.reference, o.previous};
    std::unique_ptr<Worker> workers[3];
    bool verified[3] = {true, true, true};
    std::string failure[3];
    std::vector<double> reported[3];  // the worker's own event time per reduction: printed, never judged
    // Each timed request's inputs from a fresh 64-bit seed of the OS's, not from the
    // grading's seed: that one is printed in the report and spans 10^12 values, few enough
    // for a worker to recover from the inputs it sees and predict the next ones.
    std::random_device entropy;
    auto fresh_seed = [&entropy] { return (std::uint64_t(entropy()) << 32) ^ entropy(); };
    // One request of `batch` reductions; its time in ms from request to answer, or -1.
    auto timed_request = [&](int w, unsigned batch) -> double {
        const std::uint64_t seed = fresh_seed();
        const SharedMemory& memory = memory_of(w);
        fill_inputs<<<1024, 256>>>(memory.at<int>(0), kN, stride / sizeof(int), batch, seed);
        CHECK(cudaGetLastError());
        for (unsigned k = 0; k < batch; ++k) {
            CHECK(cub::DeviceReduce::Sum(cub_scratch, cub_bytes, memory.at<int>(k * stride), expected_d + k,
                                         static_cast<int>(kN)));
        }
        flush_l2<<<1024, 256>>>(scratch, scratch_count);
        CHECK(cudaGetLastError());
        std::vector<int> expected(batch);
        CHECK(cudaMemcpy(expected.data(), expected_d, batch * sizeof(int), cudaMemcpyDeviceToHost));  // synchronizes
        Request q;
        q.n = kN;
        q.block = 256;
        q.batch = batch;
        q.stride = stride;
        std::vector<double> got;
        std::string error;
        const auto t0 = std::chrono::steady_clock::now();
        const bool answered = workers[w]->ask(q, got, error, o.timeout);
        const auto t1 = std::chrono::steady_clock::now();
        if (!answered) {
            verified[w] = false;
            if (failure[w].empty()) failure[w] = error;
            return -1;
        }
        {  // the inputs as the judge made them? After the clock, and for every worker alike,
           // so that each request is followed by the same work whoever made it.
            CHECK(cudaMemset(changed_d, 0, sizeof(unsigned)));
            count_changed_inputs<<<1024, 256>>>(memory.at<int>(0), kN, stride / sizeof(int), batch, seed, changed_d);
            CHECK(cudaGetLastError());
            unsigned changed = 0;
            CHECK(cudaMemcpy(&changed, changed_d, sizeof changed, cudaMemcpyDeviceToHost));
            if (changed) {
                verified[w] = false;
                if (failure[w].empty()) failure[w] = kWroteInput;
            }
        }
        for (unsigned k = 0; k < batch; ++k) {
            if (got[k] != static_cast<double>(expected[k])) {
                verified[w] = false;
                if (failure[w].empty()) {
                    failure[w] = "a timed run gave " + got_text(got[k]) + " for a sum of " + std::to_string(expected[k]);
                }
            }
        }
        if (batch == kLarge) reported[w].push_back(workers[w]->last_worker_ms / batch);
        return std::chrono::duration<double, std::milli>(t1 - t0).count();
    };
    // Every block starts with the same untimed requests, whether its worker was just started
    // (the submission's) or waited through the others' blocks (the instructor's): without
    // them a freshly started submission came out about 1.4% faster than the same program
    // kept waiting (judge_timing.csv at f021e52).
    auto warm = [&](int w) {
        for (int i = 0; i < kWarmup && verified[w]; ++i) {
            timed_request(w, kLarge);
            timed_request(w, kSmall);
        }
    };
    // Starts a program's worker: false (with the failure set) when it did not start.
    auto start = [&](int w) {
        std::string error;
        workers[w] = start_worker(roles[w], {programs[w]}, w == 0 ? o.run_as : "", memory_of(w), error);
        if (!error.empty()) {
            verified[w] = false;
            if (failure[w].empty()) failure[w] = "the worker did not start: " + error;
            return false;
        }
        return true;
    };
    // The submission's worker ends, and with it everything of its user's (as root) or of its
    // session: nothing of it lives on into an instructor's block.
    auto end_submission = [&] {
        if (workers[0]) workers[0]->stop(1);
        kill_every_process_of(o.run_as);
    };
    // One block: a program's timed requests, large and small in turn; the medians into
    // `large` and `small` (per block).
    auto block = [&](int w, std::vector<double>& large, std::vector<double>& small, double& fastest) {
        warm(w);
        std::vector<double> l, s;
        for (int i = 0; i < kPerRound && verified[w]; ++i) {
            const double t = timed_request(w, kLarge);
            if (t > 0) {
                l.push_back(t);
                fastest = std::min(fastest, t);
            }
            // The submission gets the same small requests, though its own never enter the fixed
            // cost: every worker then sees one schedule, and none pays for its neighbour's
            // pattern. (Without them the submission's large requests each followed a large one
            // and a reference timed against itself came out about 1% slow: judge_timing.csv.)
            if (!verified[w]) continue;
            const double u = timed_request(w, kSmall);
            if (u > 0) s.push_back(u);
        }
        if (!l.empty()) large.push_back(median(l));
        if (!s.empty()) small.push_back(median(s));
    };
    auto fixed_estimates_of = [&](const std::vector<double>* large, const std::vector<double>* small) {
        std::vector<double> estimates;
        for (int w = 1; w < 3; ++w) {
            for (std::size_t r = 0; r < std::min(large[w].size(), small[w].size()); ++r) {
                estimates.push_back(timing_model::fixed_cost(small[w][r], kSmall, large[w][r], kLarge));
            }
        }
        return estimates;
    };

    // The calibration: the instructor's workers alone, before any process of the submission
    // exists (nothing of an earlier step's either).
    kill_every_process_of(o.run_as);
    for (int w = 1; w < 3; ++w) {
        if (!start(w)) throw CouldNotGrade(std::string("the ") + roles[w] + " worker did not start: " + failure[w]);
    }
    std::vector<double> calibration_large[3], calibration_small[3], large[3], small[3], fastest_large(3, 1e300);
    double unused = 1e300;
    for (int round = 0; round < kCalibration; ++round) {
        for (int k = 0; k < 2; ++k) {
            const int w = 1 + (k + round) % 2;
            block(w, calibration_large[w], calibration_small[w], unused);
        }
    }
    // The rounds: the submission's worker lives only through its own block.
    for (int round = 0; round < kRounds; ++round) {
        for (int k = 0; k < 3; ++k) {
            const int w = (k + round) % 3;
            if (w == 0) {
                if (!verified[0]) continue;
                if (start(0)) block(0, large[0], small[0], fastest_large[0]);
                end_submission();
            } else {
                block(w, large[w], small[w], fastest_large[w]);
            }
        }
    }
    for (auto& w : workers) {
        if (w) w->stop();
    }
    kill_every_process_of(o.run_as);
    if (!verified[1] || !verified[2]) {
        throw CouldNotGrade(std::string("the instructor's worker failed: ") + failure[verified[1] ? 2 : 1]);
    }
    if (!verified[0] && large[0].empty() && failure[0].rfind("the worker did not start", 0) == 0) {
        std::printf("PERF submission FAILED %s\n", failure[0].c_str());
        return 0;
    }
    // The fixed cost of a request: one estimate per round from each instructor's worker.
    const std::vector<double> fixed_estimates = fixed_estimates_of(large, small);
    const std::vector<double> calibration_fixed = fixed_estimates_of(calibration_large, calibration_small);
    if (fixed_estimates.empty() || calibration_fixed.empty()) {
        throw CouldNotGrade("no small request of the instructor's workers was timed");
    }
    const double fixed_ms = std::max(0.0, median(fixed_estimates));
    std::printf("n = 2^%d int per reduction, block 256, requests of %u fresh inputs (and of %u for the fixed cost), "
                "%d rounds of %d timed requests per program in a rotated order after %d rounds of the instructor's "
                "workers alone, the submission's worker alive only during its own blocks, L2 flushed before each request, "
                "timed by the judge from request to answer, on %s\n",
                o.perf_log2n, kLarge, kSmall, kRounds, kPerRound, kCalibration, device.prop.name);
    const auto [fixed_lo, fixed_hi] = std::minmax_element(fixed_estimates.begin(), fixed_estimates.end());
    std::printf("FIXED ms=%.6f min_ms=%.6f max_ms=%.6f (a request's cost beyond its reductions, from the instructor's "
                "workers' %u- and %u-input requests; subtracted from every program's)\n",
                fixed_ms, *fixed_lo, *fixed_hi, kSmall, kLarge);
    double medians[3] = {0, 0, 0}, mins[3] = {0, 0, 0}, maxes[3] = {0, 0, 0};
    for (int w = 0; w < 3; ++w) {
        if (large[w].empty()) {
            std::printf("PERF %s FAILED %s\n", roles[w], failure[w].c_str());
            continue;
        }
        std::vector<double> per_reduction;
        for (double t : large[w]) per_reduction.push_back(timing_model::per_reduction(t, kLarge, fixed_ms));
        medians[w] = median(per_reduction);
        const auto [lo, hi] = std::minmax_element(per_reduction.begin(), per_reduction.end());
        mins[w] = *lo;
        maxes[w] = *hi;
        std::printf("PERF %s median_ms=%.6f min_ms=%.6f max_ms=%.6f %s\n", roles[w], medians[w], *lo, *hi,
                    verified[w] ? "verified" : "FAILED");
        if (!verified[w]) std::printf("PERF_FAILURE %s %s\n", roles[w], failure[w].c_str());
        // For whoever tunes this protocol: the judge's time against the worker's own events.
        std::printf("INFO %s request_ms=%.6f", roles[w], median(large[w]));
        if (!small[w].empty()) std::printf(" small_request_ms=%.6f", median(small[w]));
        if (!reported[w].empty()) std::printf(" worker_event_ms_per_reduction=%.6f (not trusted)", median(reported[w]));
        std::printf("\n");
    }
    // Can the timing be trusted? The calibration against the rounds, and the submission
    // against the reference's spread.
    timing_model::TimingEvidence evidence;
    evidence.calibrated_reference_request_ms = calibration_large[1].empty() ? 0 : median(calibration_large[1]);
    evidence.reference_request_ms = large[1].empty() ? 0 : median(large[1]);
    evidence.calibrated_fixed_ms = std::max(0.0, median(calibration_fixed));
    evidence.fixed_ms = fixed_ms;
    evidence.submission_ms = large[0].empty() || !verified[0] ? 1e300 : medians[0];  // a wrong sum earns nothing anyway
    evidence.reference_ms = medians[1];
    evidence.reference_min_ms = mins[1];
    evidence.reference_max_ms = maxes[1];
    const timing_model::TimingVerdict trust = timing_model::judge_timing(evidence);
    std::printf("CALIBRATION reference_request_ms=%.6f alone, %.6f in the rounds (slowdown %+.4f, bound %.4f); "
                "fixed_ms=%.6f alone, %.6f in the rounds (rise %+.4f ms, bound %.4f); fastest credible submission "
                "%.6f ms per reduction\n",
                evidence.calibrated_reference_request_ms, evidence.reference_request_ms, trust.reference_slowdown,
                timing_model::kMaxReferenceSlowdown, evidence.calibrated_fixed_ms, evidence.fixed_ms, trust.fixed_rise_ms,
                timing_model::kMaxFixedRiseMs, trust.fastest_credible_ms);
    // The previous stage against the reference while no process of the submission existed:
    // the grader's partial credit takes the smaller of this and the rounds' ratio, so that a
    // submission cannot widen its own credit by slowing the previous stage's blocks.
    if (!calibration_large[1].empty() && !calibration_large[2].empty()) {
        const double f = evidence.calibrated_fixed_ms;
        std::printf("CALIBRATED previous_vs_reference=%.6f\n",
                    (median(calibration_large[2]) - f) / (median(calibration_large[1]) - f));
    }
    if (trust.trusted) std::printf("TRUST ok\n");
    else std::printf("TRUST UNTRUSTED %s\n", trust.why.c_str());
    // The floor: no request reads its bytes faster than the memory can deliver them (the
    // request's whole time, nothing subtracted).
    if (!large[0].empty() && device.peak_bytes_per_s > 0) {
        const double fastest = fastest_large[0] / kLarge;
        const double floor_ms = kN * sizeof(int) / device.peak_bytes_per_s * 1e3;
        std::printf("FLOOR fastest_ms=%.6f floor_ms=%.6f %s\n", fastest, floor_ms, fastest >= floor_ms ? "ok" : "BROKEN");
    } else {
        std::printf("FLOOR unknown (the GPU reports no memory clock)\n");
    }
    cudaFree(scratch);
    cudaFree(changed_d);
    cudaFree(expected_d);
    cudaFree(cub_scratch);
    return 0;
}

}  // namespace judge
