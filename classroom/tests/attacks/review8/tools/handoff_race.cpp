// handoff_race: how often the grader's SecondProcessWatch (classroom/student_user.h, unchanged)
// sees a hand-off in which the sanitizer's target P starts its successor C with
// clone(CLONE_VM) (C shares P's memory, so P's exit frees nothing) and at once ends by
// exit_group, while C waits until P is gone (its parent changes) and only then execs.
// Two processes of the user exist only from C's creation to P's exit. Host only, no CUDA:
// P here is this small program, not a worker with a CUDA context (see README).
//
//   g++ -std=c++20 -O1 -I classroom -o handoff_race handoff_race.cpp -lpthread
//   handoff_race USER TRIALS [OVERLAP_US]   (as root; OVERLAP_US: P lives that long after
//   creating C, the control: a hand-off with a real overlap must be seen)
#include <pwd.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "student_user.h"

static char stack_for_c[1 << 16];
static pid_t p_pid;

static int successor(void*) {
    while (syscall(SYS_getppid) == p_pid) {
    }  // P still alive: wait (P is C's parent until P exits)
    char* args[] = {const_cast<char*>("/bin/sleep"), const_cast<char*>("0.2"), nullptr};
    char* env[] = {nullptr};
    syscall(SYS_execve, args[0], args, env);
    syscall(SYS_exit_group, 127);
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 3) return 2;
    const passwd* pw = getpwnam(argv[1]);
    if (!pw) return 2;
    const int trials = std::atoi(argv[2]);
    const int overlap_us = argc > 3 ? std::atoi(argv[3]) : 0;
    int handed = 0;
    int caught = 0;
    for (int t = 0; t < trials; ++t) {
        student_user::SecondProcessWatch watch(pw->pw_uid);
        usleep(2000 + (t * 137) % 5000);  // the hand-off at every phase of the 5 ms poll
        const pid_t p = fork();
        if (p == 0) {
            if (!student_user::become(pw->pw_uid, pw->pw_gid)) _exit(126);
            p_pid = getpid();
            usleep(20000);  // P "runs" a while alone, as the target would before handing off
            clone(successor, stack_for_c + sizeof stack_for_c, CLONE_VM | SIGCHLD, nullptr);
            if (overlap_us) usleep(overlap_us);
            syscall(SYS_exit_group, 0);
        }
        waitpid(p, nullptr, 0);
        usleep(100000);  // C runs alone (sleep 0.2)
        handed += student_user::processes_of(pw->pw_uid) == 1;  // C, exec'd, alive
        const std::string seen = watch.stop();
        if (!seen.empty()) ++caught;
        student_user::end_every_process_of(pw->pw_uid, pw->pw_gid);
    }
    std::printf("hand-offs: %d (C alive alone afterwards in %d), P alive %d us after creating C, seen by SecondProcessWatch: %d\n", trials, handed, overlap_us, caught);
    return 0;
}
