// What a multi-GPU run measured, as plain host data: the core (reduction.cu, allreduce.cu) fills it, the
// report prints it, and with one process per GPU the ranks exchange it (pack/unpack).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "launch.h"
#include "options.h"
#include "shards.h"
#include "stats.h"

// Who one rank of the job is. Every process learns every rank's at start-up.
struct RankInfo {
    int rank = 0;
    int device = 0;  // its CUDA ordinal in the process that drives it
    std::string device_name;
    std::string host;
    std::optional<double> peak_gbps;  // its theoretical DRAM bandwidth
};

// One GPU's share of the timed runs of the reduction.
struct GpuRuns {
    RankInfo gpu;
    Shard shard;
    // Per timed run, from this GPU's own events (events of two GPUs cannot be compared):
    std::vector<double> local_ms;       // start -> its shard's sum is done
    std::vector<double> collective_ms;  // -> the collective is done: includes waiting for the slowest GPU
    std::vector<double> total_ms;       // start -> the collective is done
    int checked = 0;  // results checked on this GPU: every run (all-reduce), or rank 0's only (reduce)
    int failed = 0;
    std::string first_failure;
};

struct ReductionResult {
    std::size_t n = 0;
    ValueType type = ValueType::Float32;
    Collective collective = Collective::AllReduce;
    bool gate_after_flush = false;  // the start gate opened only once every GPU's flush ended
    int warmup = 0, iters = 0;
    std::vector<GpuRuns> gpus;  // every rank of the job, in rank order
    double value = 0;           // rank 0's first result
    long long expected = 0;     // the exact sum
    // finish_reduction() fills the rest from `gpus`.
    std::vector<double> run_ms;  // per timed run: the largest total over the GPUs
    TimingStats run;
    int checked = 0, failed = 0;
    std::string check;  // "exact", or the first failure
    // Run 0: the G partials (each GPU's sum of its shard, before the collective) against the
    // exact sum, and the collective's result against their sum.
    bool partials_ok = true;
    std::string partials_check;  // what was found; "" when not checked
    bool verified() const { return checked > 0 && failed == 0 && partials_ok; }
};

// The run's time is the slowest GPU's: per timed run the largest total over the GPUs, then
// the median of those. Also sums the checks of every GPU.
void finish_reduction(ReductionResult& result);

// reduce7 on one GPU over the whole input, timed the same way: the yardstick for scaling.
struct BaselineResult {
    bool ran = false;
    std::string why_not;  // when it did not run
    int device = 0;
    std::string device_name;
    int runs = 0;
    double median_ms = 0, min_ms = 0, max_ms = 0;
    double gbps = 0;
    std::optional<double> pct_peak;
    std::optional<double> peak_gbps;  // that GPU's
    int checked = 0, failed = 0;
    std::string check;
};

// The NVLink bandwidth one GPU can send in one direction.
struct LinkPeak {
    std::optional<double> gbps;
    std::string source;  // "18 active NVLink 4 links x 25 GB/s (NVML, ...)", or why unknown
};

// The element-wise all-reduce of a float vector.
struct AllReduceResult {
    bool ran = false;
    std::string why_not;
    int gpus = 0;
    std::size_t elements = 0;  // floats per GPU
    std::size_t bytes = 0;     // S: one GPU's vector
    std::vector<double> run_ms;  // per timed run: the slowest GPU's time
    TimingStats run;
    double algbw_gbps = 0, busbw_gbps = 0;
    std::size_t checked_elements = 0;  // over every GPU
    unsigned long long mismatches = 0;
    std::string check;
    int gate_timeouts = 0;  // timed runs whose start gate gave up (start_gate.cu), over every GPU
    LinkPeak link;
    std::string peer_access;  // "GPU 0 <-> GPU 1: peer access yes", when one process sees them
    // A reference for the link (one process only): every GPU copies S bytes to the next GPU
    // of the ring with cudaMemcpyPeerAsync while receiving S from the previous, all at once.
    // The copy engines move the bytes with no reduction and no protocol of NCCL's: what the
    // link delivers per direction to them. Not a bound on NCCL, which moves data with SM
    // loads and stores. Measured before the all-reduce, on the freshly filled vectors.
    std::optional<TimingStats> peer_copy;
    double peer_copy_gbps = 0;  // S / median time, per GPU and direction
    std::string peer_copy_why_not;               // when it was not measured (one process)
    std::size_t peer_copy_checked = 0;           // received elements compared, over every GPU
    unsigned long long peer_copy_mismatches = 0;  // of those, not the sender's value
    int peer_copy_gate_timeouts = 0;
    bool peer_copy_verified() const {
        return peer_copy_checked > 0 && peer_copy_mismatches == 0 && peer_copy_gate_timeouts == 0;
    }
    bool across_machines = false;
    bool verified() const { return checked_elements > 0 && mismatches == 0 && gate_timeouts == 0; }
};

// ---------------------------------------------------------------- the ranks' exchange
// With one process per GPU, every rank learns the others' GpuRuns through one ncclAllGather
// of bytes: each rank packs its own into the same fixed size (strings cut to fit). A RankInfo
// travels as GpuRuns with no runs (iters = 0).
std::size_t packed_gpu_runs_bytes(int iters);
std::string pack_gpu_runs(const GpuRuns& runs, int iters);
GpuRuns unpack_gpu_runs(const char* bytes, int iters);
