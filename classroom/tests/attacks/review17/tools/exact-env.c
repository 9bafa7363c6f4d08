/* exact-env ENVFILE PROGRAM ARGS...: runs PROGRAM with exactly the environment in ENVFILE (NUL-separated,
   as tools/envdump.c writes it), nothing added: gdb's exec-wrapper, so that the worker under gdb starts
   with the very variables (count, order, bytes) that compute-sanitizer and judge --exec-as gave it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char** argv) {
    if (argc < 3) return 2;
    FILE* f = fopen(argv[1], "rb");
    if (!f) return 2;
    static char text[1 << 20];
    const size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    static char* env[4096];
    size_t count = 0;
    for (size_t at = 0; at < n && count < 4095; at += strlen(text + at) + 1) env[count++] = text + at;
    env[count] = NULL;
    execve(argv[2], argv + 2, env);
    perror("execve");
    return 127;
}
