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

}  // namespace
