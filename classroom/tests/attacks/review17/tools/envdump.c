/* Static (LD_PRELOAD ignored): writes its environment, NUL-separated, to /tmp/r17/probe/out/env.<n>. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char** argv, char** envp) {
    char path[128];
    for (int n = 0; n < 100; ++n) {
        snprintf(path, sizeof path, "/tmp/r17/probe/out/env.%d", n);
        if (access(path, F_OK) != 0) break;
    }
    FILE* f = fopen(path, "w");
    for (char** e = envp; *e; ++e) fwrite(*e, 1, strlen(*e) + 1, f);
    fclose(f);
    printf("%s\n", path);
    return 0;
}
