// The start gate (multi_gpu_internal.h): one spinning thread per GPU, opened by the host.
#include <atomic>
#include <cstring>

#include "multi_gpu_internal.h"

namespace {

constexpr unsigned long long kGateLimitNs = 2'000'000'000ull;  // kGateTimeoutText's 2 s

__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long ns;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
    return ns;
}

// One thread: waits until *open != 0, or writes *timed_out = 1 after limit_ns.
__global__ void wait_at_gate(const volatile int* open, volatile int* timed_out, unsigned long long limit_ns) {
    const unsigned long long begin = global_ns();
    while (*open == 0) {
        if (global_ns() - begin > limit_ns) {
            *timed_out = 1;
            return;
        }
    }
}

}  // namespace

StartGate::StartGate(std::vector<TeamGpu>& gpus) {
    const std::size_t bytes = (1 + gpus.size()) * sizeof(int);
    void* words = nullptr;
    CUDA_CHECK(cudaHostAlloc(&words, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
    words_ = static_cast<volatile int*>(words);
    std::memset(const_cast<int*>(words_), 0, bytes);
    words_[0] = 1;  // open until the first close(): run 0 goes through ungated
    for (TeamGpu& gpu : gpus) {
        CUDA_CHECK(cudaSetDevice(gpu.device));
        void* device = nullptr;
        CUDA_CHECK(cudaHostGetDevicePointer(&device, const_cast<int*>(words_), 0));
        device_words_.push_back(static_cast<int*>(device));
    }
}

StartGate::~StartGate() { cudaFreeHost(const_cast<int*>(words_)); }

void StartGate::enqueue(std::size_t i, cudaStream_t stream) {
    wait_at_gate<<<1, 1, 0, stream>>>(device_words_[i], device_words_[i] + 1 + i, kGateLimitNs);
    CUDA_CHECK_LAUNCH();
}

bool StartGate::timed_out(std::size_t i) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    const bool gave_up = words_[1 + i] != 0;
    words_[1 + i] = 0;
    return gave_up;
}

void StartGate::store(int value) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    words_[0] = value;
    std::atomic_thread_fence(std::memory_order_seq_cst);
}
