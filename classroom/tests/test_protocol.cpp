// The judge hands its GPU memory to a worker as a file descriptor over their socket
// (worker/protocol.h): the descriptor that arrives is the same open file, with the message.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <set>

#include "launch_record.h"
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

// The worker's record of a launcher's work (worker/launch_record.h) is written in a process
// that runs the submission's code, and read by the replay: what is written comes back whole,
// and bytes that are not a whole record, or a record cut short, are refused, never read past.
TEST(LaunchRecord, ComesBackWholeAndRefusesWhatIsNotARecord) {
    using namespace launch_record;
    Writer writer;
    Launch launch;
    launch.grid[0] = 7;
    launch.block[0] = 256;
    launch.shared_bytes = 1024;
    launch.status = 98;
    launch.attribute_count = 1;
    launch.attributes[0][0] = 5;
    launch.name = "_Z6kernelPKiPim";
    launch.parameters = {std::vector<char>(8, 'a'), std::vector<char>(8, 'b'), std::vector<char>(4, 'c')};
    writer.ensure({5, 0, 4096});
    writer.memset({0x600000000000ull, 256, 0x7F, 0});
    writer.launch(launch);
    writer.copy({1, 2, 3});
    writer.func_attribute({"_Z6kernelPKiPim", 8, 65536, 1});
    const std::vector<char> record = writer.finish();

    std::vector<OpKind> kinds;
    read(record, [&](OpKind kind, const void* op) {
        kinds.push_back(kind);
        if (kind == OpKind::Launch) {
            const auto& l = *static_cast<const Launch*>(op);
            EXPECT_EQ(l.name, launch.name);
            EXPECT_EQ(l.grid[0], 7u);
            EXPECT_EQ(l.block[0], 256u);
            EXPECT_EQ(l.shared_bytes, 1024u);
            EXPECT_EQ(l.status, 98);
            EXPECT_EQ(l.attribute_count, 1u);
            EXPECT_EQ(l.attributes[0][0], 5);
            EXPECT_EQ(l.parameters, launch.parameters);
        }
        if (kind == OpKind::Memset) {
            EXPECT_EQ(static_cast<const Memset*>(op)->value, 0x7F);
        }
        if (kind == OpKind::FuncAttribute) {
            EXPECT_EQ(static_cast<const FuncAttribute*>(op)->value, 65536);
            EXPECT_EQ(static_cast<const FuncAttribute*>(op)->status, 1);
        }
    });
    EXPECT_EQ(kinds, (std::vector<OpKind>{OpKind::Ensure, OpKind::Memset, OpKind::Launch, OpKind::Copy, OpKind::FuncAttribute}));

    auto refused = [](const std::vector<char>& bytes) {
        try {
            read(bytes, [](OpKind, const void*) {});
        } catch (const std::runtime_error&) {
            return true;
        }
        return false;
    };
    EXPECT_FALSE(refused(Writer().finish()));  // a request that launched nothing
    // Every way of cutting it short: refused, but where the cut falls between two operations
    // (the flag alone, or whole operations, is a record of less work).
    std::set<std::size_t> between = {4};
    for (std::size_t at = 4; at < record.size();) {
        std::uint32_t length = 0;
        std::memcpy(&length, &record[at + 4], 4);
        at += 8 + length;
        between.insert(at);
    }
    EXPECT_EQ(between.size(), 6u);
    for (std::size_t cut = 0; cut < record.size(); ++cut) {
        const std::vector<char> shorter(record.begin(), record.begin() + static_cast<std::ptrdiff_t>(cut));
        EXPECT_EQ(refused(shorter), !between.count(cut)) << "cut at " << cut;
    }
    std::vector<char> too_long_an_op = record;
    too_long_an_op[8] = static_cast<char>(0xFF);  // the first operation's length
    EXPECT_TRUE(refused(too_long_an_op));
    std::vector<char> unknown = record;
    unknown[4] = 99;  // the first operation's kind
    EXPECT_TRUE(refused(unknown));
    std::vector<char> truncated = record;
    truncated[0] = 1;  // the worker's "more than a record holds"
    EXPECT_TRUE(refused(truncated));
}

}  // namespace
