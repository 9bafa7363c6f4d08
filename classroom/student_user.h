// Running as the student's user: the bounds every process of that user gets, the drop of
// rights, and the end of every process of that user. One header for the grader's steps
// (process.cpp) and the judge's workers (judge/worker_process.cpp), which are built apart: the
// autograder's tool/ folder gets this file with the grader's sources, and judge/ a copy
// (classroom/generator.cpp).
#pragma once

#include <dirent.h>
#include <grp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace student_user {

// The most processes and threads the student's user may have at once (the kernel counts
// both, by the real user id): a submission that spawns without end, say a timer that starts
// a thread a millisecond, cannot hang the grading machine.
constexpr rlim_t kTasks = 4096;
// The largest file a process of the student's user may write (a larger write fails with
// SIGXFSZ): a submission that prints without end fills neither the disk through a step's
// output file or a worker's log, nor the grader's memory reading them back. A build of the
// whole tree writes no file a tenth of this.
constexpr rlim_t kFileBytes = rlim_t(1) << 30;
// A grading starts, and is trusted at its end, only while this many of the user's task
// slots are free: fewer means processes of the same user id elsewhere on the host hold
// them (another grading's container, where containers share the host's user ids), and a
// build or a worker could then fail for a reason that is not the student's.
constexpr rlim_t kTasksAGradingNeeds = 512;

// Drops this process's rights to the user's, for good: the bounds above, no supplementary
// groups, the user's group, then the user (in that order: after setuid nothing else may be
// changed). False if any step failed.
inline bool become(uid_t uid, gid_t gid, rlim_t tasks = kTasks) {
    const rlimit task_bound{tasks, tasks}, file_bound{kFileBytes, kFileBytes};
    return setrlimit(RLIMIT_NPROC, &task_bound) == 0 && setrlimit(RLIMIT_FSIZE, &file_bound) == 0 &&
           setgroups(0, nullptr) == 0 && setgid(gid) == 0 && setuid(uid) == 0 && getuid() == uid;
}

// How many processes of `uid` are alive, calling found(pid) for each; -1 when /proc cannot
// be read. A zombie holds nothing and does not count, unless other threads of it still run:
// a process whose first thread ends with the bare exit system call reads "Z (zombie)" while
// its other threads go on (review7/16 hid a live process from the sanitizer's watch so), so
// a zombie with more than one thread counts as alive.
template <typename Found>
inline int each_process_of(uid_t uid, Found&& found) {
    int alive = 0;
    DIR* proc = opendir("/proc");
    if (!proc) return -1;
    while (const dirent* entry = readdir(proc)) {
        const int pid = std::atoi(entry->d_name);
        if (pid <= 0) continue;
        char path[64];
        std::snprintf(path, sizeof path, "/proc/%d/status", pid);
        FILE* status = std::fopen(path, "r");
        if (!status) continue;  // it ended while we looked
        char line[256];
        bool zombie = false, ours = false;
        int threads = 1;
        while (std::fgets(line, sizeof line, status)) {
            unsigned real = 0;
            if (std::strncmp(line, "State:", 6) == 0) zombie = std::strchr(line, 'Z') != nullptr;
            if (std::sscanf(line, "Uid: %u", &real) == 1) ours = real == uid;
            std::sscanf(line, "Threads: %d", &threads);
        }
        std::fclose(status);
        if (ours && (!zombie || threads > 1)) {
            ++alive;
            found(pid);
        }
    }
    closedir(proc);
    return alive;
}

// How many processes of `uid` are alive; -1 when /proc cannot be read.
inline int processes_of(uid_t uid) {
    return each_process_of(uid, [](int) {});
}

// A user id that no process has, other than `uid` and root's: the killer's own (below).
inline uid_t unused_uid(uid_t uid) {
    for (uid_t candidate = 65533; candidate > 60000; --candidate) {
        if (candidate != uid && processes_of(candidate) == 0) return candidate;
    }
    return 0;
}

// Ends every process of the user (root only): kill(-1) from a process that may signal them
// all, in this PID namespace. Then waits, up to `wait_s`, until none is alive: a killed
// process holds its GPU context until the driver has torn it down, so "killed" is not yet
// "gone". Returns "" when none is left, else what went wrong.
//
// The killer takes the student's id as its effective id only (setresuid): a signal may come
// from a process whose real or effective id is the target's real or saved id, so the
// killer's effective id reaches every process of the student's, while its real and saved
// ids, a third id that no process has, keep the student's processes from signalling it
// (with setuid they could, and a process that kept sending signals to the whole user
// killed the killer first: attack review5/12-killer-sniper.cu).
inline std::string end_every_process_of(uid_t uid, gid_t gid, int wait_s = 20) {
    if (uid == 0) return "the student's user is root";
    const uid_t own = unused_uid(uid);
    if (own == 0) return "no unused user id for the process that ends the student's";
    const pid_t pid = fork();
    if (pid < 0) return std::string("cannot start the process that ends the student's: ") + std::strerror(errno);
    if (pid == 0) {
        // No task bound here: the killer must start even when the user's slots are full.
        if (setgroups(0, nullptr) != 0 || setresgid(gid, gid, gid) != 0 || setresuid(own, uid, own) != 0) _exit(1);
        signal(SIGKILL, SIG_DFL);
        kill(-1, SIGKILL);
        _exit(0);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        return "the process that ends the student's could not become that user";
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(wait_s);
    int alive = processes_of(uid);
    while (alive > 0 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        alive = processes_of(uid);
    }
    if (alive < 0) return "cannot read /proc";
    if (alive > 0) return std::to_string(alive) + " process(es) of the student's user still alive " + std::to_string(wait_s) + " s after SIGKILL";
    return "";
}

// Whether `wanted` of the user's kTasks slots are free, counted by the kernel across every
// PID namespace that shares this user id (root only; true otherwise): a process of the
// user, its task bound lowered by `wanted`, tries to fork.
inline bool task_slots_free(uid_t uid, gid_t gid, rlim_t wanted = kTasksAGradingNeeds) {
    if (geteuid() != 0 || uid == 0) return true;
    const pid_t pid = fork();
    if (pid < 0) return false;
    if (pid == 0) {
        if (!become(uid, gid, kTasks - wanted)) _exit(2);
        const pid_t probe = fork();
        if (probe == 0) _exit(0);
        if (probe < 0) _exit(errno == EAGAIN ? 1 : 2);
        waitpid(probe, nullptr, 0);
        _exit(0);
    }
    int status = 0;
    return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Watches, while a sanitizer runs, that the student's user has one process: the
// sanitizer's target. The sanitizer follows its target, and the processes the target starts
// with the environment that injects the sanitizer; a child that runs the worker again
// without that environment is not instrumented, and could serve every request while the
// target stays clean (the attack review5/13). So a second process of the user, seen by a
// poll every 5 ms (a process that does GPU work lives far longer than that: creating its
// CUDA context alone does), costs the step (judge.cu's Judge::sanitize()). As root the sanitized
// worker cannot start a process at all (worker_process.cpp's deny_new_processes); this watch stays
// behind that filter.
class SecondProcessWatch {
public:
    explicit SecondProcessWatch(uid_t uid) : uid_(uid), thread_([this] { watch(); }) {}
    ~SecondProcessWatch() { stop(); }
    SecondProcessWatch(const SecondProcessWatch&) = delete;
    SecondProcessWatch& operator=(const SecondProcessWatch&) = delete;

    // "" when the user never had more than one process; else what was seen.
    std::string stop() {
        if (thread_.joinable()) {
            done_ = true;
            thread_.join();
        }
        return seen_;
    }

private:
    void watch() {
        while (!done_) {
            std::vector<int> pids;
            if (each_process_of(uid_, [&](int pid) { pids.push_back(pid); }) > 1) {
                seen_ = std::to_string(pids.size()) + " processes of the student's user at once:";
                for (int pid : pids) seen_ += " " + std::to_string(pid) + " (" + status_field(pid, "Name:") +
                                              ", parent " + status_field(pid, "PPid:") + ")";
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    }
    // A field of /proc/PID/status, printable characters only (a process names itself).
    static std::string status_field(int pid, const char* key) {
        std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/status").c_str(), "r");
        if (!f) return "?";
        std::string value = "?";
        char line[256];
        while (std::fgets(line, sizeof line, f)) {
            if (std::strncmp(line, key, std::strlen(key)) != 0) continue;
            value.clear();
            for (const char* c = line + std::strlen(key); *c && value.size() < 32; ++c) {
                if (*c > 0x20 && *c < 0x7f) value += *c;
            }
            break;
        }
        std::fclose(f);
        return value;
    }
    uid_t uid_;
    std::atomic<bool> done_{false};
    std::string seen_;
    std::thread thread_;  // last: it starts once the members it reads are made
};

}  // namespace student_user
