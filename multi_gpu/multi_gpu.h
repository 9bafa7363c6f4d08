// The core of reduce_multi_gpu: one sum across G GPUs, and the element-wise all-reduce of a
// vector. main.cu explains the pattern; this is how it is done, for main.cu and the tests.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device_buffer.h"
#include "device_info.h"
#include "input.h"
#include "launch.h"
#include "memory_plan.h"
#include "nccl_check.h"
#include "results.h"
#include "stage.h"
#include "timing.h"

// ---------------------------------------------------------------- the GPUs and their communicators

// One GPU this process drives, and its place in the job.
struct TeamGpu {
    int device = 0;  // its CUDA ordinal in this process
    int rank = 0;    // its NCCL rank: which shard it sums
    DeviceInfo info;
    ncclComm_t comm = nullptr;
    std::unique_ptr<CudaStream> stream;
    std::unique_ptr<L2Flusher> flusher;
    DeviceBuffer<int> barrier_value;              // the one int the barrier all-reduces
    std::unique_ptr<CudaEvent> barrier_done;
};

// Thrown when the other ranks do not all join the communicator in time. A thread is then
// still waiting inside ncclCommInitRank, which cannot be called off: the program reports
// the error and ends at once (main.cu).
struct InitTimeout : NcclError {
    using NcclError::NcclError;
};

// The G ranks of one job as this process sees them: all G GPUs (one process drives them all)
// or just its own (one process per GPU), each with its NCCL communicator and stream.
class Team {
public:
    // One process driving GPUs 0 .. gpus-1: one ncclCommInitAll creates the G communicators.
    static std::unique_ptr<Team> one_process(int gpus, std::chrono::seconds timeout);
    // This process is rank layout.rank of layout.ranks, on GPU `device`; rank 0 creates the
    // NCCL id and leaves it in `id_file` for the others (launch.h); then ncclCommInitRank.
    static std::unique_ptr<Team> one_rank(const ProcessLayout& layout, int device, const std::string& id_file,
                                          const std::string& job_tag, std::chrono::seconds timeout);
    ~Team();
    Team(const Team&) = delete;
    Team& operator=(const Team&) = delete;

    int ranks() const { return static_cast<int>(members_.size()); }
    bool one_process_per_gpu() const { return one_process_per_gpu_; }
    std::vector<TeamGpu>& gpus() { return gpus_; }  // the GPUs this process drives
    const std::vector<RankInfo>& members() const { return members_; }  // every rank of the job
    TeamGpu* rank0();  // nullptr when another process drives rank 0
    std::chrono::seconds timeout() const { return timeout_; }

    // Calls call(i, gpus()[i]) for each GPU this process drives, inside one NCCL group. One
    // thread that drives several GPUs must group their calls: NCCL then launches them all
    // together, where one call at a time would wait forever for peers not yet called.
    template <typename Call>
    void group(Call&& call) {
        NCCL_CHECK(ncclGroupStart());
        for (std::size_t i = 0; i < gpus_.size(); ++i) {
            CUDA_CHECK(cudaSetDevice(gpus_[i].device));
            call(i, gpus_[i]);
        }
        NCCL_CHECK(ncclGroupEnd());
    }
    // Waits until each GPU this process drives has reached its event (events[i] on gpus()[i]).
    // Polls, so that an NCCL error (a rank that died) or `timeout()` ends the wait with an
    // NcclError instead of a hang. `spin`: poll without sleeping, where the host's next step
    // is timed (the barrier); otherwise it sleeps 50 us between polls.
    void wait(const std::vector<cudaEvent_t>& events, const std::string& what, bool spin = false);
    // Returns when every GPU of the job has reached this point: an all-reduce of one int,
    // waited for by spinning. Needed only with one process per GPU: one process opens its
    // GPUs' start gate itself (start_gate.cu).
    void barrier();
    // Every rank's `mine`, in rank order, all of one size: one ncclAllGather of bytes. For
    // one process per GPU only (one process has the others' data already).
    std::vector<std::string> all_gather(const std::string& mine);
    // Ends the communicators normally. Without it the destructor aborts them (ncclCommAbort:
    // an error path, where a peer may be gone and a normal end could wait for it forever).
    void close();

private:
    Team() = default;
    void add_gpu(int device, int rank);
    std::vector<TeamGpu> gpus_;
    std::vector<RankInfo> members_;
    bool one_process_per_gpu_ = false;
    std::chrono::seconds timeout_{120};
    bool closed_ = false;
};

// "NCCL 2.28.9" (the library loaded, which may differ from the header built against)
std::string nccl_version_text();

// ---------------------------------------------------------------- memory
// NCCL allocates its own buffers on each GPU when the communicator is created (per peer and
// channel, a few MB each). The plans reserve this much for them.
constexpr std::size_t kNcclMemoryBytes = std::size_t{512} << 20;

// reduce7 as the single-GPU programs run it by default: 256 threads, and its labelled
// variants at their defaults for the type (16-byte loads, the finish that gives the same
// bits every run; reduce7/kernel.cu declares both).
RunConfig reduce7_config(ValueType type);

// What one GPU needs for its shard, and for the all-reduce's vector, NCCL's buffers and the
// L2 flush buffer included.
MemoryPlan reduction_memory_plan(const Shard& shard, ValueType type, std::size_t l2_bytes);
MemoryPlan allreduce_memory_plan(std::size_t elements, std::size_t l2_bytes);

// Before anything is allocated: each GPU this process will drive (devices[i] as ranks[i] of
// `gpus`) must fit the plans of the measurements `options` asks for; else TooLargeError with
// the one line that names the bytes needed and free.
void require_memory_before_start(const std::vector<int>& devices, const std::vector<int>& ranks, int gpus,
                                 const MultiGpuOptions& options);

// ---------------------------------------------------------------- the two measurements

struct ReductionRequest {
    std::size_t n = 0;
    std::uint64_t seed = 2026;
    Collective collective = Collective::AllReduce;
    int warmup = 3;
    int iters = 20;
    // Fault injection, for the tests only: this rank sums its shard without its last
    // element, so the total misses one value and every check must fail. -1: none.
    int drop_last_element_of_rank = -1;
    // Fault injection, for the tests only: no collective at all, so each GPU keeps its own
    // partial sum and every check of the total must fail.
    bool skip_collective = false;
    // The host waits until every GPU's L2 flush has finished before it opens the gate. Without
    // it (--gate-at-once), a GPU whose flush is still running when the gate opens starts late:
    // on two H100s GPU 1 started about 20 us after GPU 0 (docs/09-multi-gpu.md, the A/B).
    bool gate_after_flush = true;
};

// The sum of the n-element input (common/input.h, integer data) across the team: each GPU
// generates and reduces its shard with reduce7, then one collective of one value. Every
// run's result is checked against the host's exact sum (`expected`, computed here when not
// given); in run 0 also each GPU's partial (its shard's sum, before the collective): they
// must add up to the exact sum, and the collective's result must equal their sum. Every
// rank returns the whole job's result.
//
// Timing: every timed run is enqueued whole on every GPU this process drives (L2 flush,
// poison, a gate kernel, start event, reduce7, the collective, stop event) behind a gate
// kernel that spins on a flag in pinned host memory; once every GPU's flush has finished
// (gate_after_flush) the host opens the gate, so all the GPUs start within the time they take
// to see one host-memory write (about a microsecond), and launch latency is outside the timed region, as in the single-GPU
// baseline (common/benchmark.cu records its start behind the L2 flush). With one process
// per GPU each process opens its own gate right after a barrier: the skew between processes
// (the barrier's return on each) remains.
template <typename T>
ReductionResult reduce_across_gpus(Team& team, const ReductionRequest& request,
                                   std::shared_future<ExpectedSum> expected = {});

// reduce7 on rank 0's GPU over the whole input, timed as every single-GPU program times it
// (common/benchmark.h): the yardstick of the scaling. Not run, with the reason, where the
// whole input does not fit on that GPU or another process drives it.
template <typename T>
BaselineResult single_gpu_baseline(Team& team, const ReductionRequest& request,
                                   std::shared_future<ExpectedSum> expected = {});

struct AllReduceRequest {
    std::size_t elements = std::size_t{1} << 28;
    int warmup = 3;
    int iters = 20;
    std::optional<double> link_peak_gbps;
};

// ncclAllReduce(sum) of a float vector on every GPU, in place: checked once, then timed.
AllReduceResult allreduce_vector(Team& team, const AllReduceRequest& request);

// Element i of rank r's vector before the all-reduce: a small positive integer that depends on
// both, so the sum over any G GPUs is exact in float (at most 61 G) and a contribution lost or
// added twice changes every element it touches.
#if defined(__CUDACC__)
__host__ __device__
#endif
inline float allreduce_test_value(int rank, std::size_t i) {
    return static_cast<float>(1 + (i % 251 + 17 * static_cast<std::size_t>(rank)) % 61);
}
