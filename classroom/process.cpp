#include "process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "files.h"

namespace classroom {

std::string find_program(const std::string& name) {
    if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "/usr/bin:/bin");
    for (std::string dir; std::getline(dirs, dir, ':');) {
        const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
        if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return "";
}

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& directory, int timeout_seconds) {
    ProcessResult result;
    const auto start = std::chrono::steady_clock::now();
    // The output goes to a file, not a pipe: nothing to drain while waiting, however much
    // a compiler prints.
    char log_name[] = "/tmp/classroom-run-XXXXXX";
    const int log = mkstemp(log_name);
    if (log < 0) {
        result.output = "cannot create a temporary file for the output";
        return result;
    }
    const pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);  // its own process group, so a timeout kills its children too
        dup2(log, STDOUT_FILENO);
        dup2(log, STDERR_FILENO);
        if (!directory.empty() && chdir(directory.c_str()) != 0) _exit(127);
        std::vector<char*> args;
        for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execvp(args[0], args.data());
        _exit(127);
    }
    if (pid < 0) {
        close(log);
        unlink(log_name);
        result.output = "cannot start " + argv[0];
        return result;
    }
    setpgid(pid, pid);
    result.started = true;
    int status = 0;
    const auto deadline = start + std::chrono::seconds(timeout_seconds);
    while (true) {
        const pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid) break;
        if (std::chrono::steady_clock::now() >= deadline) {
            result.timed_out = true;
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    close(log);
    result.output = read_file(log_name);
    unlink(log_name);
    if (!result.timed_out && WIFEXITED(status)) {
        result.exit_code = WEXITSTATUS(status);
        if (result.exit_code == 127 && result.output.empty()) result.started = false;
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

}  // namespace classroom
