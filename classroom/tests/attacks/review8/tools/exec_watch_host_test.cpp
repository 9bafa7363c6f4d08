// exec_watch_host_test: the grader's own SecondProcessWatch (classroom/student_user.h,
// unchanged) and the judge's side of the wire (classroom/grading/protocol.h, unchanged)
// against attack 17's worker, on a host without a GPU (run as root).
//
//   g++ -std=c++20 -O1 -I classroom -I classroom/grading -o exec_watch_host_test exec_watch_host_test.cpp -lpthread
//   exec_watch_host_test USER WORKER PRELOAD_LIB [control]
//
// Starts WORKER as USER the way `compute-sanitizer ... judge --exec-as USER WORKER --socket 3`
// leaves it: descriptor 3 a socket, a new session, the sanitizer's variables in the
// environment (LD_PRELOAD of a stand-in collection library, NV_SANITIZER_INJECTION_TRANSPORT_TYPE).
// The watch runs from before the start, as judge.cu's sanitize() does; besides it, a second
// poller of this test's own counts the user's processes every 100 microseconds (20 times
// as often as the watch). After 3 s it prints the user's processes, each one's environment
// and whether the preloaded library is mapped, then sends the judge's Setup over the socket
// and prints the Ready (or Failed) that comes back: who holds descriptor 3 and serves it.
// "control": a second ordinary process of USER is started too (what the watch must catch).
#include <fcntl.h>
#include <pwd.h>
#include <sys/socket.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "protocol.h"
#include "student_user.h"

static std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

int main(int argc, char** argv) {
    if (argc < 4) return 2;
    const passwd* pw = getpwnam(argv[1]);
    if (!pw) return 2;
    const uid_t uid = pw->pw_uid;
    const gid_t gid = pw->pw_gid;
    const bool control = argc > 4;
    int pair[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, pair);  // no CLOEXEC: pair[1] may itself be descriptor 3
    student_user::SecondProcessWatch watch(uid);
    std::atomic<bool> done{false};
    std::atomic<int> most{0};
    std::set<int> pids_seen;
    std::thread fast([&] {
        while (!done) {
            const int n = student_user::each_process_of(uid, [&](int pid) { pids_seen.insert(pid); });
            if (n > most) most = n;
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
    });
    const std::string preload = std::string("LD_PRELOAD=") + argv[3];
    const char* ld = getenv("LD_LIBRARY_PATH");
    const std::string ldp = std::string("LD_LIBRARY_PATH=") + (ld ? ld : "");
    const pid_t p = fork();
    if (p == 0) {
        setsid();
        close(pair[0]);
        dup2(pair[1], 3);
        if (!student_user::become(uid, gid)) _exit(126);
        char* args[] = {argv[2], const_cast<char*>("--socket"), const_cast<char*>("3"), nullptr};
        char* env[] = {const_cast<char*>("PATH=/usr/bin:/bin"), const_cast<char*>(ldp.c_str()),
                       const_cast<char*>("HOME=/tmp"), const_cast<char*>("LC_ALL=C"),
                       const_cast<char*>(preload.c_str()),
                       const_cast<char*>("NV_SANITIZER_INJECTION_TRANSPORT_TYPE=uds"), nullptr};
        execve(argv[2], args, env);
        _exit(127);
    }
    close(pair[1]);
    if (control && fork() == 0) {
        if (!student_user::become(uid, gid)) _exit(126);
        sleep(3);
        _exit(0);
    }
    std::printf("started the worker as pid %d (what the sanitizer's target would be)\n", int(p));
    std::fflush(stdout);
    sleep(3);
    std::printf("processes of uid %u after 3 s, as /proc lists them:\n", unsigned(uid));
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
        std::string env = slurp("/proc/" + name + "/environ");
        for (char& c : env) if (c == '\0') c = ' ';
        std::printf("    environ: %s\n", env.c_str());
        const std::string maps = slurp("/proc/" + name + "/maps");
        std::printf("    preloaded library mapped: %s\n", maps.find("libsanitizer-collection") != std::string::npos ? "yes" : "no");
        std::string fd3(256, '\0');
        const ssize_t k = readlink(("/proc/" + name + "/fd/3").c_str(), fd3.data(), fd3.size() - 1);
        fd3.resize(k > 0 ? k : 0);
        std::printf("    fd 3: %s\n", fd3.c_str());
    }
    done = true;
    fast.join();
    std::printf("most processes of the user at once, polled every 100 us: %d; pids ever seen:", most.load());
    for (int q : pids_seen) std::printf(" %d", q);
    std::printf("\n");
    const std::string seen = watch.stop();
    std::printf("SecondProcessWatch: %s\n", seen.empty() ? "\"\" (never more than one process)" : seen.c_str());
    // The judge's side: a Setup (with some descriptor: no GPU memory here), then the Ready.
    grading_wire::Setup setup;
    setup.bytes = 4096;
    const int some_fd = open("/dev/null", O_RDONLY);
    const bool sent = grading_wire::send_with_fd(pair[0], &setup, sizeof setup, some_fd);
    grading_wire::Ready ready;
    const bool got = grading_wire::recv_all(pair[0], &ready, sizeof ready, 20000);
    std::printf("judge side: Setup sent %s; answer %s: kind %u (2 Ready, 3 Failed), text \"%.*s\"\n", sent ? "yes" : "no",
                got ? "received" : "NOT received", unsigned(ready.kind), int(sizeof ready.text), ready.text);
    close(pair[0]);
    const std::string problem = student_user::end_every_process_of(uid, gid);
    std::printf("end_every_process_of: %s\n", problem.empty() ? "none left" : problem.c_str());
    return 0;
}
