// The judge's process helpers (worker_process.h says what each is for): a worker's
// environment and descriptors, the student's account and its processes, and the filter
// that keeps the sanitized process (the replay) from starting another (judge --exec-as).
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pwd.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "worker_process.h"

namespace judge {

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
std::string read_through(int fd, std::size_t most) {
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

int create_fresh(const std::string& path, mode_t mode) {
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

// The replay (replay.cu), built beside the judge.
std::string replay_path() {
    const std::string self = self_path();
    return self.substr(0, self.rfind('/') + 1) + "grade_replay";
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
// (worker/exec_filter.h), which stops the worker re-run in place (review8/17).
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
    // The program is opened while this process is still root, and run through that
    // descriptor: the replay lies in the judge's folder, which the student's user may not
    // enter (it may run the file, whose own mode allows that).
    const int program = open(argv[3], O_PATH | O_CLOEXEC);
    if (program < 0) {
        std::fprintf(stderr, "judge: cannot open %s: %s\n", argv[3], std::strerror(errno));
        return 127;
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
        if (fd != program && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) close(fd);
    }
    if (!deny_new_processes()) {
        std::fprintf(stderr, "judge: cannot install the filter against new processes: %s\n", std::strerror(errno));
        return 126;
    }
    // The C library's execve, by the descriptor's own path: the sanitizer follows its target
    // through that call (a raw execveat went past it: "terminated before first instrumented
    // API call").
    char through[64];
    std::snprintf(through, sizeof through, "/proc/self/fd/%d", program);
    execve(through, argv + 3, environ);
    std::fprintf(stderr, "judge: cannot run %s: %s\n", argv[3], std::strerror(errno));
    return 127;
}

}  // namespace judge
