// The wire between the judge (trusted: it makes the inputs, checks the sums, keeps the
// time) and a worker (the process that runs a stage's launcher: the student's, or the
// instructor's for the reference). docs/classroom.md, "The threat model", says why they
// are two processes.
//
// One Unix stream socket, at a file descriptor the worker is told (--socket FD):
//   1. judge -> worker  Setup, with the file descriptor of the judge's input memory
//                       (a CUDA VMM allocation exported as a POSIX file descriptor,
//                       passed by SCM_RIGHTS); the worker maps it read-only where the
//                       driver allows it, and the judge reads the inputs back after each
//                       request of the submission's: a changed input fails the request.
//   2. worker -> judge  Ready, its text saying how the inputs are mapped (or Failed, why).
//   3. judge -> worker  Request ... worker -> judge Reply (values follow it, then the
//                       request's record: launch_record.h), repeated. The replay
//                       (judge/replay.cu) takes Requests with op kReplay, each followed
//                       by a record, and answers with the sums the record's replay left.
//   4. judge -> worker  Request with kQuit; the worker exits 0. Its exit status means
//                       only "did not crash": no verdict is read from it.
//
// Host C++ only, no CUDA: the judge, the worker and the host tests include it.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace grading_wire {

constexpr std::uint32_t kMagic = 0x52454455;  // "REDU"
constexpr std::uint32_t kVersion = 2;

enum class Kind : std::uint32_t { Setup = 1, Ready = 2, Failed = 3, Request = 4, Reply = 5 };
enum class ValueKind : std::uint32_t { Int32 = 0, Float32 = 1, Float64 = 2 };
enum Op : std::uint32_t { kRun = 1, kQuit = 2, kReplay = 3 };
// Request flags.
enum : std::uint32_t {
    kCopyIn = 1u,  // reduce a private copy of the input that ends where its mapping does
                   // (gpu_window.h): the memcheck replay then sees a read past the end,
                   // which the large shared mapping would hide
};

constexpr std::uint32_t kMaxBatch = 64;  // reductions in one request
constexpr std::uint32_t kMaxRepeats = 4;  // runs of each input in one request
// Where a request's sums land (in the worker and in the replay): room for the most a request asks.
constexpr std::size_t kSumsBytes = kMaxBatch * kMaxRepeats * sizeof(double);

// The variables every worker starts with (judge/worker_process.cpp adds what CUDA needs to
// start): nothing of the grader's, the seed above all. No JIT cache: HOME is /tmp, where a
// worker of the student's could leave a compiled kernel for the replay to load in place of
// the one the worker ran (a reading of review 18; only where the kernels need JIT at all).
constexpr const char* kWorkerKeeps[] = {"HOME=/tmp", "LC_ALL=C", "CUDA_CACHE_DISABLE=1"};
constexpr std::uint32_t kTextBytes = 200;

struct Setup {
    std::uint32_t magic = kMagic, version = kVersion;
    Kind kind = Kind::Setup;
    std::uint32_t device = 0;
    std::uint64_t bytes = 0;  // size of the shared allocation
};

struct Ready {
    std::uint32_t magic = kMagic, version = kVersion;
    Kind kind = Kind::Ready;  // or Failed
    std::uint32_t pad = 0;
    char text[kTextBytes] = {};  // Ready: "read-only" or why read-write; Failed: why
};

struct Request {
    std::uint32_t magic = kMagic;
    Kind kind = Kind::Request;
    std::uint32_t op = kRun;
    ValueKind type = ValueKind::Int32;
    std::uint64_t offset = 0;  // bytes into the shared allocation of the first input
    std::uint64_t stride = 0;  // bytes from one input of the batch to the next
    std::uint64_t n = 0;       // values per input
    std::uint32_t block = 256;
    std::uint32_t batch = 1;   // inputs, reduced back to back on one stream
    std::uint32_t repeats = 1; // runs of each input (the workspace reused, as a caller would)
    std::uint32_t flags = 0;
    std::uint64_t record_bytes = 0;  // kReplay: the record's bytes, which follow
};

// A request a worker or the replay may serve: 1..kMaxBatch inputs, 1..kMaxRepeats runs each.
inline bool well_formed(const Request& q) {
    return q.batch > 0 && q.batch <= kMaxBatch && q.repeats > 0 && q.repeats <= kMaxRepeats;
}

// Then batch * repeats doubles: input k's run r at k * repeats + r. Every value a sum can
// take here (int32, float, double) is exact as a double.
struct Reply {
    std::uint32_t magic = kMagic;
    Kind kind = Kind::Reply;
    std::uint32_t ok = 0;    // 0: the launcher threw or a CUDA call failed: `text` says
    std::uint32_t count = 0; // doubles that follow
    float worker_ms = 0;     // the worker's own event time for the batch: a diagnostic the
                             // judge prints, never a verdict (the worker could say anything)
    std::uint32_t record_bytes = 0;  // the record's, after the values
    char text[kTextBytes] = {};
};

// A reply's or a setup's text, cut to fit.
inline void copy_text(char (&to)[kTextBytes], const char* text) { std::snprintf(to, kTextBytes, "%s", text); }

// ---------------------------------------------------------------- the socket
// Each returns false on a closed socket, an error or the deadline (timeout_ms < 0: none).

inline bool wait_readable(int fd, int timeout_ms) {
    pollfd p{fd, POLLIN, 0};
    for (;;) {
        const int r = poll(&p, 1, timeout_ms);
        if (r > 0) return true;
        if (r == 0) return false;
        if (errno != EINTR) return false;
    }
}

inline bool send_all(int fd, const void* data, std::size_t bytes) {
    const char* p = static_cast<const char*>(data);
    while (bytes) {
        const ssize_t w = send(fd, p, bytes, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        bytes -= static_cast<std::size_t>(w);
    }
    return true;
}

inline bool recv_all(int fd, void* data, std::size_t bytes, int timeout_ms) {
    char* p = static_cast<char*>(data);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (bytes) {
        int left = -1;
        if (timeout_ms >= 0) {
            left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        deadline - std::chrono::steady_clock::now()).count());
            if (left < 0) left = 0;
        }
        if (!wait_readable(fd, left)) return false;
        const ssize_t r = recv(fd, p, bytes, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        p += r;
        bytes -= static_cast<std::size_t>(r);
    }
    return true;
}

// A message with one file descriptor riding along (SCM_RIGHTS): the header both sides fill.
struct FdMessage {
    iovec io;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    FdMessage(void* data, std::size_t bytes) : io{data, bytes} {
        msg.msg_iov = &io;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
    }
    FdMessage(const FdMessage&) = delete;
};

inline bool send_with_fd(int socket, const void* data, std::size_t bytes, int fd) {
    FdMessage m(const_cast<void*>(data), bytes);
    cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
    return sendmsg(socket, &m.msg, MSG_NOSIGNAL) == static_cast<ssize_t>(bytes);
}

inline bool recv_with_fd(int socket, void* data, std::size_t bytes, int& fd, int timeout_ms) {
    if (!wait_readable(socket, timeout_ms)) return false;
    FdMessage m(data, bytes);
    if (recvmsg(socket, &m.msg, MSG_WAITALL) != static_cast<ssize_t>(bytes)) return false;
    cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
    if (!c || c->cmsg_type != SCM_RIGHTS) return false;
    std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
    return true;
}

}  // namespace grading_wire
