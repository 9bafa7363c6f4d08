// grade_worker_reduceN: runs one stage's launcher for the judge, and nothing else.
//
// Built in the tree being graded, from this file and the stage's kernel.cu alone (no other
// stage, no reference solution, no test code is linked), once with the student's kernel and,
// in the grader's own tree, once with the instructor's. It never decides anything: the
// judge (judge.cu) made the inputs, knows their sums, checks every value this program
// sends back, and keeps the time on its side of the socket (protocol.h). Whatever the
// student's code does in this process (exit early, print, lie about the status), the
// judge sees only right sums, wrong sums, or none.
//
//   grade_worker_reduce4 --socket FD
#include <cuda.h>
#include <unistd.h>  // environ

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "device_buffer.h"
#include "exec_filter.h"  // no exec in this process, from before the submission's first instruction
#include "protocol.h"
#include "stage.h"

extern const Stage WORKER_STAGE;  // the graded stage, defined in its kernel.cu (CMake names it)

namespace {

using namespace grading_wire;

void driver_check(CUresult r, const char* what) {
    if (r != CUDA_SUCCESS) {
        const char* name = nullptr;
        cuGetErrorName(r, &name);
        throw std::runtime_error(std::string(what) + " failed: " + (name ? name : "unknown error"));
    }
}

// The judge's input memory, mapped into this process read-only where the driver allows
// it (a launcher that writes into its input then faults); the judge also reads the inputs
// back after every request, since a process may change its own mapping.
struct SharedInput {
    CUdeviceptr base = 0;
    std::size_t bytes = 0;
    const char* mapping = "read-only";

    SharedInput(int fd, std::size_t size, int device) : bytes(size) {
        CUmemGenericAllocationHandle handle{};
        driver_check(cuMemImportFromShareableHandle(&handle, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)),
                                                    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
                     "cuMemImportFromShareableHandle");
        close(fd);
        driver_check(cuMemAddressReserve(&base, bytes, 0, 0, 0), "cuMemAddressReserve");
        driver_check(cuMemMap(base, bytes, 0, handle, 0), "cuMemMap");
        driver_check(cuMemRelease(handle), "cuMemRelease");
        CUmemAccessDesc access{};
        access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        access.location.id = device;
        access.flags = CU_MEM_ACCESS_FLAGS_PROT_READ;
        if (cuMemSetAccess(base, bytes, &access, 1) != CUDA_SUCCESS) {
            mapping = "read-write (the driver refused a read-only mapping)";
            access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
            driver_check(cuMemSetAccess(base, bytes, &access, 1), "cuMemSetAccess");
        }
    }
};

// Scratch the launcher needs, kept from one request to the next (allocated and zeroed
// once per size, outside the judge's timed requests once the warm-up has run).
struct Workspace {
    DeviceBuffer<unsigned char> buffer{0};
    void* get(std::size_t bytes) {
        if (bytes > buffer.bytes()) {
            buffer = DeviceBuffer<unsigned char>(bytes);
            CUDA_CHECK(cudaMemset(buffer.get(), 0, buffer.bytes()));
        }
        return buffer.get();
    }
};

template <typename T>
std::vector<double> run(const Stage& stage, const SharedInput& shared, const Request& q, Workspace& workspace,
                        float& worker_ms) {
    if (q.offset + (q.batch - 1) * q.stride + q.n * sizeof(T) > shared.bytes) {
        throw std::runtime_error("the request reaches past the shared input");
    }
    RunConfig config;  // every labelled variant at the stage's default for T
    config.block = static_cast<int>(q.block);
    const SumFn<T> sum = stage.sum<T>();
    if (!sum || !stage.workspace_bytes) throw std::runtime_error("the stage registers no launcher for this type");
    void* scratch = workspace.get(stage.workspace_bytes(q.n, sizeof(T), config));
    // The sums land in memory allocated once (an allocation per request would be timed).
    static DeviceBuffer<double> result_slots(kMaxBatch * 4);
    T* results = reinterpret_cast<T*>(result_slots.get());
    const std::size_t result_bytes = q.batch * q.repeats * sizeof(T);
    CUDA_CHECK(cudaMemsetAsync(results, 0x7F, result_bytes));  // a value no sum here takes
    DeviceBuffer<T> copy(q.flags & kCopyIn ? q.n : 0);
    static cudaEvent_t events[2] = {nullptr, nullptr};
    if (!events[0]) {
        CUDA_CHECK(cudaEventCreate(&events[0]));
        CUDA_CHECK(cudaEventCreate(&events[1]));
    }
    CUDA_CHECK(cudaEventRecord(events[0]));
    for (std::uint32_t k = 0; k < q.batch; ++k) {
        const T* in = reinterpret_cast<const T*>(shared.base + q.offset + k * q.stride);
        if (q.flags & kCopyIn) {
            CUDA_CHECK(cudaMemcpy(copy.get(), in, q.n * sizeof(T), cudaMemcpyDeviceToDevice));
            in = copy.get();
        }
        for (std::uint32_t r = 0; r < q.repeats; ++r) {
            sum(in, q.n, results + k * q.repeats + r, scratch, config, nullptr);
        }
    }
    CUDA_CHECK(cudaEventRecord(events[1]));
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaEventElapsedTime(&worker_ms, events[0], events[1]));
    std::vector<T> host(q.batch * q.repeats);
    CUDA_CHECK(cudaMemcpy(host.data(), results, result_bytes, cudaMemcpyDeviceToHost));
    return std::vector<double>(host.begin(), host.end());
}

// The process's first environment and arguments lie at the top of its stack, where a
// launcher could read them by pointer arithmetic alone, no name needed (review 15, attack
// 28): under compute-sanitizer they hold LD_PRELOAD and NV_SANITIZER_INJECTION_*, which tell
// the sanitized worker from the others. Once CUDA, and the sanitizer's injection with it, has
// started, the worker's environment becomes the same literal in every worker (kWorkerKeeps:
// the sanitizer changes some of the judge's variables too, review16/31), and the stack's
// strings and pointers are wiped. The sanitizer reads its variables when CUDA starts; its
// later reports on this process are what the grading's racy fixtures check. (The launcher
// runs on another thread's stack besides, which holds no pointer to this one: main, below.)
void forget_starting_environment(int argc, char** argv, char** envp) {
    static std::vector<char*> entries;  // the new environment, for the process's life
    for (const char* entry : kWorkerKeeps) entries.push_back(const_cast<char*>(entry));
    entries.push_back(nullptr);
    environ = entries.data();  // one store: a getenv on another thread sees the old list or the new
    for (int i = 0; i < argc; ++i) {
        std::memset(argv[i], 0, std::strlen(argv[i]));
        argv[i] = nullptr;
    }
    for (char** e = envp; *e; ++e) {
        std::memset(*e, 0, std::strlen(*e));
        *e = nullptr;
    }
}

void copy_text(char (&to)[kTextBytes], const std::string& text) {
    std::snprintf(to, kTextBytes, "%s", text.c_str());
}

// The judge's setup: CUDA started on its device, the shared input mapped, and the starting
// environment wiped, all before any code of the submission's runs; null when it failed
// (the judge has been told why).
std::unique_ptr<SharedInput> set_up(int socket, int argc, char** argv, char** envp, int& device) {
    Setup setup;
    int memory_fd = -1;
    if (!recv_with_fd(socket, &setup, sizeof setup, memory_fd, 60000) || setup.magic != kMagic ||
        setup.version != kVersion) {
        std::fprintf(stderr, "worker: no setup from the judge\n");
        return nullptr;
    }
    Ready ready;
    std::unique_ptr<SharedInput> shared;
    try {
        device = static_cast<int>(setup.device);
        CUDA_CHECK(cudaSetDevice(device));
        CUDA_CHECK(cudaFree(nullptr));  // the primary context, which the driver calls below use
        shared = std::make_unique<SharedInput>(memory_fd, setup.bytes, device);
        copy_text(ready.text, shared->mapping);
        forget_starting_environment(argc, argv, envp);  // before the submission's first call
    } catch (const std::exception& e) {
        ready.kind = Kind::Failed;
        copy_text(ready.text, e.what());
        shared.reset();
    }
    if (!send_all(socket, &ready, sizeof ready) || ready.kind != Kind::Ready) return nullptr;
    return shared;
}

// The judge's requests, one after the other, until it says quit or goes away.
int serve(int socket, const SharedInput* input, int device) {
    if (cudaSetDevice(device) != cudaSuccess) return 3;  // this thread's current device
    const SharedInput& shared_input = *input;
    const Stage& stage = WORKER_STAGE;
    Workspace workspace;
    for (;;) {
        Request q;
        if (!recv_all(socket, &q, sizeof q, -1) || q.magic != kMagic || q.op == kQuit) return 0;
        Reply reply;
        std::vector<double> values;
        try {
            if (q.batch == 0 || q.batch > kMaxBatch || q.repeats == 0 || q.repeats > 4) {  // 4: result_slots
                throw std::runtime_error("malformed request");
            }
            switch (q.type) {
                case ValueKind::Int32: values = run<int>(stage, shared_input, q, workspace, reply.worker_ms); break;
                case ValueKind::Float32: values = run<float>(stage, shared_input, q, workspace, reply.worker_ms); break;
                default: values = run<double>(stage, shared_input, q, workspace, reply.worker_ms); break;
            }
            reply.ok = 1;
        } catch (const std::exception& e) {
            copy_text(reply.text, e.what());
            cudaGetLastError();  // a sticky error stays; the next request will say so too
        }
        reply.count = static_cast<std::uint32_t>(values.size());
        if (!send_all(socket, &reply, sizeof reply) ||
            !send_all(socket, values.data(), values.size() * sizeof(double))) {
            return 0;
        }
    }
}

}  // namespace

int main(int argc, char** argv, char** envp) {
    if (argc != 3 || std::strcmp(argv[1], "--socket") != 0) {
        std::fprintf(stderr, "usage: %s --socket FD (started by the judge, not by hand)\n", argv[0]);
        return 2;
    }
    // The set-up runs here, on the main thread; the judge's requests are served, and the
    // submission's code runs, on a thread of its own: walking up from a launcher's frame
    // reaches the top of that thread's stack, which holds nothing of how the process started
    // (its arguments, environment and auxiliary vector lie at the top of the main thread's:
    // review16/32 counted the variables there). The thread is given values and heap
    // addresses only, never an address on this stack (review17/33 followed a captured
    // reference, kept in a saved register, from the serving thread's stack to this one).
    const int socket = std::atoi(argv[2]);
    int device = 0;
    const std::unique_ptr<SharedInput> shared = set_up(socket, argc, argv, envp, device);
    if (!shared) return 3;
    static int status = 3;  // not on this stack either
    std::thread server([socket, input = shared.get(), device] { status = serve(socket, input, device); });
    server.join();
    return status;
}
