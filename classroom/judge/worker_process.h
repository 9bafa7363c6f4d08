// A worker process of the judge's (class Worker): started as the student's user or the
// judge's, in a session of its own, given the shared inputs over a socket, asked for sums,
// and ended with whatever it left in its session. The process helpers it stands on are in
// worker_process.cpp.
#pragma once

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "judge.h"
#include "launch_record.h"
#include "student_user.h"  // the autograder copies it beside this file (classroom/generator.cpp)

namespace judge {

// ---------------------------------------------------------------- process helpers (worker_process.cpp)
// A fresh environment for a worker: what CUDA and the sanitizer need, nothing of the
// grader's (the seed in particular).
std::vector<std::string> worker_environment();
// One past the highest descriptor this process may hold (at most 65536).
int descriptor_limit();
// Closes every descriptor from `first` on, in a child about to exec.
void close_descriptors_from(int first);
// The text of an open file, read through its descriptor (not its path, which a student's
// process could have pointed elsewhere), at most `most` bytes from its start.
std::string read_through(int fd, std::size_t most = 1 << 20);
// A new file, never one found there (no link followed); CouldNotGrade if it cannot be made.
int create_fresh(const std::string& path, mode_t mode = 0644);
// Drops this process's rights to `user`'s, for good (student_user.h).
bool become(const passwd& user);
// Every process of `user` killed and waited for (root only; a no-op otherwise).
void kill_every_process_of(const std::string& user);
// The sanitizer's watch for a second process of `user` (root only; else null).
std::unique_ptr<student_user::SecondProcessWatch> watch_for_a_second_process(const std::string& user);
// This program's own path (the sanitizer runs it again as --exec-as).
std::string self_path();
// The replay's path (replay.cu), beside the judge.
std::string replay_path();
// "" where this machine lets a process install the filter against new processes; else why not.
std::string new_processes_deniable();
// judge --exec-as USER PROGRAM ARGS...: returns only on failure.
int exec_as(int argc, char** argv);

// ---------------------------------------------------------------- a worker
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
    // or said it failed. A replay's request (op kReplay) sends `record` after it; a
    // worker's answer brings the request's record, kept in last_record.
    bool ask(const Request& q, std::vector<double>& values, std::string& error, int timeout_s,
             const std::vector<char>& record = {}) {
        values.clear();
        last_record.clear();
        last_worker_ms = 0;
        Request sent = q;
        sent.record_bytes = record.size();
        if (!send_all(socket_, &sent, sizeof sent) || !send_all(socket_, record.data(), record.size())) {
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
        if ((reply.count != q.batch * q.repeats && reply.ok) || reply.record_bytes > launch_record::kMostRecordBytes) {
            error = "a malformed answer";
            stop();
            return false;
        }
        values.resize(reply.ok ? reply.count : 0);
        last_record.resize(reply.record_bytes);
        if (!recv_all(socket_, values.data(), values.size() * sizeof(double), timeout_s * 1000) ||
            !recv_all(socket_, last_record.data(), last_record.size(), timeout_s * 1000)) {
            error = "a broken answer" + tail();
            stop();
            return false;
        }
        if (!reply.ok) {
            error = std::string(q.op == kReplay ? "the replay failed: " : "the launcher failed: ") + clean(reply.text);
            return false;
        }
        last_worker_ms = reply.worker_ms;
        return true;
    }
    std::vector<char> last_record;  // the last request's record (launch_record.h), as the worker sent it
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

}  // namespace judge
