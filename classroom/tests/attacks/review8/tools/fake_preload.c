// fake_preload.c: stands in for compute-sanitizer's preloaded collection library on a host
// without a GPU (the real one needs a driver). Its constructor says in which process it was
// loaded, so the evidence shows the preload in the worker's first image and not in the second.
//   gcc -shared -fPIC -o /tmp/r8/fakesan/libsanitizer-collection.so fake_preload.c
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void loaded(void) {
    fprintf(stderr, "[fake libsanitizer-collection.so] loaded in pid %d\n", (int)getpid());
}
