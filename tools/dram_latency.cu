// dram_latency: how long one load waits for DRAM on this GPU, for Little's law in
// docs/05-complete-unroll.md (bytes in flight = bandwidth x latency).
//
//   build/release/bin/dram_latency
//
// One thread follows a chain of pointers through a buffer, each load's address coming
// from the load before, so no two loads overlap: the time per step is the latency of one
// load. The chain visits 128-byte lines in a random order: over a 1 GiB buffer (far past
// the L2) nearly every step misses the L2 and goes to DRAM; over 1 MiB it stays in L2.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "cuda_check.h"
#include "device_buffer.h"

namespace {

constexpr std::size_t kLine = 128 / sizeof(unsigned);  // one 128-byte line apart, in unsigned

__global__ void chase(const unsigned* next, unsigned steps, unsigned* sink, long long* cycles) {
    unsigned at = 0;
    const long long start = clock64();
    for (unsigned s = 0; s < steps; ++s) at = next[at];
    *cycles = clock64() - start;
    *sink = at;  // keeps the chain
}

// Nanoseconds per dependent load over a buffer of `bytes`.
double latency_ns(std::size_t bytes, unsigned steps) {
    const std::size_t lines = bytes / (kLine * sizeof(unsigned));
    std::vector<unsigned> order(lines);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin() + 1, order.end(), std::mt19937(2026));
    std::vector<unsigned> next(lines * kLine, 0);
    for (std::size_t i = 0; i < lines; ++i) {
        next[order[i] * kLine] = static_cast<unsigned>(order[(i + 1) % lines] * kLine);
    }
    DeviceBuffer<unsigned> chain(next.size()), sink(1);
    DeviceBuffer<long long> cycles(1);
    CUDA_CHECK(cudaMemcpy(chain.get(), next.data(), next.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    chase<<<1, 1>>>(chain.get(), steps / 10, sink.get(), cycles.get());  // warm-up: TLB, clocks
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(start));
    chase<<<1, 1>>>(chain.get(), steps, sink.get(), cycles.get());
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    return ms * 1e6 / steps;
}

}  // namespace

int main() {
    try {
        int device = 0;
        cudaDeviceProp prop{};
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
        std::fprintf(stderr, "dram_latency: one thread, dependent loads over 128-byte lines in random order, on %s\n",
                     prop.name);
        std::printf("buffer_bytes,ns_per_load\n");
        for (std::size_t bytes : {std::size_t{1} << 20, std::size_t{1} << 30}) {
            std::printf("%zu,%.1f\n", bytes, latency_ns(bytes, 200000));
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "dram_latency: %s\n", e.what());
        return 3;
    }
}
