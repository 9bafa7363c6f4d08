#include <stdio.h>
int main(int argc, char** argv, char** envp) { FILE* f = fopen("/tmp/r15/env0.bin", "wb"); for (char** e = envp; *e; ++e) { fputs(*e, f); fputc(0, f); } fclose(f); return 0; }
