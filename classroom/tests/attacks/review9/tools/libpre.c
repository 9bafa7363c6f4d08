#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void init(void) {
    const char* v = getenv("NV_COMPUTE_SANITIZER_BINARY_PATCHING");
    fprintf(stderr, "[preloaded library's constructor] getenv(NV_COMPUTE_SANITIZER_BINARY_PATCHING) = %s\n", v ? v : "(null)");
}
