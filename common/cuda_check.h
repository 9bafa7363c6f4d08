// Error checking for every CUDA call and every kernel launch.
//
// CUDA reports errors through return codes that are easy to ignore, and a kernel launch
// returns nothing at all: a bad configuration (too many threads, too much shared memory)
// only shows up in cudaGetLastError(), and a fault inside the kernel only in the next call
// that waits for it. So every call goes through CUDA_CHECK, every launch is followed by
// CUDA_CHECK_LAUNCH(), and a failure throws CudaError naming the call, file and line. The
// executables turn it into one line on stderr and exit status 3.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

struct CudaError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

inline void cuda_check(cudaError_t status, const char* what, const char* file, int line) {
    if (status == cudaSuccess) return;
    // Keep "folder/file.cu" of the path: enough to find it, short enough for one line.
    std::string where = file;
    const auto last = where.rfind('/');
    if (last != std::string::npos && last > 0) {
        const auto before = where.rfind('/', last - 1);
        if (before != std::string::npos) where = where.substr(before + 1);
    }
    throw CudaError(std::string(what) + " failed at " + where + ":" + std::to_string(line) + ": " +
                    cudaGetErrorString(status) + " (" + cudaGetErrorName(status) + ")");
}

#define CUDA_CHECK(call) cuda_check((call), #call, __FILE__, __LINE__)
#define CUDA_CHECK_LAUNCH() cuda_check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
