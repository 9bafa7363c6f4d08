// Error checking for every NCCL call, as CUDA_CHECK does for CUDA (common/cuda_check.h).
//
// NCCL returns an ncclResult_t from every call. ncclGetErrorString names the kind
// ("unhandled system error", "invalid usage", "remote process exited or there was a network
// error"); ncclGetLastError says what actually went wrong ("Duplicate GPU detected ...").
// A failure throws NcclError with both, the call, file and line; the executable turns it into
// one line on stderr and exit status 3.
#pragma once

#include <nccl.h>

#include <stdexcept>
#include <string>

struct NcclError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

inline void nccl_check(ncclResult_t status, const char* what, const char* file, int line) {
    if (status == ncclSuccess) return;
    // Keep "folder/file.cu" of the path, as cuda_check does.
    std::string where = file;
    const auto last = where.rfind('/');
    if (last != std::string::npos && last > 0) {
        const auto before = where.rfind('/', last - 1);
        if (before != std::string::npos) where = where.substr(before + 1);
    }
    std::string message = std::string(what) + " failed at " + where + ":" + std::to_string(line) + ": " +
                          ncclGetErrorString(status);
    const char* detail = ncclGetLastError(nullptr);  // the argument is unused, NULL is allowed
    if (detail && *detail) message += " (" + std::string(detail) + ")";
    // NCCL's own messages may end in a newline: the error must stay one line.
    for (char& c : message) {
        if (c == '\n') c = ' ';
    }
    while (!message.empty() && message.back() == ' ') message.pop_back();
    throw NcclError(message);
}

#define NCCL_CHECK(call) nccl_check((call), #call, __FILE__, __LINE__)
