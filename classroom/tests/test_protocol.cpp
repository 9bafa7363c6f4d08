// The judge hands its GPU memory to a worker as a file descriptor over their socket
// (grading/protocol.h): the descriptor that arrives is the same open file, with the message.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <cstdlib>

#include "protocol.h"
#include "timing_model.h"

namespace {

TEST(Protocol, PassesAFileDescriptorWithItsMessage) {
    int pair[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
    char name[] = "/tmp/classroom-protocol-XXXXXX";
    const int file = mkstemp(name);
    ASSERT_GE(file, 0);
    unlink(name);
    grading_wire::Setup sent;
    sent.bytes = 123456789;
    ASSERT_TRUE(grading_wire::send_with_fd(pair[0], &sent, sizeof sent, file));
    grading_wire::Setup got;
    int received = -1;
    ASSERT_TRUE(grading_wire::recv_with_fd(pair[1], &got, sizeof got, received, 1000));
    EXPECT_EQ(got.magic, grading_wire::kMagic);
    EXPECT_EQ(got.bytes, 123456789u);
    struct stat a {}, b {};
    ASSERT_EQ(fstat(file, &a), 0);
    ASSERT_EQ(fstat(received, &b), 0);
    EXPECT_NE(received, file);
    EXPECT_EQ(a.st_ino, b.st_ino);
    EXPECT_EQ(a.st_dev, b.st_dev);
    // A closed peer, or silence past the deadline, is a failure, not a hang.
    int none = -1;
    EXPECT_FALSE(grading_wire::recv_with_fd(pair[1], &got, sizeof got, none, 50));
    close(pair[0]);
    EXPECT_FALSE(grading_wire::recv_all(pair[1], &got, sizeof got, 1000));
    close(pair[1]);
    close(file);
    close(received);
}

// The judge's timing arithmetic: requests made of a known fixed cost and a known time per
// reduction give both back, and a fixed cost left in would have pulled a 1.20x gap to 1.17x.
TEST(TimingModel, RecoversTheFixedCostAndTheTimePerReduction) {
    const double fixed = 0.25, fast = 0.090, slow = 0.108;  // ms: a request's overhead, two programs
    const unsigned small = 4, large = 16;
    auto request = [&](double per, unsigned batch) { return fixed + batch * per; };
    EXPECT_NEAR(timing_model::fixed_cost(request(fast, small), small, request(fast, large), large), fixed, 1e-12);
    EXPECT_NEAR(timing_model::fixed_cost(request(slow, small), small, request(slow, large), large), fixed, 1e-12);
    const double with_fixed = request(slow, large) / request(fast, large);
    const double without = timing_model::per_reduction(request(slow, large), large, fixed) /
                           timing_model::per_reduction(request(fast, large), large, fixed);
    EXPECT_NEAR(without, 1.20, 1e-12);
    EXPECT_LT(with_fixed, 1.18);
    EXPECT_DOUBLE_EQ(timing_model::median({3, 1, 2}), 2);
    EXPECT_DOUBLE_EQ(timing_model::median({4, 1, 3, 2}), 2.5);
}

// The judge's trust in its own timing: only what favours the submission is flagged, and each
// bound is its own test.
TEST(TimingModel, DistrustsOnlyWhatFavoursTheSubmission) {
    timing_model::TimingEvidence steady;
    steady.calibrated_reference_request_ms = 2.40;
    steady.reference_request_ms = 2.41;
    steady.calibrated_fixed_ms = 0.25;
    steady.fixed_ms = 0.26;
    steady.reference_ms = 0.130;
    steady.reference_min_ms = 0.128;
    steady.reference_max_ms = 0.134;
    steady.submission_ms = 0.131;
    EXPECT_TRUE(timing_model::judge_timing(steady).trusted) << timing_model::judge_timing(steady).why;

    auto flagged = [](const timing_model::TimingEvidence& e, const char* word) {
        const timing_model::TimingVerdict v = timing_model::judge_timing(e);
        EXPECT_FALSE(v.trusted);
        EXPECT_NE(v.why.find(word), std::string::npos) << v.why;
    };
    timing_model::TimingEvidence slowed = steady;  // a sabotaged reference (the 0.25 -> 2.05 ms)
    slowed.reference_request_ms = 2.40 * 1.05;
    flagged(slowed, "longer during the rounds");
    timing_model::TimingEvidence costly = steady;
    costly.fixed_ms = 2.05;
    flagged(costly, "fixed cost");
    timing_model::TimingEvidence too_fast = steady;  // below 0.128 - 0.006
    too_fast.submission_ms = 0.121;
    flagged(too_fast, "faster than the reference");
    timing_model::TimingEvidence untimed = steady;
    untimed.calibrated_reference_request_ms = 0;
    flagged(untimed, "not timed");

    // What only hurts the submission is its own business: a faster reference, a smaller
    // fixed cost, a slow submission.
    timing_model::TimingEvidence harmless = steady;
    harmless.reference_request_ms = 2.40 * 0.90;
    harmless.fixed_ms = 0.05;
    harmless.submission_ms = 0.300;
    EXPECT_TRUE(timing_model::judge_timing(harmless).trusted) << timing_model::judge_timing(harmless).why;
    // At the bounds themselves: still trusted.
    timing_model::TimingEvidence edge = steady;
    edge.reference_request_ms = 2.40 * (1 + timing_model::kMaxReferenceSlowdown) - 1e-9;
    edge.fixed_ms = 0.25 + timing_model::kMaxFixedRiseMs - 1e-9;
    edge.submission_ms = 0.122 + 1e-9;
    EXPECT_TRUE(timing_model::judge_timing(edge).trusted) << timing_model::judge_timing(edge).why;
}

}  // namespace
