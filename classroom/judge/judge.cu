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
// at setup and removed.
#include <cub/device/device_reduce.cuh>
#include <cuda.h>
#include <cuda_runtime.h>

#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pwd.h>
#include <signal.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "protocol.h"
#include "student_user.h"  // the autograder copies it beside this file (classroom/generator.cpp)
#include "timing_model.h"

namespace {

using namespace grading_wire;

// ---------------------------------------------------------------- checks
struct CouldNotGrade : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void check(cudaError_t r, const char* what) {
    if (r != cudaSuccess) throw CouldNotGrade(std::string(what) + ": " + cudaGetErrorString(r));
}
void check(CUresult r, const char* what) {
    if (r != CUDA_SUCCESS) {
        const char* name = nullptr;
        cuGetErrorName(r, &name);
        throw CouldNotGrade(std::string(what) + ": " + (name ? name : "unknown error"));
    }
}
#define CHECK(call) check((call), #call)

// ---------------------------------------------------------------- options
struct Options {
    std::string mode, tool, worker, reference, previous, sanitizer, run_as, logs = "/tmp";
    int min_block = 32, max_block = 1024;
    int timeout = 120;  // seconds for one request
    // The timed inputs: 2^26 int (256 MiB) each, 16 a request (4 GiB of GPU memory in all),
    // 4 in the small requests that measure the protocol's fixed cost; 9 rounds.
    int perf_log2n = 26, perf_batch = 16, perf_small = 4, perf_rounds = 9;
    std::uint64_t seed = 1;
};

__host__ __device__ std::uint64_t mix(std::uint64_t seed, std::uint64_t i) {
    std::uint64_t z = seed * 0xD1B54A32D192ED03ULL + (i + 1) * 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 29)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 32);
}

// An input value from a hash: a nonzero integer of at most `magnitude`, its sign from the
// lowest bit. The host's cases and the GPU's timed inputs draw the same way.
__host__ __device__ long long signed_value(std::uint64_t z, long long magnitude) {
    return (1 + static_cast<long long>((z >> 1) % static_cast<std::uint64_t>(magnitude))) * ((z & 1) ? 1 : -1);
}

// ---------------------------------------------------------------- the shared memory
// One VMM allocation, exported as a POSIX file descriptor that each worker receives over
// its socket (SCM_RIGHTS): no path or name another process could guess.
struct SharedMemory {
    CUdeviceptr base = 0;
    std::size_t bytes = 0;
    int fd = -1;

    SharedMemory(std::size_t wanted, int device) {
        CUmemAllocationProp prop{};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = device;
        prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        std::size_t granularity = 0;
        CHECK(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
        bytes = (wanted + granularity - 1) / granularity * granularity;
        CUmemGenericAllocationHandle handle{};
        CHECK(cuMemCreate(&handle, bytes, &prop, 0));
        CHECK(cuMemExportToShareableHandle(&fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
        CHECK(cuMemAddressReserve(&base, bytes, 0, 0, 0));
        CHECK(cuMemMap(base, bytes, 0, handle, 0));
        CHECK(cuMemRelease(handle));
        CUmemAccessDesc access{};
        access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        access.location.id = device;
        access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        CHECK(cuMemSetAccess(base, bytes, &access, 1));
    }
    template <typename T>
    T* at(std::size_t offset) const { return reinterpret_cast<T*>(base + offset); }
};

// ---------------------------------------------------------------- a worker process
std::vector<std::string> worker_environment() {
    // A fresh environment: what CUDA and the sanitizer need, nothing of the grader's (the
    // seed in particular).
    std::vector<std::string> env(std::begin(grading_wire::kWorkerKeeps), std::end(grading_wire::kWorkerKeeps));
    for (const char* name : {"PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES",
                             "NVIDIA_DRIVER_CAPABILITIES", "TMPDIR"}) {
        if (const char* value = std::getenv(name)) env.push_back(std::string(name) + "=" + value);
    }
    return env;
}

// One past the highest descriptor this process may hold (at most 65536).
int descriptor_limit() {
    rlimit limit{};
    return getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < 65536 ? static_cast<int>(limit.rlim_cur) : 65536;
}

// Closes every descriptor from `first` on, in a child about to exec.
void close_descriptors_from(int first) {
    for (int fd = first, most = descriptor_limit(); fd < most; ++fd) close(fd);
}

// The text of an open file, read through its descriptor (not its path, which a student's
// process could have pointed elsewhere), at most `most` bytes from its start.
std::string read_through(int fd, std::size_t most = 1 << 20) {
    std::string text(most, '\0');
    std::size_t got = 0;
    while (got < most) {
        const ssize_t r = pread(fd, &text[got], most - got, static_cast<off_t>(got));
        if (r <= 0) break;
        got += static_cast<std::size_t>(r);
    }
    text.resize(got);
    return text;
}

int create_fresh(const std::string& path, mode_t mode = 0644) {
    unlink(path.c_str());
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) throw CouldNotGrade("cannot create " + path);
    return fd;
}

// Drops this process's rights to `user`'s, for good, with the bounds on its tasks and on
// the size of a file it writes (student_user.h, shared with the grader's steps).
bool become(const passwd& user) { return student_user::become(user.pw_uid, user.pw_gid); }

// The student's account, where the judge may act on its processes: `user` named, not
// root, and the judge root; else null.
const passwd* student_account(const std::string& user) {
    const passwd* pw = user.empty() || geteuid() != 0 ? nullptr : getpwnam(user.c_str());
    return pw && pw->pw_uid != 0 ? pw : nullptr;
}

// Every process of `user` (a student's process left running could still write the
// sanitizer's log, which the sanitizer writes as that user), waited for until none is
// alive: a killed process holds its GPU context until the driver has torn it down. Root
// only; a no-op otherwise. A process that outlives SIGKILL makes the judging untrusted.
void kill_every_process_of(const std::string& user) {
    const passwd* pw = student_account(user);
    if (!pw) return;
    const std::string problem = student_user::end_every_process_of(pw->pw_uid, pw->pw_gid);
    if (!problem.empty()) throw CouldNotGrade(problem);
}

// The sanitizer's watch for a second process of the student's user (student_user.h), for
// `user` (root only; a no-op otherwise).
std::unique_ptr<student_user::SecondProcessWatch> watch_for_a_second_process(const std::string& user) {
    const passwd* pw = student_account(user);
    return pw ? std::make_unique<student_user::SecondProcessWatch>(pw->pw_uid) : nullptr;
}

// This program's own path: it is also the step that drops to the student's user between
// the sanitizer and the worker (--exec-as).
std::string self_path() {
    char path[4096];
    const ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
    if (length <= 0) throw CouldNotGrade("cannot find the judge's own path");
    return std::string(path, static_cast<std::size_t>(length));
}

// ---------------------------------------------------------------- no new process under the sanitizer
// The sanitizer instruments its target, and the processes it starts, through the
// environment; a child that drops that environment goes on uninstrumented and can serve
// the requests (review5/13, review7/16; a hand-off quicker than any watch's poll,
// review8). So the sanitized worker may start no process: a seccomp filter, installed by
// `judge --exec-as` just before it execs the worker and kept by the kernel for that
// process's life, refuses fork, vfork, clone without CLONE_THREAD (threads are allowed:
// the CUDA driver and the sanitizer start them) and clone3 (as not implemented, so that the
// C library falls back to clone, whose flags a filter can read). Exec stays allowed here:
// the sanitizer follows its target through the C library's execve (a raw execveat lost it
// on the H100: "Target application terminated before first instrumented API call"); the
// worker forbids itself any exec from before the submission's first instruction
// (grading/exec_filter.h), which stops the worker re-run in place (review8/17).
#if defined(__x86_64__)
constexpr std::uint32_t kFilterArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr std::uint32_t kFilterArch = AUDIT_ARCH_AARCH64;
#else
constexpr std::uint32_t kFilterArch = 0;  // no filter here: the sanitizer's runs cannot be graded
#endif

// Installs the filter on the calling thread (which then execs: the filter goes with it).
// False, with errno set, where the kernel refuses it.
bool deny_new_processes() {
    if (kFilterArch == 0) {
        errno = ENOSYS;
        return false;
    }
    constexpr std::uint32_t kAllow = SECCOMP_RET_ALLOW, kRefuse = SECCOMP_RET_ERRNO | EPERM;
    std::vector<sock_filter> f;
    auto load = [&](std::uint32_t offset) { f.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset)); };
    auto answer = [&](std::uint32_t action) { f.push_back(BPF_STMT(BPF_RET | BPF_K, action)); };
    auto refuse = [&](std::uint32_t nr, std::uint32_t action) {  // A holds the call's number
        f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1));
        answer(action);
    };
    load(offsetof(seccomp_data, arch));
    f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kFilterArch, 1, 0));
    answer(SECCOMP_RET_KILL_PROCESS);  // another calling convention (i386's int 0x80): no way around the filter
    load(offsetof(seccomp_data, nr));
#if defined(__x86_64__)
    f.push_back(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));  // the x32 numbers
    answer(kRefuse);
    refuse(SYS_fork, kRefuse);
    refuse(SYS_vfork, kRefuse);
#endif
#ifdef SYS_clone3
    refuse(SYS_clone3, SECCOMP_RET_ERRNO | ENOSYS);
#endif
    // clone: threads only.
    f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4));
    load(offsetof(seccomp_data, args[0]));
    f.push_back(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 1, 0));
    answer(kRefuse);
    answer(kAllow);
    answer(kAllow);
    const sock_fprog program{static_cast<unsigned short>(f.size()), f.data()};
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
           prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}

// Whether this machine lets a process install the filter (a container's own seccomp
// profile, or an old kernel, may refuse it): asked by a child before the sanitizer starts,
// so that a refusal is the machine's ("could not grade"), never the student's.
std::string new_processes_deniable() {
    const pid_t pid = fork();
    if (pid < 0) return std::string("fork failed: ") + std::strerror(errno);
    if (pid == 0) _exit(deny_new_processes() ? 0 : 1);
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        return "this machine refuses the seccomp filter that keeps the sanitized worker from starting a process";
    }
    return "";
}

// judge --exec-as USER PROGRAM ARGS...: becomes USER (root only) and runs PROGRAM with this
// process's environment, which the sanitizer in front of it has prepared, under the filter
// above. Returns only on failure.
int exec_as(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "judge: --exec-as USER PROGRAM [ARGS...]\n");
        return 2;
    }
    const passwd* user = getpwnam(argv[2]);
    if (!user || user->pw_uid == 0 || !become(*user)) {
        std::fprintf(stderr, "judge: could not become %s\n", argv[2]);
        return 126;
    }
    // The sanitizer opens its --log-file without close-on-exec, so its target would inherit
    // a writable descriptor of root's log (the attack review6/15: a fake summary written
    // through it). Every regular file past stdout and stderr is closed; the sanitizer's own
    // channels to its target are pipes and sockets, and stay.
    for (int fd = 3, most = descriptor_limit(); fd < most; ++fd) {
        struct stat st {};
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) close(fd);
    }
    if (!deny_new_processes()) {
        std::fprintf(stderr, "judge: cannot install the filter against new processes: %s\n", std::strerror(errno));
        return 126;
    }
    execve(argv[3], argv + 3, environ);
    std::fprintf(stderr, "judge: cannot run %s: %s\n", argv[3], std::strerror(errno));
    return 127;
}

class Worker {
public:
    // argv: the program (and a sanitizer in front of it); "--socket 3" is appended.
    Worker(std::string role, std::vector<std::string> argv, const std::string& run_as, const std::string& log_path)
        : role_(std::move(role)), log_path_(log_path) {
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) throw CouldNotGrade("socketpair failed");
        // A new file, never one found there (no link followed); the worker writes it through
        // the descriptor it inherits.
        const int log = create_fresh(log_path);
        passwd* user = nullptr;
        if (!run_as.empty()) {
            user = getpwnam(run_as.c_str());
            if (!user) throw CouldNotGrade("no user " + run_as);
        }
        argv.push_back("--socket");
        argv.push_back("3");
        const std::vector<std::string> env = worker_environment();
        pid_ = fork();
        if (pid_ == 0) {
            setsid();  // its own session and process group: killed as one when it is done
            dup2(pair[1], 3);
            dup2(log, STDOUT_FILENO);
            dup2(log, STDERR_FILENO);
            const int null = open("/dev/null", O_RDONLY);
            dup2(null, STDIN_FILENO);
            close_descriptors_from(4);  // nothing of the judge's (its output above all) reaches the worker
            rlimit no_core{0, 0};
            setrlimit(RLIMIT_CORE, &no_core);
            if (user && !become(*user)) {
                std::fprintf(stderr, "judge: could not become %s\n", run_as.c_str());
                _exit(126);
            }
            std::vector<char*> args, envp;
            for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
            for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
            args.push_back(nullptr);
            envp.push_back(nullptr);
            execve(args[0], args.data(), envp.data());
            std::fprintf(stderr, "judge: cannot run %s\n", args[0]);
            _exit(127);
        }
        close(pair[1]);
        log_fd_ = log;  // kept: the log is read back through it
        if (pid_ < 0) throw CouldNotGrade("fork failed");
        socket_ = pair[0];
    }
    ~Worker() {
        stop();
        if (log_fd_ >= 0) close(log_fd_);
    }
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;

    // "" when the worker mapped the memory; else why not.
    std::string start(const SharedMemory& memory, int device, int timeout_s) {
        Setup setup;
        setup.device = static_cast<std::uint32_t>(device);
        setup.bytes = memory.bytes;
        if (!send_with_fd(socket_, &setup, sizeof setup, memory.fd)) return "it did not start" + tail();
        Ready ready;
        if (!recv_all(socket_, &ready, sizeof ready, timeout_s * 1000) || ready.magic != kMagic) {
            return "it did not answer the setup" + tail();
        }
        if (ready.kind != Kind::Ready) return std::string("it could not map the input: ") + clean(ready.text);
        mapping_ = clean(ready.text);
        return "";
    }
    // How the worker mapped the inputs ("read-only", or "read-write" where the driver refused).
    const std::string& mapping() const { return mapping_; }

    // One request; false (with `error` set) when the worker did not answer in time, died
    // or said it failed.
    bool ask(const Request& q, std::vector<double>& values, std::string& error, int timeout_s) {
        values.clear();
        last_worker_ms = 0;
        if (!send_all(socket_, &q, sizeof q)) {
            error = "the worker is gone" + tail();
            return false;
        }
        Reply reply;
        if (!recv_all(socket_, &reply, sizeof reply, timeout_s * 1000) || reply.magic != kMagic ||
            reply.kind != Kind::Reply) {
            // Said as it happened: a worker that died (a signal, its exit) is not one that hung.
            const std::string ended = stop(1);
            error = (ended.rfind("killed", 0) == 0 ? "no answer within " + std::to_string(timeout_s) + " s"
                                                   : "the worker ended without answering (" + ended + ")") +
                    tail();
            return false;
        }
        if (reply.count != q.batch * q.repeats && reply.ok) {
            error = "a malformed answer";
            stop();
            return false;
        }
        values.resize(reply.ok ? reply.count : 0);
        if (!values.empty() && !recv_all(socket_, values.data(), values.size() * sizeof(double), timeout_s * 1000)) {
            error = "a broken answer" + tail();
            stop();
            return false;
        }
        if (!reply.ok) {
            error = std::string("the launcher failed: ") + clean(reply.text);
            return false;
        }
        last_worker_ms = reply.worker_ms;
        return true;
    }
    float last_worker_ms = 0;  // what the worker says its batch took: printed, never judged

    // Ends the worker: a quit request, a few seconds' grace, then its whole session is
    // killed. Returns how it ended, for the report.
    std::string stop(int grace_s = 10) {
        if (pid_ <= 0) return ended_;
        if (socket_ >= 0) {
            Request quit;
            quit.op = kQuit;
            send_all(socket_, &quit, sizeof quit);
        }
        int status = 0;
        bool exited = false;
        for (int i = 0; i < grace_s * 50; ++i) {
            if (waitpid(pid_, &status, WNOHANG) == pid_) {
                exited = true;
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        kill(-pid_, SIGKILL);  // its session, whatever it left behind in it
        if (!exited) waitpid(pid_, &status, 0);
        if (socket_ >= 0) close(socket_);
        socket_ = -1;
        pid_ = -1;
        exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        ended_ = !exited ? "killed after the quit request" :
                 WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status)) :
                                     "signal " + std::to_string(WTERMSIG(status)) + ", " + strsignal(WTERMSIG(status)) +
                                         (WTERMSIG(status) == SIGXFSZ ? ": it wrote past the " +
                                                                            std::to_string(student_user::kFileBytes >> 20) +
                                                                            " MiB a file of the student's user may hold"
                                                                      : "");
        return ended_;
    }
    int exit_status() const { return exit_status_; }
    bool running() const { return pid_ > 0; }

    // The last lines the worker printed: the student's own output, labelled as such.
    std::string tail() const {
        std::istringstream in(read_through(log_fd_));
        std::vector<std::string> lines;
        for (std::string line; std::getline(in, line) && lines.size() < 10000;) lines.push_back(line);
        if (lines.empty()) return "";
        std::string out = "; the worker's last output:";
        for (std::size_t i = lines.size() > 4 ? lines.size() - 4 : 0; i < lines.size(); ++i) {
            out += " | " + lines[i].substr(0, 160);
        }
        return out;
    }

private:
    static std::string clean(const char* text) {
        std::string s(text, strnlen(text, kTextBytes));
        for (char& c : s) if (c < 0x20 || c > 0x7e) c = '?';
        return s;
    }
    std::string role_, log_path_, ended_ = "not started", mapping_;
    pid_t pid_ = -1;
    int socket_ = -1;
    int log_fd_ = -1;
    int exit_status_ = -1;
};

// ---------------------------------------------------------------- the GPU
struct Device {
    int id = 0;
    cudaDeviceProp prop{};
    double peak_bytes_per_s = 0;  // theoretical DRAM bandwidth; 0: unknown
    std::string peak_source;
};

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

// ---------------------------------------------------------------- the cases
enum class Type { Int, Float, Double };
const char* type_name(Type t) { return t == Type::Int ? "int" : t == Type::Float ? "float" : "double"; }
std::size_t type_size(Type t) { return t == Type::Double ? 8 : 4; }
ValueKind wire_type(Type t) {
    return t == Type::Int ? ValueKind::Int32 : t == Type::Float ? ValueKind::Float32 : ValueKind::Float64;
}

struct Case {
    Type type;
    std::size_t n;
    int block;
    std::size_t offset;  // elements past a 256-byte aligned address
};

std::string case_text(const Case& c) {
    return "n=" + std::to_string(c.n) + " type=" + type_name(c.type) + " block=" + std::to_string(c.block) +
           (c.offset ? " offset=" + std::to_string(c.offset) + " elements" : "");
}

std::vector<int> blocks(const Options& o) {
    std::vector<int> b;
    for (int k = o.min_block; k <= o.max_block; k *= 2) b.push_back(k);
    return b;
}

// The groups, in the order the rubric lists them. "public" has the sizes of the student
// tree's own tests (tests/gpu/gpu_test.cu), with inputs drawn here from the secret seed;
// the hidden sizes are none of those: around warp and block edges, odd sizes that need
// three and four passes, and a few million.
const std::vector<std::string> kGroups = {"public", "int", "float", "double", "misaligned"};

std::vector<Case> group_cases(const std::string& group, const Options& o) {
    std::vector<Case> cases;
    const std::vector<int> all = blocks(o);
    const std::vector<int> three = {all.front(), 256, all.back()};
    if (group == "public") {
        const std::vector<std::size_t> sizes = {0,    1,    2,     31,          32,          33,
                                                255,  256,  257,   1023,        1024,        1025,
                                                65537, std::size_t{1} << 20, (std::size_t{1} << 20) + 1,
                                                (std::size_t{1} << 24) + 3};
        for (Type type : {Type::Int, Type::Float, Type::Double}) {
            for (std::size_t n : sizes) {
                for (int block : three) cases.push_back({type, n, block, 0});
            }
        }
    } else if (group == "int" || group == "float" || group == "double") {
        const Type type = group == "int" ? Type::Int : group == "float" ? Type::Float : Type::Double;
        const std::vector<std::size_t> sizes = {3,    63,   64,   65,     127,    129,    511,
                                                513,  2047, 2049, 4097,   100003, 999999, (std::size_t{1} << 21) + 7,
                                                (std::size_t{1} << 23) - 1};
        for (std::size_t n : sizes) {
            for (int block : all) cases.push_back({type, n, block, 0});
        }
    } else if (group == "misaligned") {
        for (Type type : {Type::Int, Type::Float, Type::Double}) {
            for (std::size_t n : {std::size_t{4099}, std::size_t{1000001}}) {
                for (int block : three) {
                    for (std::size_t offset : {1, 2, 3}) cases.push_back({type, n, block, offset});
                }
            }
        }
    }
    return cases;
}

// Nonzero integers with random signs, as small as needed to keep every partial sum exact
// in the type: the right sum has one value, bit for bit, whatever the order of the adds.
template <typename T>
std::vector<T> case_values(std::size_t n, std::uint64_t seed, long long& exact) {
    const long long limit = std::is_same_v<T, int> ? 2147483647LL : std::is_same_v<T, float> ? (1LL << 24) : (1LL << 53);
    const long long magnitude = std::max(1LL, std::min(8LL, limit / static_cast<long long>(std::max<std::size_t>(n, 1))));
    std::vector<T> values(n);
    exact = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const long long v = signed_value(mix(seed, i), magnitude);
        values[i] = static_cast<T>(v);
        exact += v;
    }
    return values;
}

std::string got_text(double got) {
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", got);
    return text;
}

// ---------------------------------------------------------------- correctness
struct Judge {
    Options o;
    Device device;
    int worker_starts = 0;

    std::string log_path(const std::string& role) {
        return o.logs + "/worker-" + role + "-" + std::to_string(++worker_starts) + ".log";
    }

    // `run_as`: the user the program runs as ("": the judge's own).
    std::unique_ptr<Worker> start_worker(const std::string& role, std::vector<std::string> argv, const std::string& run_as,
                                         const SharedMemory& memory, std::string& error) {
        auto w = std::make_unique<Worker>(role, std::move(argv), run_as, log_path(role));
        error = w->start(memory, device.id, std::max(o.timeout, 120));
        if (!error.empty()) w->stop();
        return w;
    }

    int correctness() {
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

    // The inputs are the judge's: a worker maps them read-only where the driver allows it,
    // and, since a process can change its own mapping, the judge reads them back after
    // every request of the submission's and compares.
    static constexpr const char* kWroteInput =
        "the launcher wrote into its input or around it (the stage's contract: the input is read-only)";
    static bool unchanged(const SharedMemory& memory, const std::vector<char>& region) {
        std::vector<char> now(region.size());
        CHECK(cudaMemcpy(now.data(), memory.at<char>(0), now.size(), cudaMemcpyDeviceToHost));
        return now == region;
    }

    std::string run_case(Worker& worker, const SharedMemory& memory, const Case& c, std::uint64_t seed) {
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
        if (c.offset == 0 && ((seed >> 7) & 1)) q.flags = kCopyIn;
        std::vector<double> got;
        std::string error;
        if (!worker.ask(q, got, error, o.timeout)) return error;
        if (!unchanged(memory, region)) return kWroteInput;
        for (int run = 0; run < 2; ++run) {
            if (!(std::isfinite(got[run]) && got[run] == static_cast<double>(exact))) {
                return "expected " + std::to_string(exact) + ", got " + got_text(got[run]) + " (run " +
                       std::to_string(run + 1) + " of 2)";
            }
        }
        return "";
    }

    // ------------------------------------------------------------ sanitizers
    // The sanitizer's verdict is its own exit status (--error-exitcode) and its own log
    // file, never what the program under it prints; and the worker must still have
    // returned the right sums under it, so a program that ends before its kernels run
    // gains nothing.
    int sanitize() {
        const bool race = o.tool == "racecheck";
        // A size and a block drawn from the seed, near 2^16 (racecheck is slow) or near 10^6
        // with a partial last block and tail, so that a launcher cannot tell the sanitizer's
        // run from the others by its size.
        const std::uint64_t pick = mix(o.seed, race ? 77 : 78);
        const std::size_t n = race ? (std::size_t{1} << 16) - 1000 + pick % 2000 : 999000 + pick % 2000;
        const std::vector<int> all = blocks(o);
        const int block = all[(pick >> 20) % all.size()];
        // The sanitized worker must not be told apart by what it is asked either (the attack
        // review's 01 and 02 ran clean code on a process's first call only): it gets a run of
        // the public cases, drawn from the seed, with the sanitizer's own case at a drawn
        // place among them, more launcher calls than a whole timed block makes, and last
        // a reduction of the timed size, so that neither a call count nor the timed n can
        // keep the code it times from the sanitizer. Every sum is checked.
        // The public cases only: this step's line is visible before the deadline, and a
        // hidden case failing here would show there (the attack review's 09, graded again).
        std::vector<Case> decoys;
        for (const Case& c : group_cases("public", o)) {
            if (c.n > 0 && c.n <= (race ? std::size_t{1} << 14 : std::size_t{1} << 18)) decoys.push_back(c);
        }
        for (std::size_t i = decoys.size(); i > 1; --i) std::swap(decoys[i - 1], decoys[mix(pick, 1000 + i) % i]);
        // 60 cases, 120 calls: more than a timed block's worker ever makes (40 of warm-up and
        // 60 timed), so no count of calls tells the two apart.
        decoys.resize(std::min<std::size_t>(decoys.size(), 60));
        const std::size_t own_place = (pick >> 32) % (decoys.size() + 1);
        const Case timed_size{Type::Int, std::size_t{1} << o.perf_log2n, 256, 0};
        std::size_t bytes = (timed_size.n + 64) * 4;
        for (const Case& c : decoys) bytes = std::max(bytes, (c.n + c.offset + 64) * type_size(c.type));
        SharedMemory memory(std::max(bytes, n * 4), device.id);
        // The sanitizer runs as the judge's user (root on Gradescope) and only its target, the
        // worker, as the student's: `judge --exec-as USER` drops the rights between the two.
        // Its log is a fresh file in the judge's own folder, which no process of the student's
        // user may write, and its exit status is the judge's child's: neither can be forged
        // from the worker. `all` follows the worker past that exec (and into any process it
        // starts, which the sanitizer then waits for, and which dies with the step); without
        // a user to drop to, `application-only` follows the worker alone, so that a process it
        // leaves behind does not keep the step (and itself) alive.
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
        argv.push_back(o.worker);
        std::string error;
        const auto one_process = watch_for_a_second_process(o.run_as);
        auto worker = start_worker("student-" + o.tool, argv, "", memory, error);
        std::string verdict;
        bool sums_right = error.empty();
        auto other_case = [&](const Case& c, std::uint64_t seed) {
            if (!sums_right) return;
            const std::string failure = run_case(*worker, memory, c, seed);
            if (!failure.empty()) {
                sums_right = false;
                error = "a case under " + o.tool + " (" + case_text(c) + "): " + failure;
            }
        };
        for (std::size_t i = 0; i < own_place; ++i) other_case(decoys[i], mix(pick, 2000 + i));
        if (sums_right) {
            const Case c{Type::Int, n, block, 0};
            Request q;
            q.n = n;
            q.block = static_cast<std::uint32_t>(block);
            q.flags = kCopyIn;
            long long exact = 0;
            const auto values = case_values<int>(n, mix(pick, 1), exact);
            std::vector<char> region(n * 4);
            std::memcpy(region.data(), values.data(), region.size());
            CHECK(cudaMemcpy(memory.at<int>(0), values.data(), n * 4, cudaMemcpyHostToDevice));
            std::vector<double> got;
            sums_right = worker->ask(q, got, error, o.timeout) && got[0] == static_cast<double>(exact);
            if (error.empty() && !sums_right) error = "the sum under " + o.tool + " was wrong (" + case_text(c) + ")";
            if (sums_right && !unchanged(memory, region)) {
                sums_right = false;
                error = kWroteInput;
            }
        }
        for (std::size_t i = own_place; i < decoys.size(); ++i) other_case(decoys[i], mix(pick, 2000 + i));
        other_case(timed_size, mix(pick, 3000));
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
        if (!sums_right) {
            verdict = "ERROR " + error;
        } else if (!second_process.empty()) {
            verdict = "ERROR " + second_process + "; the sanitizer watches its target alone, so the work of another process goes unseen";
        } else if (!log_whole) {
            verdict = "ERROR the sanitizer's log is larger than 256 MiB";
        } else if (status == 86 || (!summary.empty() && !zero)) {
            verdict = "FOUND " + (summary.empty() ? std::string("errors (exit 86)") : summary);
        } else if (status == 0 && zero) {
            verdict = "CLEAN " + summary + " (" + case_text({Type::Int, n, block, 0}) + ")";
        } else {
            verdict = "ERROR the sanitizer ended with " + ended + (summary.empty() ? ", no summary in its log" : "");
        }
        for (const std::string& d : details) std::printf("DETAIL %s\n", d.c_str());
        std::printf("SANITIZER %s %s\n", o.tool.c_str(), verdict.c_str());
        return 0;
    }

    // ------------------------------------------------------------ performance
    int perf();
};

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

int usage(const std::string& why) {
    std::fprintf(stderr, "judge: %s\n", why.c_str());
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
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
