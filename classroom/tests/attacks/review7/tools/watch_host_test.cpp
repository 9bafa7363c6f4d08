// watch_host_test: the grader's own SecondProcessWatch (classroom/student_user.h, unchanged)
// against attack 16's worker, on a host without a GPU (run as root).
//
//   g++ -std=c++20 -O1 -I classroom -o watch_host_test watch_host_test.cpp -lpthread
//   watch_host_test USER WORKER [control]
//
// Starts WORKER as USER the way judge --exec-as leaves it (descriptor 3 a socket, the
// sanitizer's variables in the environment: NV_SANITIZER_INJECTION_TRANSPORT_TYPE), the
// watch running from before the start, as judge.cu's sanitize() does; after 3 s it prints
// the processes of USER (State from /proc) and what the watch saw. "control": the same,
// but a second ordinary process of USER is started too (what the watch must catch).
#include <pwd.h>
#include <sys/socket.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "student_user.h"

int main(int argc, char** argv) {
    if (argc < 3) return 2;
    const passwd* pw = getpwnam(argv[1]);
    if (!pw) return 2;
    const uid_t uid = pw->pw_uid;
    const gid_t gid = pw->pw_gid;
    const bool control = argc > 3;
    int pair[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, pair);
    student_user::SecondProcessWatch watch(uid);
    const pid_t p = fork();
    if (p == 0) {
        setsid();
        dup2(pair[1], 3);
        if (!student_user::become(uid, gid)) _exit(126);
        char* args[] = {argv[2], const_cast<char*>("--socket"), const_cast<char*>("3"), nullptr};
        const char* ld = getenv("LD_LIBRARY_PATH");
        std::string ldp = std::string("LD_LIBRARY_PATH=") + (ld ? ld : "");
        char* env[] = {const_cast<char*>("PATH=/usr/bin:/bin"), const_cast<char*>(ldp.c_str()),
                       const_cast<char*>("HOME=/tmp"), const_cast<char*>("LC_ALL=C"),
                       const_cast<char*>("NV_SANITIZER_INJECTION_TRANSPORT_TYPE=uds"), nullptr};
        execve(argv[2], args, env);
        _exit(127);
    }
    if (control && fork() == 0) {
        if (!student_user::become(uid, gid)) _exit(126);
        sleep(3);
        _exit(0);
    }
    sleep(3);
    std::printf("processes of uid %u after 3 s (pid, State, Name, PPid), as /proc lists them:\n", unsigned(uid));
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string name = entry.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream status(entry.path() / "status");
        std::string line, state, comm, ppid, uidline, threads;
        while (std::getline(status, line)) {
            if (line.rfind("State:", 0) == 0) state = line;
            if (line.rfind("Name:", 0) == 0) comm = line;
            if (line.rfind("PPid:", 0) == 0) ppid = line;
            if (line.rfind("Uid:", 0) == 0) uidline = line;
            if (line.rfind("Threads:", 0) == 0) threads = line;
        }
        if (uidline.find("\t" + std::to_string(uid) + "\t") == std::string::npos) continue;
        std::printf("  %s | %s | %s | %s | %s\n", name.c_str(), state.c_str(), comm.c_str(), ppid.c_str(), threads.c_str());
    }
    std::printf("processes_of() counts: %d\n", student_user::processes_of(uid));
    const std::string seen = watch.stop();
    std::printf("SecondProcessWatch: %s\n", seen.empty() ? "\"\" (never more than one process)" : seen.c_str());
    close(pair[0]);  // the worker's socket ends: C's serve() returns
    const std::string problem = student_user::end_every_process_of(uid, gid);
    std::printf("end_every_process_of: %s\n", problem.empty() ? "none left" : problem.c_str());
    return 0;
}
