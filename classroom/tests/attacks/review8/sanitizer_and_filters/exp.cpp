// Which seccomp filter compute-sanitizer survives (README.txt): exp MODE PROGRAM ARGS...
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
extern char** environ;
static bool filter(bool deny_fork, bool deny_exec) {
    std::vector<sock_filter> f;
    auto load = [&](std::uint32_t o) { f.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, o)); };
    auto ans = [&](std::uint32_t a) { f.push_back(BPF_STMT(BPF_RET | BPF_K, a)); };
    auto refuse = [&](std::uint32_t nr, std::uint32_t a) { f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1)); ans(a); };
    const std::uint32_t no = SECCOMP_RET_ERRNO | EPERM;
    load(offsetof(seccomp_data, nr));
    if (deny_fork) {
        refuse(SYS_fork, no); refuse(SYS_vfork, no); refuse(SYS_clone3, SECCOMP_RET_ERRNO | ENOSYS);
        f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4));
        load(offsetof(seccomp_data, args[0]));
        f.push_back(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 1, 0));
        ans(no); ans(SECCOMP_RET_ALLOW);
    }
    if (deny_exec) { refuse(SYS_execveat, no); }  // execve itself stays (the one exec below)
    ans(SECCOMP_RET_ALLOW);
    sock_fprog p{(unsigned short)f.size(), f.data()};
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p) == 0;
}
int main(int argc, char** argv) {
    const char* mode = argv[1];
    if (!strcmp(mode, "fork")) filter(true, false);
    if (!strcmp(mode, "execveat-deny")) filter(false, true);
    if (!strcmp(mode, "raw-execveat")) {
        int fd = open(argv[2], O_RDONLY | O_CLOEXEC);
        syscall(SYS_execveat, fd, "", argv + 2, environ, AT_EMPTY_PATH);
        perror("execveat");
        return 1;
    }
    execve(argv[2], argv + 2, environ);
    perror("execve");
    return 1;
}
