#include "grader_internal.h"

#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "assignment.h"
#include "compiled_check.h"
#include "generator.h"
#include "markers.h"
#include "process.h"
#include "sha256.h"
#include "source_check.h"
#include "student_user.h"


namespace classroom::grading_steps {

void Grader::public_tests_feedback(int stage) {
    const std::string name = stage_name(stage);
    const std::string filter = public_tests_filter(stage);
    // Worth nothing, so it may not eat the budget of the parts that are (a test that
    // hangs keeps the machine's lock too): a few minutes at most.
    constexpr int kFeedbackSeconds = 180;
    if (!tests_unbuilt.empty()) {
        add(stage, "the tree's public tests (feedback, no points)", 0, false,
            "Feedback only (no points): " + tests_unbuilt, {"feedback"});
        return;
    }
    const ProcessResult r = run_student({(build / "bin" / "gpu_tests").string(), "--gtest_filter=" + filter,
                                         "--gtest_brief=1"}, std::min(options.test_timeout, kFeedbackSeconds));
    static const std::regex failure(R"(Failure|FAILED|not implemented|Expected|: got )");
    std::string output = "Feedback only (no points): the tree's own tests, gpu_tests --gtest_filter=" + filter + ". ";
    if (r.timed_out) {
        output += "They did not finish in time.";
    } else if (r.exit_code == 0) {
        output += "They report that they passed.";
    } else {
        output += "They report failures:\n" + matching_lines(r.output, failure, 25);
    }
    add(stage, "the tree's public tests (feedback, no points)", 0, r.exit_code == 0 && !r.timed_out, output, {"feedback"});
}

bool Grader::correctness(int stage, const std::string& worker) {
    const ProcessResult r = run_judge({"--correctness", "--worker", worker}, options.test_timeout * 3);
    std::map<std::string, std::pair<bool, std::string>> groups;  // group -> passed, details
    std::string pending;
    std::istringstream in(r.output);
    static const std::regex verdict(R"(^GROUP (\w+) (PASS|FAIL) (.*)$)");
    for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (std::regex_match(line, m, verdict)) {
            groups[m[1]] = {m[2] == "PASS", pending + m.str(3)};
            pending.clear();
        } else if (line.rfind("FAIL ", 0) == 0 || line.rfind("the worker ended", 0) == 0) {
            pending += line + "\n";
        }
    }
    const std::string missing =
        r.timed_out ? "the judge did not finish in time" : "not judged:\n" + last_lines(r.output, 6);
    auto verdict_of = [&](const std::string& group) {
        const auto it = groups.find(group);
        const bool passed = it != groups.end() && it->second.first;
        return std::make_pair(passed, it != groups.end() ? it->second.second : missing);
    };
    const auto pub = verdict_of("public");
    // How the worker held the judge's inputs (read-only where the driver allows it).
    std::string mapping;
    for (const std::string& m : lines_starting(r.output, "INFO the submission's worker mapped its inputs ")) mapping = m;
    // One name per part, whatever happened (batch's columns, Gradescope's tests).
    add(stage, "public cases", rubric.public_cases, pub.first,
        "The public tests' sizes, fresh inputs, checked by the grader: " + pub.second +
            (mapping.empty() ? "" : "\n(the worker mapped the inputs " + mapping + ")"),
        {"public"});
    for (const std::string& group : hidden_groups()) {
        const auto v = verdict_of(group);
        add(stage, "hidden cases, " + group, rubric.hidden_group, v.first, v.second, {"hidden", group}, "after_due_date");
    }
    // The sanitizers and the timing wait for the public cases alone: a visible line that
    // waited for the hidden ones too would tell, before the deadline, whether they passed.
    // Each of them checks its own sums.
    return pub.first;
}

void Grader::sanitizer_test(int stage, const std::string& tool, double points, bool correct, const std::string& worker) {
    if (!correct) {
        add(stage, tool, points, false, "not run: the stage must pass every public case first", {"sanitizer"});
        return;
    }
    if (sanitizer.empty()) {
        add(stage, tool, points, false, "compute-sanitizer not found on the grading machine (it ships with the CUDA Toolkit)",
            {"sanitizer"});
        infrastructure_failed = true;
        return;
    }
    const ProcessResult r = run_judge({"--sanitize", tool, "--sanitizer", sanitizer, "--worker", worker},
                                      options.test_timeout);
    const auto verdicts = lines_starting(r.output, "SANITIZER " + tool + " ");
    std::string output;
    bool clean = false;
    if (verdicts.empty()) {
        output = r.timed_out ? tool + " did not finish in time" : "no verdict:\n" + last_lines(r.output, 8);
    } else {
        const std::string& v = verdicts.back();
        clean = v.rfind("CLEAN ", 0) == 0;
        output = v.substr(v.find(' ') + 1);
        for (const std::string& d : lines_starting(r.output, "DETAIL ")) output += "\n" + d;
    }
    add(stage, tool, points, clean, output, {"sanitizer"});
}

Grader::Judged Grader::time_submission(int stage, const std::string& worker) {
    const fs::path reference_build = trusted / "reference-build";
    Judged j;
    j.run = run_judge({"--perf", "--worker", worker, "--reference", worker_of(reference_build, stage), "--previous",
                       worker_of(reference_build, stage - 1)},
                      options.test_timeout);
    j.t = parse_perf(j.run.output);
    return j;
}

void Grader::performance(int stage, bool correct, const std::string& worker) {
    const double full_at = rubric.threshold(stage);
    const double points = rubric.performance;
    const std::string title = "performance";
    if (!correct) {
        add(stage, title, points, false, "not measured: the stage must pass every public case first", {"performance"});
        return;
    }
    Judged j = time_submission(stage, worker);
    if (!j.complete()) {
        std::string why = j.run.timed_out ? "timed out\n" : "";
        for (const std::string& f : lines_starting(j.run.output, "PERF submission FAILED ")) why += f + "\n";
        add(stage, title, points, false, why + last_lines(j.run.output, 6), {"performance"});
        return;
    }
    // A timing the judge does not trust (the reference or the fixed cost departed from
    // their calibration, or the submission is faster than the reference's spread allows)
    // is timed once more, where the budget leaves room: a disturbance of a moment (the
    // reference 4.01% slower than calibrated, bound 4%, on an honest upload at 6c8a053)
    // passes, one that lasts (a process of the submission's left behind) fails both. Two
    // untrusted timings earn nothing and are no grade: the whole grading could not grade
    // (exit 3, and on Gradescope no results.json), with the judge's reasons in the report.
    // (A submission that gave a wrong sum earns nothing whatever the timing: below.)
    auto distrust = [](const Judged& judged) {
        const auto trust = lines_starting(judged.run.output, "TRUST UNTRUSTED ");
        return trust.empty() || !judged.t.at("submission").verified ? std::string() : trust.back();
    };
    auto could_not_grade = [&](const Judged& judged, const std::string& before) {
        infrastructure_failed = true;
        add(stage, title, points, false,
            before + "could not grade: the grader does not trust this timing: " + distrust(judged) + "\n" +
                // the judge's CALIBRATION, CALIBRATED, TRUST and FLOOR lines: the evidence
                last_lines(judged.run.output, 4) + "\nThe instructor regrades it (docs/classroom.md, regrading).",
            {"performance"});
    };
    std::string retimed;
    if (const std::string first = distrust(j); !first.empty()) {
        if (remaining() - 15 < j.run.seconds) {
            could_not_grade(j, "too little of the grading's time budget was left to time it again: ");
            return;
        }
        const Judged second = time_submission(stage, worker);
        if (!second.complete()) {
            add(stage, title, points, false,
                "timed a second time (the first timing was not trusted: " + first + "), and that timing did not complete:\n" +
                    last_lines(second.run.output, 6),
                {"performance"});
            return;
        }
        if (!distrust(second).empty()) {
            could_not_grade(second, "timed twice, trusted neither (the first: " + first + "); the second: ");
            return;
        }
        j = second;
        retimed = "\nThe first timing was not trusted (" + first + "), so it was timed again: these are the second's figures.";
    }
    double vs_reference = j.vs_reference();
    double previous_vs_reference = j.previous_for_credit();
    std::string again;
    // Near the threshold the judge's noise could decide: one more timing, the two averaged.
    // Only where the budget leaves room for twice the first timing: a second timing cut
    // short would cost the points the first earned (then the first stands, and says so).
    const bool near_threshold = rubric.remeasure_band > 0 && std::abs(vs_reference - full_at) <= rubric.remeasure_band &&
                                j.t.at("submission").verified;
    if (near_threshold && remaining() - 15 < 2 * j.run.seconds) {
        again = "\nWithin " + fixed(rubric.remeasure_band, 2) + " of the threshold, but too little of the grading's "
                "time budget was left to time it again: this one timing stands.";
    } else if (near_threshold) {
        // The second timing is held to what the first was: incomplete is no points, a
        // wrong sum or a broken floor in either counts.
        const Judged second = time_submission(stage, worker);
        if (!second.complete()) {
            add(stage, title, points, false,
                "timed a second time (within " + fixed(rubric.remeasure_band, 2) + " of the threshold), and that timing " +
                    "did not complete:\n" + last_lines(second.run.output, 6),
                {"performance"});
            return;
        }
        if (!distrust(second).empty()) {
            could_not_grade(second, "timed a second time (within " + fixed(rubric.remeasure_band, 2) + " of the threshold): ");
            return;
        }
        if (!second.t.at("submission").verified || !second.broken_floor().empty()) j = second;
        again = "\nWithin " + fixed(rubric.remeasure_band, 2) + " of the threshold, so timed twice: " +
                fixed(vs_reference, 3) + "x and " + fixed(second.vs_reference(), 3) + "x, averaged.";
        vs_reference = (vs_reference + second.vs_reference()) / 2;
        previous_vs_reference = (previous_vs_reference + second.previous_for_credit()) / 2;
    }
    const Timing& sub = j.t.at("submission");
    const Timing& ref = j.t.at("reference");
    const Timing& prev = j.t.at("previous");
    const double vs_previous = sub.median / prev.median;
    const std::string broken_floor = j.broken_floor();
    const double earned = sub.verified && broken_floor.empty()
                              ? rubric.performance_points(stage, vs_reference, previous_vs_reference)
                              : 0;
    std::ostringstream out;
    out << "median time " << fixed(sub.median * 1000, 1) << " us per reduction (" << fixed(sub.min * 1000, 1) << " - "
        << fixed(sub.max * 1000, 1) << " over the rounds): " << fixed(vs_reference, 3)
        << "x the reference solution's " << fixed(ref.median * 1000, 1) << " us and " << fixed(vs_previous, 3)
        << "x the previous stage's (" << stage_name(stage - 1) << ") " << fixed(prev.median * 1000, 1)
        << " us, on this GPU, each in its own process, timed by the grader." << retimed << again << "\nFull points at or below "
        << fixed(full_at, 2) << "x the reference; on this GPU the previous stage takes "
        << fixed(previous_vs_reference, 3) << "x the reference's time";
    if (rubric.partial_margin < 0 || previous_vs_reference - rubric.partial_margin <= full_at) {
        out << ".";
    } else {
        out << ", and points fall linearly to none at " << fixed(previous_vs_reference - rubric.partial_margin, 3)
            << "x (the previous stage's ratio less " << fixed(rubric.partial_margin, 2) << ").";
    }
    if (j.t.count("fixed")) {
        const Timing& f = j.t.at("fixed");
        out << "\nEach time is a request's time less the protocol's fixed cost per request (" << fixed(f.median * 1000, 1)
            << " us, " << fixed(f.min * 1000, 1) << " - " << fixed(f.max * 1000, 1)
            << " over the rounds, measured on the instructor's workers alone), divided by the request's reductions.";
    }
    if (!sub.verified) {
        out << "\nA timed run gave a wrong sum: no points.";
        for (const std::string& f : lines_starting(j.run.output, "PERF_FAILURE submission ")) out << " " << f;
    }
    if (!broken_floor.empty()) out << "\nA timed request was faster than the GPU's memory can read its inputs: not credible, no points (" << broken_floor << ").";
    add_points(stage, title, points, earned, out.str(), {"performance"});
    ratios.push_back({stage, vs_reference, vs_previous, previous_vs_reference});
}

void Grader::grade_stage(int stage) {
    line_number = 0;
    current_min_block = rubric.min_block(stage);
    const std::string worker = worker_of(build, stage);
    if (!out_of_time()) public_tests_feedback(stage);
    if (out_of_time()) {
        add_zeros(stage, out_of_time_text());
        return;
    }
    const bool correct = correctness(stage, worker);  // the public cases
    // With the gate off (rubric.txt) the parts after correctness run whatever the public
    // cases gave; each is skipped with the reason once the budget is spent.
    const bool gate_open = correct || !rubric.gate_on_public_cases;
    auto part = [&](const std::string& name, double points, const char* tag, auto&& run) {
        if (gate_open && out_of_time()) {
            add(stage, name, points, false, out_of_time_text(), {tag});
        } else {
            run();
        }
    };
    part("racecheck", rubric.racecheck, "sanitizer",
         [&] { sanitizer_test(stage, "racecheck", rubric.racecheck, gate_open, worker); });
    part("memcheck", rubric.memcheck, "sanitizer",
         [&] { sanitizer_test(stage, "memcheck", rubric.memcheck, gate_open, worker); });
    part("performance", rubric.performance, "performance", [&] { performance(stage, gate_open, worker); });
}

void Grader::zero_every_stage(const std::string& why, const std::map<int, std::string>& refused) {
    for (int k : assignment.stages()) {
        line_number = 0;
        add_zeros(k, refused.count(k) ? refused.at(k) : why);
    }
}

}  // namespace classroom::grading_steps
