// Host simulation of judge.cu's sanitizer step (no GPU): the same spawn as Worker::Worker
// (setsid, socket on fd 3, the worker log on 1 and 2, /dev/null on 0, every other fd closed),
// the same argv as Judge::sanitize (compute-sanitizer ... --log-file LOG --target-processes all
// SELF --exec-as USER TARGET --socket 3), where SELF is this program's --exec-as (become USER,
// execve: what judge.cu's exec_as does, as a static binary so that the sanitizer's injection,
// which needs libcuda, is not loaded into it). Then the judge's reading of the log: the first
// 1 MiB through its own descriptor, the last line with "RACECHECK SUMMARY:".
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
    if (argc >= 5 && strcmp(argv[1], "--exec-as") == 0) {  // SELF --exec-as USER PROGRAM ARGS...
        struct passwd* u = getpwnam(argv[2]);
        if (!u || setgroups(0, 0) || setgid(u->pw_gid) || setuid(u->pw_uid)) return 126;
        extern char** environ;
        execve(argv[3], argv + 3, environ);
        return 127;
    }
    if (argc != 5) { fprintf(stderr, "usage: %s SANITIZER LOGDIR USER TARGET\n", argv[0]); return 2; }
    const char *sanitizer = argv[1], *dir = argv[2], *user = argv[3], *target = argv[4];
    char log[512], wlog[512], self[512];
    snprintf(log, sizeof log, "%s/racecheck.log", dir);
    snprintf(wlog, sizeof wlog, "%s/worker-student-racecheck-1.log", dir);
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1); self[n] = 0;
    unlink(log); unlink(wlog);
    int log_fd = open(log, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    int wlog_fd = open(wlog, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    int pair[2];
    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair);
    pid_t pid = fork();
    if (pid == 0) {
        setsid();
        dup2(pair[1], 3); dup2(wlog_fd, 1); dup2(wlog_fd, 2);
        int null = open("/dev/null", O_RDONLY); dup2(null, 0);
        for (int fd = 4; fd < 65536; ++fd) close(fd);
        struct rlimit no_core = {0, 0}; setrlimit(RLIMIT_CORE, &no_core);
        char* args[] = {(char*)sanitizer, "--tool", "racecheck", "--error-exitcode", "86", "--log-file", log,
                        "--target-processes", "all", "--racecheck-report", "analysis", self, "--exec-as",
                        (char*)user, (char*)target, "--socket", "3", 0};
        char ld[1024]; snprintf(ld, sizeof ld, "LD_LIBRARY_PATH=%s", getenv("LD_LIBRARY_PATH") ? getenv("LD_LIBRARY_PATH") : "");
        char* env[] = {"HOME=/tmp", "LC_ALL=C", "PATH=/usr/bin:/bin", ld, 0};
        execve(sanitizer, args, env);
        _exit(127);
    }
    close(pair[1]);
    int status = 0;
    waitpid(pid, &status, 0);
    // The judge: read_through(log_fd) reads at most 1 MiB from the start.
    size_t most = 1 << 20; char* text = calloc(most + 1, 1); size_t got = 0;
    while (got < most) { ssize_t r = pread(log_fd, text + got, most - got, got); if (r <= 0) break; got += r; }
    off_t size = lseek(log_fd, 0, SEEK_END);
    char summary[512] = "";
    for (char* line = strtok(text, "\n"); line; line = strtok(0, "\n"))
        if (strstr(line, "RACECHECK SUMMARY:")) snprintf(summary, sizeof summary, "%s", line);
    printf("sanitizer exit %d; log %lld bytes (judge reads %zu); last summary the judge sees: '%s' -> zero=%d\n",
           WIFEXITED(status) ? WEXITSTATUS(status) : -1, (long long)size, got, summary, strstr(summary, ": 0 hazard") != 0);
    // What the sanitizer itself wrote last, past what the judge reads.
    char tail[400] = ""; ssize_t t = pread(log_fd, tail, sizeof tail - 1, size > 399 ? size - 399 : 0); if (t > 0) tail[t] = 0;
    printf("the log's real end:\n%s\n", tail);
    return 0;
}
