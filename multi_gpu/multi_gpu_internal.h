// What the files of the multi-GPU library share among themselves (their callers include
// multi_gpu.h): the start gate, the values' poison and NCCL type, and small helpers.
//
//   team.cu       the GPUs and their communicators, their memory plans
//   start_gate.cu the gate that starts every GPU's timed run at once
//   reduction.cu  the reduction across the GPUs and the single-GPU baseline
//   allreduce.cu  the all-reduce of a vector
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cuda_check.h"
#include "multi_gpu.h"

extern const Stage reduce7_stage;  // each GPU sums its shard with reduce7 (reduce7/kernel.cu)

// Before each run the result is overwritten with bytes 0x7F, a value no sum of these inputs
// can take, so a GPU that writes nothing cannot pass the check (as common/benchmark.cu does).
constexpr int kPoisonByte = 0x7F;

template <typename T> ncclDataType_t nccl_type();
template <> inline ncclDataType_t nccl_type<int>() { return ncclInt32; }
template <> inline ncclDataType_t nccl_type<float>() { return ncclFloat32; }
template <> inline ncclDataType_t nccl_type<double>() { return ncclFloat64; }

inline float elapsed_ms(cudaEvent_t from, cudaEvent_t to) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, from, to));
    return ms;
}

// "n = 8,589,934,592 (2^33) float values"
std::string values_text(std::size_t n, ValueType type);

// ---------------------------------------------------------------- the start gate
// Each GPU's part of a timed run is enqueued behind a gate kernel, which spins on a flag in
// pinned, mapped host memory; the host opens the gate once every GPU's part is enqueued. So
// the GPUs start together (each sees the same host-memory write), and the host's launch
// latency falls outside the timed region, as in the single-GPU baseline (bench_stage records
// its start behind the L2 flush kernel). NCCL calls are issued after the gate opens: one
// may wait for the work queued before it. The gate gives up after 2 s, so that a bug can
// never hang the GPU: the run then counts as failed.
constexpr const char* kGateTimeoutText = "the start gate was not opened within 2 s (the run's time is meaningless)";

class StartGate {
public:
    // Word 0: the flag; word 1 + i: set when GPU i of `gpus` gave up waiting.
    explicit StartGate(std::vector<TeamGpu>& gpus);
    ~StartGate();
    StartGate(const StartGate&) = delete;
    StartGate& operator=(const StartGate&) = delete;

    // Before a run is enqueued; the previous run's gate kernels have all exited (the host
    // waited for its stop events).
    void close() { store(0); }
    // On GPU i's stream, the current device being its GPU.
    void enqueue(std::size_t i, cudaStream_t stream);
    // Once every GPU's run is enqueued.
    void open() { store(1); }
    // After the run: whether GPU i's gate kernel gave up; clears it for the next run.
    bool timed_out(std::size_t i);

private:
    void store(int value);
    volatile int* words_ = nullptr;
    std::vector<int*> device_words_;
};
