// No program but this one, ever, in a worker: a seccomp filter installed before the first
// instruction of the submission's, by an entry of .preinit_array, which the loader runs
// before any initializer of the program or of its libraries (the submission's static
// initializers among them). A worker that could exec would run its program again without
// the sanitizer's environment, uninstrumented, in the same process (review8/17), where no
// watch of processes sees it. The compiled check refuses the only two ways a submission
// could run earlier still: an entry of its own in .preinit_array, and an IFUNC resolver
// (run while the loader relocates). The calls are raw system calls, not the C library's
// prctl: a submission may define a function of that name, which the link would take.
// Included by worker.cu, and by the probe of classroom_tests that checks it.
#pragma once

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstddef>

namespace exec_filter {

inline long raw_syscall(long number, long a, long b, long c) {
#if defined(__x86_64__)
    long result;
    register long r10 asm("r10") = 0;  // prctl requires its unused arguments to be 0
    register long r8 asm("r8") = 0;
    asm volatile("syscall" : "=a"(result) : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8) : "rcx", "r11", "memory");
    return result;
#else
    register long x8 asm("x8") = number;
    register long x0 asm("x0") = a;
    register long x1 asm("x1") = b;
    register long x2 asm("x2") = c;
    register long x3 asm("x3") = 0;  // prctl requires its unused arguments to be 0
    register long x4 asm("x4") = 0;
    asm volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
    return x0;
#endif
}

#if defined(__x86_64__)
constexpr unsigned kArch = AUDIT_ARCH_X86_64;
#else
constexpr unsigned kArch = AUDIT_ARCH_AARCH64;
#endif

// execve and execveat refused (EPERM); another calling convention (i386's int 0x80) ends
// the process; everything else is allowed.
static void deny_exec() {
    static sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
#if defined(__x86_64__)
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 2, 0),  // the x32 numbers
#else
        BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0),
#endif
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_execve, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_execveat, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    static sock_fprog program = {sizeof filter / sizeof filter[0], filter};
    if (raw_syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0) != 0 ||
        raw_syscall(SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, reinterpret_cast<long>(&program)) != 0) {
        raw_syscall(SYS_exit_group, 125, 0, 0);  // a worker without the filter serves nothing
    }
}

[[gnu::used, gnu::section(".preinit_array")]] static void (*deny_exec_first)() = deny_exec;

}  // namespace exec_filter
#endif
