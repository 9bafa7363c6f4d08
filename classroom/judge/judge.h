// The judge's parts (judge.cu: what the judge is and does), shared by its files:
//   judge.cu           the command line, the correctness and sanitizer steps
//   perf.cu            the timed rounds (--perf)
//   cases.cpp          the public and hidden cases (on Gradescope removed with this folder)
//   worker_process.h   a worker process, its socket and its log (class Worker)
//   worker_process.cpp starting a process as the student's user, killing what it leaves,
//                      and the filter against new processes under the sanitizer (--exec-as)
// and beside them replay.cu, a program of its own (grade_replay): the process the
// sanitizers watch, which repeats a worker's records.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "protocol.h"

namespace judge {

using namespace grading_wire;

// ---------------------------------------------------------------- checks
struct CouldNotGrade : std::runtime_error {
    using std::runtime_error::runtime_error;
};

inline void check(cudaError_t r, const char* what) {
    if (r != cudaSuccess) throw CouldNotGrade(std::string(what) + ": " + cudaGetErrorString(r));
}
inline void check(CUresult r, const char* what) {
    if (r != CUDA_SUCCESS) {
        const char* name = nullptr;
        cuGetErrorName(r, &name);
        throw CouldNotGrade(std::string(what) + ": " + (name ? name : "unknown error"));
    }
}
#define CHECK(call) check((call), #call)

// ---------------------------------------------------------------- options
struct Options {
    std::string mode, tool, worker, reference, previous, sanitizer, run_as, logs = "/tmp";
    int min_block = 32, max_block = 1024;
    int timeout = 120;  // seconds for one request
    // The timed inputs: 2^26 int (256 MiB) each, 16 a request (4 GiB of GPU memory in all),
    // 4 in the small requests that measure the protocol's fixed cost; 9 rounds.
    int perf_log2n = 26, perf_batch = 16, perf_small = 4, perf_rounds = 9;
    std::uint64_t seed = 1;
};

__host__ __device__ inline std::uint64_t mix(std::uint64_t seed, std::uint64_t i) {
    std::uint64_t z = seed * 0xD1B54A32D192ED03ULL + (i + 1) * 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 29)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 32);
}

// An input value from a hash: a nonzero integer of at most `magnitude`, its sign from the
// lowest bit. The host's cases and the GPU's timed inputs draw the same way.
__host__ __device__ inline long long signed_value(std::uint64_t z, long long magnitude) {
    return (1 + static_cast<long long>((z >> 1) % static_cast<std::uint64_t>(magnitude))) * ((z & 1) ? 1 : -1);
}

// ---------------------------------------------------------------- the shared memory
// One VMM allocation, exported as a POSIX file descriptor that each worker receives over
// its socket (SCM_RIGHTS): no path or name another process could guess.
struct SharedMemory {
    CUdeviceptr base = 0;
    std::size_t bytes = 0;
    int fd = -1;

    SharedMemory(std::size_t wanted, int device) {
        CUmemAllocationProp prop{};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = device;
        prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        std::size_t granularity = 0;
        CHECK(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
        bytes = (wanted + granularity - 1) / granularity * granularity;
        CUmemGenericAllocationHandle handle{};
        CHECK(cuMemCreate(&handle, bytes, &prop, 0));
        CHECK(cuMemExportToShareableHandle(&fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
        CHECK(cuMemAddressReserve(&base, bytes, 0, 0, 0));
        CHECK(cuMemMap(base, bytes, 0, handle, 0));
        CHECK(cuMemRelease(handle));
        CUmemAccessDesc access{};
        access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        access.location.id = device;
        access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        CHECK(cuMemSetAccess(base, bytes, &access, 1));
    }
    template <typename T>
    T* at(std::size_t offset) const { return reinterpret_cast<T*>(base + offset); }
};

// ---------------------------------------------------------------- the GPU (judge.cu)
struct Device {
    int id = 0;
    cudaDeviceProp prop{};
    double peak_bytes_per_s = 0;  // theoretical DRAM bandwidth; 0: unknown
    std::string peak_source;
};
Device open_device();
std::string describe(const Device& d);

// ---------------------------------------------------------------- the cases (cases.cpp)
enum class Type { Int, Float, Double };
const char* type_name(Type t);
std::size_t type_size(Type t);
ValueKind wire_type(Type t);

struct Case {
    Type type;
    std::size_t n;
    int block;
    std::size_t offset;  // elements past a 256-byte aligned address
};

std::string case_text(const Case& c);
// The block sizes from --min-block to the largest, doubling.
std::vector<int> blocks(const Options& o);
// The groups, in the order the rubric lists them, and each one's cases.
extern const std::vector<std::string> kGroups;
std::vector<Case> group_cases(const std::string& group, const Options& o);
std::string got_text(double got);

// Nonzero integers with random signs, as small as needed to keep every partial sum exact
// in the type: the right sum has one value, bit for bit, whatever the order of the adds.
template <typename T>
std::vector<T> case_values(std::size_t n, std::uint64_t seed, long long& exact) {
    const long long limit = std::is_same_v<T, int> ? 2147483647LL : std::is_same_v<T, float> ? (1LL << 24) : (1LL << 53);
    const long long magnitude = std::max(1LL, std::min(8LL, limit / static_cast<long long>(std::max<std::size_t>(n, 1))));
    std::vector<T> values(n);
    exact = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const long long v = signed_value(mix(seed, i), magnitude);
        values[i] = static_cast<T>(v);
        exact += v;
    }
    return values;
}

class Worker;  // worker_process.h

// ---------------------------------------------------------------- the steps
struct Judge {
    Options o;
    Device device;
    int worker_starts = 0;

    std::string log_path(const std::string& role);
    // `run_as`: the user the program runs as ("": the judge's own).
    std::unique_ptr<Worker> start_worker(const std::string& role, std::vector<std::string> argv, const std::string& run_as,
                                         const SharedMemory& memory, std::string& error);

    int correctness();  // judge.cu
    int sanitize();     // judge.cu
    int perf();         // perf.cu

    // The inputs are the judge's: a worker maps them read-only where the driver allows it,
    // and, since a process can change its own mapping, the judge reads them back after
    // every request of the submission's and compares.
    static constexpr const char* kWroteInput =
        "the launcher wrote into its input or around it (the stage's contract: the input is read-only)";
    static bool unchanged(const SharedMemory& memory, const std::vector<char>& region);
    // One case: its input written into the shared memory, asked of the worker, every sum
    // checked. `copy_in`: on an exactly sized private copy, whatever the seed draws.
    // `replay`: asked of the replay (replay.cu) with this record, instead of a launcher.
    std::string run_case(Worker& worker, const SharedMemory& memory, const Case& c, std::uint64_t seed,
                         bool copy_in = false, const std::vector<char>* replay = nullptr);
};

}  // namespace judge
