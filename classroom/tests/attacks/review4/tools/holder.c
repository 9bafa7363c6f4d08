// Simulates what 01-nproc-cross-grading.cu does in another container's grading: as the
// student's user, with the grader's bound (RLIMIT_NPROC 4096), take every task slot of
// that uid and keep re-taking any that frees up, for SECONDS.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/resource.h>
#include <grp.h>
#include <pwd.h>
static void* idle(void* p) { (void)p; for (;;) pause(); return 0; }
int main(int argc, char** argv) {
    const char* user = argc > 1 ? argv[1] : "nobody";
    int seconds = argc > 2 ? atoi(argv[2]) : 180;
    struct passwd* pw = getpwnam(user);
    struct rlimit r = {4096, 4096};
    if (!pw || setrlimit(RLIMIT_NPROC, &r) || setgroups(0, 0) || setgid(pw->pw_gid) || setuid(pw->pw_uid)) { perror("drop"); return 1; }
    pthread_attr_t a; pthread_attr_init(&a); pthread_attr_setstacksize(&a, 65536);
    long made = 0;
    for (long i = 0; i < (long)seconds * 200; ++i) {
        pthread_t t;
        int burst = 0;
        while (pthread_create(&t, &a, idle, 0) == 0) { ++made; ++burst; }
        if (i == 0 || burst) { fprintf(stderr, "holder: %ld threads so far\n", made); }
        usleep(5000);
    }
    return 0;
}
