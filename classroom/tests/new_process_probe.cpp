// Run by Process.TheSanitizedWorkerStartsNoProcessAndNoProgram alone and under `judge
// --exec-as`, in the place of a worker, with the worker's own filter against exec
// (exec_filter.h, as worker.cu has it): tries every way a submission's code could start
// another process or replace its own program (review5/13, review7/16, review8/17), and a
// thread, which must still work. One line each: "NAME ok" or "NAME refused: REASON".
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

#include "exec_filter.h"

extern char** environ;

namespace {

void say(const char* name, long result) {
    if (result >= 0) {
        std::printf("%s ok\n", name);
    } else {
        std::printf("%s refused: %s\n", name, std::strerror(errno));
    }
    std::fflush(stdout);
}

// A child that exits at once, where one is made: the test counts the lines, not the children.
long started(pid_t pid) {
    if (pid == 0) _exit(0);
    if (pid > 0) waitpid(pid, nullptr, 0);
    return pid;
}

}  // namespace

int main(int argc, char** argv) {
    const char* self = argv[0];
    if (argc > 1) return 0;  // started again: an exec that got through
    char* again[] = {const_cast<char*>(self), const_cast<char*>("again"), nullptr};
    bool ran = false;
    std::thread([&] { ran = true; }).join();
    std::printf("thread %s\n", ran ? "ok" : "refused");
    say("fork", started(fork()));
    say("clone", started(static_cast<pid_t>(syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0))));
    pid_t spawned = 0;
    const int spawn_error = posix_spawn(&spawned, self, nullptr, nullptr, again, environ);
    if (spawn_error == 0) waitpid(spawned, nullptr, 0);
    errno = spawn_error;
    say("posix_spawn", spawn_error == 0 ? 0 : -1);
    const int program = open(self, O_RDONLY | O_CLOEXEC);
    say("execveat", syscall(SYS_execveat, program, "", again, environ, AT_EMPTY_PATH));
    say("execve", execve(self, again, environ));
    return 0;
}
