// grade_worker_reduceN: runs one stage's launcher for the judge, and nothing else.
//
// Built in the tree being graded, from this file and the stage's kernel.cu alone (no other
// stage, no reference solution, no test code is linked), once with the student's kernel and,
// in the grader's own tree, once with the instructor's. It never decides anything: the
// judge (judge.cu) made the inputs, knows their sums, checks every value this program
// sends back, and keeps the time on its side of the socket (protocol.h). Whatever the
// student's code does in this process (exit early, print, lie about the status), the
// judge sees only right sums, wrong sums, or none. It also records what the launcher asked
// of the GPU (recorder.cu) and sends that along: the sanitizers' step repeats it in a
// process of the judge's (judge/replay.cu), so that no code of the submission's host side
// ever runs under a sanitizer, where it could look for one.
//
//   grade_worker_reduce4 --socket FD
#include <cuda.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_check.h"
#include "exec_filter.h"  // no exec in this process, from before the submission's first instruction
#include "gpu_window.h"
#include "launch_record.h"
#include "protocol.h"
#include "recorder.h"
#include "stage.h"

extern const Stage WORKER_STAGE;  // the graded stage, defined in its kernel.cu (CMake names it)

namespace {

using namespace grading_wire;

template <typename T>
std::vector<double> run(const Stage& stage, gpu_window::Window& window, const Request& q, float& worker_ms,
                        launch_record::Writer& record) {
    using gpu_window::Window;
    if (q.offset + (q.batch - 1) * q.stride + q.n * sizeof(T) > window.input_bytes()) {
        throw std::runtime_error("the request reaches past the shared input");
    }
    RunConfig config;  // every labelled variant at the stage's default for T
    config.block = static_cast<int>(q.block);
    const SumFn<T> sum = stage.sum<T>();
    if (!sum || !stage.workspace_bytes) throw std::runtime_error("the stage registers no launcher for this type");
    // The buffers at their fixed places (gpu_window.h), each step written into the record
    // that the replay repeats: the workspace kept from one request to the next (zeroed
    // when it grows), the sums in memory mapped once (a mapping per request would be timed).
    // Recording from here to the request's end: every call into the submission (its
    // workspace_bytes as much as its launcher) is recorded where it is made.
    recorder::target = &record;
    // A buffer at its slot, and the same step in the record: the replay maps what this did.
    const auto ensure = [&](gpu_window::Slot slot, std::size_t bytes, bool guard) {
        void* buffer = window.ensure(slot, bytes, guard);
        record.ensure({static_cast<std::uint32_t>(slot), guard ? 1u : 0u, bytes});
        return buffer;
    };
    const std::size_t workspace_bytes = stage.workspace_bytes(q.n, sizeof(T), config);
    void* scratch = ensure(gpu_window::kWorkspace, workspace_bytes, false);
    T* results = static_cast<T*>(ensure(gpu_window::kResults, kSumsBytes, false));
    const std::size_t result_bytes = q.batch * q.repeats * sizeof(T);
    CUDA_CHECK(cudaMemsetAsync(results, 0x7F, result_bytes));  // a value no sum here takes
    record.memset({reinterpret_cast<std::uint64_t>(results), result_bytes, 0x7F});
    T* copy = nullptr;
    if (q.flags & kCopyIn) {
        copy = static_cast<T*>(ensure(gpu_window::kCopy, q.n * sizeof(T), /*guard=*/true));
    }
    static cudaEvent_t events[2] = {nullptr, nullptr};
    if (!events[0]) {
        CUDA_CHECK(cudaEventCreate(&events[0]));
        CUDA_CHECK(cudaEventCreate(&events[1]));
    }
    CUDA_CHECK(cudaEventRecord(events[0]));
    for (std::uint32_t k = 0; k < q.batch; ++k) {
        const T* in = reinterpret_cast<const T*>(Window::start(gpu_window::kInput) + q.offset + k * q.stride);
        if (copy) {
            CUDA_CHECK(cudaMemcpyAsync(copy, in, q.n * sizeof(T), cudaMemcpyDeviceToDevice));
            record.copy({reinterpret_cast<std::uint64_t>(copy), reinterpret_cast<std::uint64_t>(in), q.n * sizeof(T)});
            in = copy;
        }
        for (std::uint32_t r = 0; r < q.repeats; ++r) sum(in, q.n, results + k * q.repeats + r, scratch, config, nullptr);
    }
    CUDA_CHECK(cudaEventRecord(events[1]));
    recorder::target = nullptr;
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaEventElapsedTime(&worker_ms, events[0], events[1]));
    std::vector<T> host(q.batch * q.repeats);
    CUDA_CHECK(cudaMemcpy(host.data(), results, result_bytes, cudaMemcpyDeviceToHost));
    return std::vector<double>(host.begin(), host.end());
}

// The judge's setup: CUDA started on its device, the grading window reserved and the
// shared input mapped into it, before any code of the submission's runs; null when it
// failed (the judge has been told why).
std::unique_ptr<gpu_window::Window> set_up(int socket) {
    Setup setup;
    int memory_fd = -1;
    if (!recv_with_fd(socket, &setup, sizeof setup, memory_fd, 60000) || setup.magic != kMagic ||
        setup.version != kVersion) {
        std::fprintf(stderr, "worker: no setup from the judge\n");
        return nullptr;
    }
    Ready ready;
    std::unique_ptr<gpu_window::Window> window;
    try {
        CUDA_CHECK(cudaSetDevice(static_cast<int>(setup.device)));
        CUDA_CHECK(cudaFree(nullptr));  // the primary context, which the driver calls below use
        window = std::make_unique<gpu_window::Window>(static_cast<int>(setup.device));
        copy_text(ready.text, window->map_input(memory_fd, setup.bytes));
    } catch (const std::exception& e) {
        ready.kind = Kind::Failed;
        copy_text(ready.text, e.what());
        window.reset();
    }
    close(memory_fd);
    if (!send_all(socket, &ready, sizeof ready) || ready.kind != Kind::Ready) return nullptr;
    return window;
}

// The judge's requests, one after the other, until it says quit or goes away. Each reply
// carries the sums, then the request's record (launch_record.h).
int serve(int socket, gpu_window::Window& window) {
    const Stage& stage = WORKER_STAGE;
    launch_record::Writer record;
    for (;;) {
        Request q;
        if (!recv_all(socket, &q, sizeof q, -1) || q.magic != kMagic || q.op == kQuit) return 0;
        Reply reply;
        std::vector<double> values;
        record.clear();
        try {
            if (q.op != kRun || !well_formed(q)) throw std::runtime_error("malformed request");
            switch (q.type) {
                case ValueKind::Int32: values = run<int>(stage, window, q, reply.worker_ms, record); break;
                case ValueKind::Float32: values = run<float>(stage, window, q, reply.worker_ms, record); break;
                default: values = run<double>(stage, window, q, reply.worker_ms, record); break;
            }
            reply.ok = 1;
        } catch (const std::exception& e) {
            recorder::target = nullptr;
            copy_text(reply.text, e.what());
            cudaGetLastError();  // a sticky error stays; the next request will say so too
        }
        const std::vector<char> recorded = record.finish();
        reply.count = static_cast<std::uint32_t>(values.size());
        reply.record_bytes = static_cast<std::uint32_t>(recorded.size());
        if (!send_all(socket, &reply, sizeof reply) ||
            !send_all(socket, values.data(), values.size() * sizeof(double)) ||
            !send_all(socket, recorded.data(), recorded.size())) {
            return 0;
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3 || std::strcmp(argv[1], "--socket") != 0) {
        std::fprintf(stderr, "usage: %s --socket FD (started by the judge, not by hand)\n", argv[0]);
        return 2;
    }
    const int socket = std::atoi(argv[2]);
    const std::unique_ptr<gpu_window::Window> window = set_up(socket);
    return window ? serve(socket, *window) : 3;
}
