// dram_latency: how long one load waits for DRAM on this GPU, for Little's law in
// docs/05-complete-unroll.md (bytes in flight = bandwidth x latency).
//
//   build/release/bin/dram_latency             # idle latency, CSV (docs/results/latency.csv)
//   build/release/bin/dram_latency --loaded     # idle and loaded, random and sequential chains
//
// One thread follows a chain of pointers through a buffer, each load's address coming
// from the load before, so no two loads overlap: the time per step is the latency of one
// load. The chain visits 128-byte lines in a random order: over a 1 GiB buffer (far past
// the L2) nearly every step misses the L2 and goes to DRAM; over 1 MiB it stays in L2.
// The timed chase starts where its warm-up stopped, so it meets no line the warm-up left
// in the L2 (before, its first tenth did: those steps hit the L2, pulling the average
// down by about a tenth of the DRAM-L2 difference).
//
// --loaded measures what a reduction's loads really wait: the same chase while the rest
// of the GPU streams through a 4 GiB buffer, as a reduction does. Under load a request
// queues behind others at the L2 slices and the DRAM controllers, so it waits longer
// than on an idle GPU; Little's law wants the latency under load. It also chases the
// lines in address order ("sequential"): consecutive lines share a DRAM row and a TLB
// entry as a stream's do, so the random chase's extra time is its row and TLB misses.
// Each row says the bandwidth the stream reached meanwhile.
#include <cuda/atomic>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_check.h"
#include "device_buffer.h"

namespace {

constexpr std::size_t kLine = 128 / sizeof(unsigned);  // one 128-byte line apart, in unsigned

__global__ void chase(const unsigned* next, unsigned from, unsigned steps, unsigned* sink, long long* cycles) {
    unsigned at = from;
    const long long start = clock64();
    for (unsigned s = 0; s < steps; ++s) at = next[at];
    *cycles = clock64() - start;
    *sink = at;  // keeps the chain
}

// Where a chain is after its warm-up's steps (the timed chase starts there, on lines the
// warm-up left out of the L2), and after the timed steps too (the check).
struct ChainEnds {
    unsigned after_warm_up, after_timed;
};

// A chain over `bytes`, visiting its 128-byte lines in random or address order.
ChainEnds make_chain(DeviceBuffer<unsigned>& chain, std::size_t bytes, bool random_order, unsigned warm_up_steps,
                     unsigned steps) {
    const std::size_t lines = bytes / (kLine * sizeof(unsigned));
    std::vector<unsigned> order(lines);
    std::iota(order.begin(), order.end(), 0u);
    if (random_order) std::shuffle(order.begin() + 1, order.end(), std::mt19937(2026));
    std::vector<unsigned> next(lines * kLine, 0);
    for (std::size_t i = 0; i < lines; ++i) {
        next[order[i] * kLine] = static_cast<unsigned>(order[(i + 1) % lines] * kLine);
    }
    CUDA_CHECK(cudaMemcpy(chain.get(), next.data(), next.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
    ChainEnds ends{};
    unsigned at = 0;
    for (unsigned s = 0; s < warm_up_steps; ++s) at = next[at];
    ends.after_warm_up = at;
    for (unsigned s = 0; s < steps; ++s) at = next[at];
    ends.after_timed = at;
    return ends;
}

// Nanoseconds per dependent load over a buffer of `bytes`, lines in random order.
double latency_ns(std::size_t bytes, unsigned steps) {
    DeviceBuffer<unsigned> chain(bytes / sizeof(unsigned)), sink(1);
    DeviceBuffer<long long> cycles(1);
    const ChainEnds ends = make_chain(chain, bytes, true, steps / 10, steps);
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    chase<<<1, 1>>>(chain.get(), 0, steps / 10, sink.get(), cycles.get());  // warm-up: clocks, code
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(start));
    chase<<<1, 1>>>(chain.get(), ends.after_warm_up, steps, sink.get(), cycles.get());
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    unsigned end = 0;
    CUDA_CHECK(cudaMemcpy(&end, sink.get(), sizeof end, cudaMemcpyDeviceToHost));
    if (end != ends.after_timed) throw std::runtime_error("the chase ended at the wrong line: its loads were wrong");
    return ms * 1e6 / steps;
}

// ---------------------------------------------------------------- --loaded
// The GPU's nanosecond clock, the same on every SM (clock64() counts one SM's cycles).
__device__ unsigned long long global_ns() {
    unsigned long long ns;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
    return ns;
}

constexpr unsigned long long kWaitLimitNs = 2'000'000'000;  // 2 s: the two kernels never met

struct ChaseTimes {
    unsigned long long start_ns, end_ns;
    unsigned end;  // where the chain ended, checked on the host
};

// The chase, timed on the GPU. With a stream (stream_started not null) it waits until the
// stream has begun, and tells the stream when it is done.
__global__ void timed_chase(const unsigned* next, unsigned from, unsigned steps, unsigned* stream_started,
                            unsigned* chase_done, ChaseTimes* times) {
    if (stream_started) {
        cuda::atomic_ref<unsigned, cuda::thread_scope_device> started(*stream_started);
        const unsigned long long waiting_since = global_ns();
        while (started.load(cuda::memory_order_acquire) == 0) {
            if (global_ns() - waiting_since > kWaitLimitNs) return;  // times->end_ns stays 0: reported on the host
        }
    }
    unsigned at = from;
    const unsigned long long start = global_ns();
    for (unsigned s = 0; s < steps; ++s) at = next[at];
    const unsigned long long end = global_ns();
    times->start_ns = start;
    times->end_ns = end;
    times->end = at;
    if (chase_done) cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*chase_done).store(1u, cuda::memory_order_release);
}

struct StreamTotals {
    unsigned long long start_ns, end_ns;  // the earliest block's start, the latest block's end
    unsigned long long vectors, sum;      // 16-byte vectors loaded, and the sum of their words
};

constexpr int kStreamLoads = 4;           // independent 16-byte loads per thread per step, as reduce7
constexpr unsigned kStreamBlock = 256;
constexpr unsigned kMaxStreamPasses = 10000;  // a bound in case the chase never finishes

// Every thread reads its grid-stride share of the buffer, kStreamLoads vectors in flight,
// pass after pass, until the chase is done; then the block adds up what it read.
__global__ void stream_read(const uint4* data, std::size_t vectors, unsigned* chase_done, unsigned* stream_started,
                            StreamTotals* totals) {
    const unsigned long long start = global_ns();
    if (threadIdx.x == 0) {
        cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*stream_started).store(1u, cuda::memory_order_release);
    }
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> done(*chase_done);
    const std::size_t stride = std::size_t(gridDim.x) * kStreamBlock;
    unsigned long long sum = 0, loaded = 0;
    bool finished = false;
    for (unsigned pass = 0; pass < kMaxStreamPasses && !finished; ++pass) {
        unsigned step = 0;
        for (std::size_t i = blockIdx.x * std::size_t(kStreamBlock) + threadIdx.x;
             i + (kStreamLoads - 1) * stride < vectors; i += kStreamLoads * stride) {
            uint4 part[kStreamLoads];
#pragma unroll
            for (int k = 0; k < kStreamLoads; ++k) part[k] = data[i + k * stride];
#pragma unroll
            for (int k = 0; k < kStreamLoads; ++k) sum += 0ull + part[k].x + part[k].y + part[k].z + part[k].w;
            loaded += kStreamLoads;
            // The flag lives in L2; reading it every 16th step costs ~0.1% of the bytes.
            if (++step % 16 == 0 && done.load(cuda::memory_order_relaxed)) {
                finished = true;
                break;
            }
        }
        finished = finished || done.load(cuda::memory_order_relaxed);
    }
    __shared__ unsigned long long block_sum, block_loaded;
    if (threadIdx.x == 0) block_sum = block_loaded = 0;
    __syncthreads();
    atomicAdd(&block_sum, sum);
    atomicAdd(&block_loaded, loaded);
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicAdd(&totals->sum, block_sum);
        atomicAdd(&totals->vectors, block_loaded);
        atomicMin(&totals->start_ns, start);
        atomicMax(&totals->end_ns, global_ns());
    }
}

struct LoadedRow {
    double ns_per_load = 0, stream_gbps = 0;
};

// One chase over `chain`, alone (stream_blocks == 0) or beside a stream of that many blocks.
LoadedRow chase_beside_stream(const DeviceBuffer<unsigned>& chain, unsigned steps, const ChainEnds& ends,
                              const DeviceBuffer<uint4>& stream_data, unsigned stream_blocks) {
    DeviceBuffer<unsigned> flags(2);  // [0]: the stream has started, [1]: the chase is done
    DeviceBuffer<ChaseTimes> times(1);
    DeviceBuffer<StreamTotals> totals(1);
    CUDA_CHECK(cudaMemset(flags.get(), 0, 2 * sizeof(unsigned)));
    const StreamTotals empty = {~0ull, 0, 0, 0};
    CUDA_CHECK(cudaMemcpy(totals.get(), &empty, sizeof empty, cudaMemcpyHostToDevice));
    cudaStream_t chase_stream, load_stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&chase_stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&load_stream, cudaStreamNonBlocking));
    timed_chase<<<1, 1, 0, chase_stream>>>(chain.get(), 0, steps / 10, nullptr, nullptr, times.get());  // warm-up
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamSynchronize(chase_stream));
    CUDA_CHECK(cudaMemset(times.get(), 0, sizeof(ChaseTimes)));  // end_ns 0 until the timed chase ends
    const bool loaded = stream_blocks > 0;
    // The chase first: its one block is resident before the stream's fill the GPU, and
    // the stream leaves room for it (one block fewer than fit), so the two run together.
    timed_chase<<<1, 1, 0, chase_stream>>>(chain.get(), ends.after_warm_up, steps, loaded ? flags.get() : nullptr,
                                           loaded ? flags.get() + 1 : nullptr, times.get());
    CUDA_CHECK_LAUNCH();
    if (loaded) {
        stream_read<<<stream_blocks, kStreamBlock, 0, load_stream>>>(stream_data.get(), stream_data.size(),
                                                                     flags.get() + 1, flags.get(), totals.get());
        CUDA_CHECK_LAUNCH();
    }
    CUDA_CHECK(cudaStreamSynchronize(chase_stream));
    CUDA_CHECK(cudaStreamSynchronize(load_stream));
    CUDA_CHECK(cudaStreamDestroy(chase_stream));
    CUDA_CHECK(cudaStreamDestroy(load_stream));

    ChaseTimes chase{};
    StreamTotals stream{};
    CUDA_CHECK(cudaMemcpy(&chase, times.get(), sizeof chase, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&stream, totals.get(), sizeof stream, cudaMemcpyDeviceToHost));
    if (chase.end_ns == 0) throw std::runtime_error("the chase never saw the stream start: the kernels did not run together");
    if (chase.end != ends.after_timed) throw std::runtime_error("the chase ended at the wrong line: its loads were wrong");
    LoadedRow row;
    row.ns_per_load = double(chase.end_ns - chase.start_ns) / steps;
    if (loaded) {
        // Every 32-bit word of the buffer is 0x01010101 (cudaMemset of 1s).
        if (stream.sum != stream.vectors * 4ull * 0x01010101ull) throw std::runtime_error("the stream's sum is wrong");
        if (stream.start_ns > chase.start_ns || stream.end_ns < chase.end_ns) {
            throw std::runtime_error("the stream did not cover the whole chase");
        }
        row.stream_gbps = double(stream.vectors) * sizeof(uint4) / double(stream.end_ns - stream.start_ns);
    }
    return row;
}

int loaded_latency(const cudaDeviceProp& prop) {
    constexpr unsigned kSteps = 200000;
    std::size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    // 4 GiB, far past the L2, or a quarter of what is free on a small GPU.
    const std::size_t stream_bytes = std::min<std::size_t>(std::size_t{4} << 30, free_bytes / 4) / sizeof(uint4) * sizeof(uint4);
    DeviceBuffer<uint4> stream_data(stream_bytes / sizeof(uint4));
    CUDA_CHECK(cudaMemset(stream_data.get(), 1, stream_bytes));
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, stream_read, kStreamBlock, 0));
    const unsigned stream_blocks = static_cast<unsigned>(per_sm * prop.multiProcessorCount - 1);
    std::fprintf(stderr, "dram_latency --loaded: the chase beside %u blocks of %u threads streaming %zu MiB, on %s\n",
                 stream_blocks, kStreamBlock, stream_bytes >> 20, prop.name);
    std::printf("buffer_bytes,order,load,ns_per_load,stream_gbps,stream_blocks,stream_bytes\n");
    for (std::size_t bytes : {std::size_t{1} << 20, std::size_t{1} << 30}) {
        DeviceBuffer<unsigned> chain(bytes / sizeof(unsigned));
        for (bool random_order : {true, false}) {
            const ChainEnds ends = make_chain(chain, bytes, random_order, kSteps / 10, kSteps);
            for (unsigned blocks : {0u, stream_blocks}) {
                const LoadedRow row = chase_beside_stream(chain, kSteps, ends, stream_data, blocks);
                std::printf("%zu,%s,%s,%.1f,%.1f,%u,%zu\n", bytes, random_order ? "random" : "sequential",
                            blocks ? "streaming" : "idle", row.ns_per_load, row.stream_gbps, blocks,
                            blocks ? stream_bytes : std::size_t{0});
            }
        }
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const bool loaded = argc == 2 && std::strcmp(argv[1], "--loaded") == 0;
        if (argc > 2 || (argc == 2 && !loaded)) {
            std::fprintf(stderr, "usage: dram_latency [--loaded]\n");
            return 2;
        }
        int device = 0;
        cudaDeviceProp prop{};
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
        if (loaded) return loaded_latency(prop);
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
