#include "process.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "files.h"
#include "student_user.h"

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
    RunSpec spec;
    spec.directory = directory;
    spec.timeout_seconds = timeout_seconds;
    return run_process(argv, spec);
}

bool user_ids(const std::string& user, unsigned& uid, unsigned& gid) {
    const passwd* pw = getpwnam(user.c_str());
    if (!pw) return false;
    uid = pw->pw_uid;
    gid = pw->pw_gid;
    return true;
}

namespace {

// A step's output, read back through the descriptor: all of it up to `most` bytes, else its
// first and last halves of that with a line that says how much was left out.
std::string read_output(int fd, std::size_t most, bool& cut) {
    struct stat st {};
    const std::size_t size = fstat(fd, &st) == 0 ? static_cast<std::size_t>(st.st_size) : 0;
    auto read_at = [fd](std::size_t from, std::size_t bytes) {
        std::string text(bytes, '\0');
        std::size_t got = 0;
        while (got < bytes) {
            const ssize_t r = pread(fd, &text[got], bytes - got, static_cast<off_t>(from + got));
            if (r <= 0) break;
            got += static_cast<std::size_t>(r);
        }
        text.resize(got);
        return text;
    };
    cut = size > most;
    if (!cut) return read_at(0, size);
    const std::size_t half = most / 2;
    return read_at(0, half) + "\n[... " + std::to_string(size - 2 * half) + " bytes of output left out ...]\n" +
           read_at(size - half, half);
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const RunSpec& spec) {
    const std::string& directory = spec.directory;
    const int timeout_seconds = spec.timeout_seconds;
    unsigned uid = 0, gid = 0;
    const bool drop = !spec.run_as.empty() && geteuid() == 0;
    ProcessResult result;
    if (drop && !user_ids(spec.run_as, uid, gid)) {
        result.output = "no user " + spec.run_as;
        return result;
    }
    const auto start = std::chrono::steady_clock::now();
    // The output goes to a file, not a pipe: nothing to drain while waiting, however much
    // a compiler prints.
    char log_name[] = "/tmp/classroom-run-XXXXXX";
    const int log = mkostemp(log_name, O_CLOEXEC);  // the program gets it as stdout and stderr only
    if (log < 0) {
        result.output = "cannot create a temporary file for the output";
        return result;
    }
    const pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);  // its own process group, so a timeout kills its children too
        dup2(log, STDOUT_FILENO);
        dup2(log, STDERR_FILENO);
        // Nothing else of ours is inherited: a descriptor of the grader's output or files
        // would let the program write there.
        rlimit limit{};
        const int most = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < 65536 ? static_cast<int>(limit.rlim_cur) : 65536;
        for (int fd = 3; fd < most; ++fd) close(fd);
        // Bounds on the user's tasks and on the size of a file it writes (this step's
        // output too); the judge's workers get the same (student_user.h).
        if (drop && !student_user::become(uid, gid)) _exit(126);
        for (const std::string& e : spec.extra_env) putenv(const_cast<char*>(e.c_str()));
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
    result.output = read_output(log, spec.most_output, result.output_cut);
    close(log);
    unlink(log_name);
    if (!result.timed_out && WIFEXITED(status)) {
        result.exit_code = WEXITSTATUS(status);
        if (result.exit_code == 127 && result.output.empty()) result.started = false;
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

void become_subreaper() { prctl(PR_SET_CHILD_SUBREAPER, 1); }

namespace {

// The processes whose parent is this one, from /proc.
std::vector<pid_t> children_of_me() {
    std::vector<pid_t> found;
    const pid_t me = getpid();
    DIR* proc = opendir("/proc");
    if (!proc) return found;
    while (const dirent* entry = readdir(proc)) {
        const pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
        if (pid <= 0) continue;
        std::string stat;
        try {
            stat = read_file("/proc/" + std::string(entry->d_name) + "/stat");
        } catch (const std::exception&) {
            continue;  // it ended while we looked
        }
        const auto close_paren = stat.rfind(')');  // the name may hold spaces and parentheses
        if (close_paren == std::string::npos) continue;
        std::istringstream rest(stat.substr(close_paren + 1));
        std::string state;
        long parent = 0;
        rest >> state >> parent;
        if (parent == me) found.push_back(pid);
    }
    closedir(proc);
    return found;
}

}  // namespace

std::string kill_leftovers(const std::string& user) {
    std::string problem;
    unsigned uid = 0, gid = 0;
    if (!user.empty() && geteuid() == 0 && user_ids(user, uid, gid) && uid != 0) {
        problem = student_user::end_every_process_of(uid, gid);
    }
    for (int pass = 0; pass < 50; ++pass) {
        const std::vector<pid_t> orphans = children_of_me();
        if (orphans.empty()) break;
        for (pid_t pid : orphans) {
            kill(pid, SIGKILL);
            waitpid(pid, nullptr, 0);
        }
    }
    return problem;
}

bool task_slots_free(const std::string& user) {
    unsigned uid = 0, gid = 0;
    if (user.empty() || geteuid() != 0 || !user_ids(user, uid, gid)) return true;
    return student_user::task_slots_free(uid, gid);
}

int remove_files_of(const std::string& user) {
    unsigned uid = 0, gid = 0;
    if (user.empty() || geteuid() != 0 || !user_ids(user, uid, gid) || uid == 0) return 0;
    int removed = 0;
    // System V shared memory, semaphores and message queues outlive their processes too.
    for (const char* kind : {"shm", "sem", "msg"}) {
        std::ifstream table(std::string("/proc/sysvipc/") + kind);
        std::string header;
        std::getline(table, header);
        std::istringstream names(header);
        std::vector<std::string> columns;
        for (std::string name; names >> name;) columns.push_back(name);
        const auto uid_column = std::find(columns.begin(), columns.end(), "uid") - columns.begin();
        for (std::string row; std::getline(table, row);) {
            std::istringstream fields(row);
            std::vector<std::string> values;
            for (std::string value; fields >> value;) values.push_back(value);
            if (values.size() <= static_cast<std::size_t>(uid_column) || values.size() < 2 ||
                values[static_cast<std::size_t>(uid_column)] != std::to_string(uid)) {
                continue;
            }
            const int id = std::atoi(values[1].c_str());
            const int gone = kind[1] == 'h' ? shmctl(id, IPC_RMID, nullptr)
                             : kind[1] == 'e' ? semctl(id, 0, IPC_RMID)
                                              : msgctl(id, IPC_RMID, nullptr);
            removed += gone == 0;
        }
    }
    for (const char* shared : {"/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/dev/mqueue"}) {
        std::error_code ignored;
        for (const auto& entry : fs::directory_iterator(shared, ignored)) {
            struct stat st {};
            if (lstat(entry.path().c_str(), &st) != 0 || st.st_uid != uid) continue;
            // Every process of the user is gone (kill_leftovers first): nothing moves meanwhile,
            // and remove_all removes a link, never what it points to.
            removed += static_cast<int>(fs::remove_all(entry.path(), ignored));
        }
    }
    return removed;
}

void give_to(const std::string& path, const std::string& user) {
    unsigned uid = 0, gid = 0;
    if (geteuid() != 0 || user.empty() || !user_ids(user, uid, gid)) return;
    std::error_code ignored;
    if (lchown(path.c_str(), uid, gid) != 0) return;
    for (auto it = fs::recursive_directory_iterator(path, ignored); it != fs::recursive_directory_iterator();
         it.increment(ignored)) {
        if (lchown(it->path().c_str(), uid, gid) != 0) return;
    }
}

}  // namespace classroom
