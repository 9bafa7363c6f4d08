// The judge's arithmetic on request times (judge.cu --perf), apart so that a host test
// checks it: a request of B reductions takes T(B) = fixed + B * t, and two sizes S < L
// give both unknowns.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace timing_model {

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// The fixed cost of one request, from the times of a small (S inputs) and a large (L inputs)
// request of the same program: L*T(S) - S*T(L) = (L - S) * fixed.
inline double fixed_cost(double small_ms, unsigned small, double large_ms, unsigned large) {
    return (large * small_ms - small * large_ms) / (large - small);
}

// What one reduction of a large request took: the request less the fixed cost, over L.
inline double per_reduction(double large_ms, unsigned large, double fixed_ms) {
    return (large_ms - fixed_ms) / large;
}

// ---------------------------------------------------------------- can the timing be trusted?
// The judge first times the instructor's two workers alone, before any process of the
// submission exists (the calibration), then the rounds, in which the submission's worker
// lives only during its own blocks. Whatever the submission's process does while it lives
// could only reach the instructor's timing through what outlives it; so the reference's
// request time and the fixed cost of the rounds are compared with the calibration's, and a
// submission far faster than the reference is not believed either. Each failed test makes
// the performance part "could not grade" (docs/classroom.md, the threat model): a
// disturbed timing is never turned into points.
//
// The bounds sit between what the reference graded against itself moves (every judging of
// scripts/judge_timing.sh records the slowdown and the rise in judge_timing.csv, where the
// classroom guide quotes them) and what sabotage did: a student's thread that kept the GPU
// busy while its worker idled raised the fixed cost from about 0.25 to 2.05 ms.
constexpr double kMaxReferenceSlowdown = 0.04;  // the reference's large requests 4% slower than calibrated
constexpr double kMaxFixedRiseMs = 0.15;        // the fixed cost 0.15 ms above the calibration's

struct TimingEvidence {
    double calibrated_reference_request_ms = 0;  // median large request, before the submission ran
    double reference_request_ms = 0;             // the same during the rounds
    double calibrated_fixed_ms = 0;              // the fixed cost from the calibration's requests
    double fixed_ms = 0;                         // and from the rounds'
    // Per reduction, over the rounds: the submission's median, the reference's median, fastest
    // and slowest round.
    double submission_ms = 0, reference_ms = 0, reference_min_ms = 0, reference_max_ms = 0;
};

struct TimingVerdict {
    bool trusted = true;
    std::string why;                 // when not trusted: one line for the report
    double reference_slowdown = 0;   // rounds / calibration - 1
    double fixed_rise_ms = 0;        // rounds - calibration
    double fastest_credible_ms = 0;  // a submission below this is not believed
};

// Only what would favour the submission counts: a slower reference or a larger fixed cost
// (both lower its ratio), or a submission faster than the reference by more than the
// reference's own spread between rounds, twice over.
inline TimingVerdict judge_timing(const TimingEvidence& e) {
    TimingVerdict v;
    v.reference_slowdown = e.reference_request_ms / e.calibrated_reference_request_ms - 1;
    v.fixed_rise_ms = e.fixed_ms - e.calibrated_fixed_ms;
    v.fastest_credible_ms = e.reference_min_ms - (e.reference_max_ms - e.reference_min_ms);
    auto fixed3 = [](double x) {
        char text[32];
        std::snprintf(text, sizeof text, "%.3f", x);
        return std::string(text);
    };
    if (!(e.calibrated_reference_request_ms > 0) || !(e.reference_request_ms > 0)) {
        v.trusted = false;
        v.why = "the reference's requests were not timed both before and during the rounds";
    } else if (v.reference_slowdown > kMaxReferenceSlowdown) {
        v.trusted = false;
        v.why = "the reference's requests took " + fixed3(100 * v.reference_slowdown) +
                "% longer during the rounds than when it was timed alone (bound " + fixed3(100 * kMaxReferenceSlowdown) + "%)";
    } else if (v.fixed_rise_ms > kMaxFixedRiseMs) {
        v.trusted = false;
        v.why = "the fixed cost per request rose from " + fixed3(e.calibrated_fixed_ms) + " ms alone to " + fixed3(e.fixed_ms) +
                " ms during the rounds (bound +" + fixed3(kMaxFixedRiseMs) + " ms)";
    } else if (e.submission_ms < v.fastest_credible_ms) {
        v.trusted = false;
        v.why = "the submission's " + fixed3(e.submission_ms * 1000) + " us per reduction is faster than the reference's " +
                fixed3(e.reference_ms * 1000) + " us by more than the reference's own spread allows (below " +
                fixed3(v.fastest_credible_ms * 1000) + " us)";
    }
    return v;
}

}  // namespace timing_model
