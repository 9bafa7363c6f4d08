/* Static (so LD_PRELOAD is ignored): prints its environment's shape and names. */
#include <stdio.h>
#include <string.h>
int main(int argc, char** argv, char** envp) {
    size_t n = 0, bytes = 0;
    for (char** e = envp; *e; ++e) { ++n; bytes += strlen(*e) + 1; }
    printf("argc %d argv0 %s variables %zu bytes %zu\n", argc, argv[0], n, bytes);
    for (char** e = envp; *e; ++e) if (strncmp(*e, "GRADING_PAD", 11)) printf("  %.300s\n", *e);
    return 0;
}
