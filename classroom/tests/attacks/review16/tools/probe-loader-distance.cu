// Prints what a launcher can see of the preloaded libraries by address alone.
#include <cstdio>
#include <cstdint>
#include <cerrno>
extern "C" void* __tls_get_addr(void*);
thread_local int mine = 1;
int main() {
    const auto loader = reinterpret_cast<std::uintptr_t>(&__tls_get_addr);
    const auto libc = reinterpret_cast<std::uintptr_t>(&std::snprintf);
    const auto err = reinterpret_cast<std::uintptr_t>(&errno);
    const auto tls = reinterpret_cast<std::uintptr_t>(&mine);
    std::printf("loader %#lx libc %#lx loader-libc %.3f MiB  tls-errno %ld\n", loader, libc, (loader - libc) / 1048576.0,
                (long)(tls - err));
    std::fflush(stdout);
    cudaFree(0);
    return 0;
}
