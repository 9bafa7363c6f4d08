// The judge hands its GPU memory to a worker as a file descriptor over their socket
// (grading/protocol.h): the descriptor that arrives is the same open file, with the message.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <cstdlib>

#include "protocol.h"

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

}  // namespace
