// Timing with CUDA events: warm-ups, many timed runs, L2 flushed before each, every result checked.
#pragma once

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "cuda_check.h"
#include "device_buffer.h"
#include "stats.h"
#include "verify.h"

// An H100 keeps 50 MiB in L2. Without a flush, a run over an input that fits there reads
// it from the cache the previous run left behind, and GB/s measures L2, not DRAM. Reading
// a buffer twice the size of L2 before each run evicts the input. (Reading, not memset:
// a write would leave dirty lines whose write-back would then land inside the timed run.)
class L2Flusher {
public:
    explicit L2Flusher(std::size_t l2_bytes);
    static std::size_t bytes_for(std::size_t l2_bytes);  // what the constructor allocates
    void flush(cudaStream_t stream);
    std::size_t bytes() const { return buffer_.bytes(); }

private:
    DeviceBuffer<int4> buffer_;
    DeviceBuffer<int> sink_;
};

class CudaEvent {
public:
    CudaEvent() { CUDA_CHECK(cudaEventCreate(&event_)); }
    ~CudaEvent() { cudaEventDestroy(event_); }
    CudaEvent(const CudaEvent&) = delete;
    CudaEvent& operator=(const CudaEvent&) = delete;
    operator cudaEvent_t() const { return event_; }

private:
    cudaEvent_t event_{};
};

class CudaStream {
public:
    CudaStream() { CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
    ~CudaStream() { cudaStreamDestroy(stream_); }
    CudaStream(const CudaStream&) = delete;
    CudaStream& operator=(const CudaStream&) = delete;
    operator cudaStream_t() const { return stream_; }

private:
    cudaStream_t stream_{};
};

struct TimedRuns {
    std::vector<double> ms;      // the timed runs only
    int checked = 0;             // every run: the first, the warm-ups, the timed ones
    int failed = 0;
    std::string first_failure;   // empty when every run was exact
    std::string first_detail;    // the first run's verdict ("exact", "within the rounding bound ...")
    double first_value = 0;      // the first run's result
    std::set<std::uint64_t> results;  // the distinct bit patterns of every run's result
};

// One run's verdict into the runs' tally (the first run's detail and value are kept).
inline void add_check(TimedRuns& runs, const SumCheck& verdict) {
    if (runs.checked == 0) {
        runs.first_detail = verdict.detail;
        runs.first_value = verdict.value;
    }
    runs.results.insert(verdict.bits);
    ++runs.checked;
    if (!verdict.ok && runs.failed++ == 0) runs.first_failure = verdict.detail;
}

// A result row's timing and check fields from its runs: runs, median, min and max (ms),
// GB/s = r.bytes / median time, % of r.peak_gbps, and the run counts. Serves the stages'
// Record (common/report.h) and reduce_ops' OpRecord (ops/ops_report.h) alike.
template <typename Row>
void set_timing_fields(Row& r, const TimedRuns& runs) {
    const TimingStats stats = summarize(runs.ms);
    r.runs = stats.runs;
    r.median_ms = stats.median;
    r.min_ms = stats.min;
    r.max_ms = stats.max;
    r.gbps = stats.median > 0 ? r.bytes / (stats.median * 1e-3) / 1e9 : 0;
    if (r.peak_gbps) r.pct_peak = 100.0 * r.gbps / *r.peak_gbps;
    r.checked_runs = runs.checked;
    r.failed_runs = runs.failed;
    r.verified = runs.failed == 0;
}

// Runs `run` 1 + warmup + iters times. Before each: `prepare` (e.g. poison the output),
// then the L2 flush, outside the timed region. Around each: two events, so the time is
// the GPU's, launch to last kernel. After each: `check`. The first run is the correctness
// check before any timing; only the last `iters` are timed.
template <typename Prepare, typename Run, typename Check>
TimedRuns time_runs(const std::string& label, int warmup, int iters, L2Flusher& flusher, cudaStream_t stream,
                    Prepare&& prepare, Run&& run, Check&& check) {
    TimedRuns result;
    CudaEvent start, stop;
    nvtxRangePushA(label.c_str());  // names this kernel's runs on an Nsight Systems timeline
    for (int i = 0; i < 1 + warmup + iters; ++i) {
        prepare();
        flusher.flush(stream);
        CUDA_CHECK(cudaEventRecord(start, stream));
        run();
        CUDA_CHECK(cudaEventRecord(stop, stream));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        add_check(result, check());
        if (i >= 1 + warmup) result.ms.push_back(ms);
    }
    nvtxRangePop();
    return result;
}

// The back-to-back method (--timing back-to-back): 1 checked run, `warmup` checked runs, then
// `batches` batches of `batch` launches with nothing between them and one event pair over
// each batch; each batch gives one time, its duration / `batch`. No L2 flush: an input
// that fits the L2 stays there, and a launch may overlap the previous one's tail, as in
// most published figures. Before each batch `prepare` (e.g. poison the output), outside
// the events; after it `check`, which sees the batch's last launch: a launcher that writes
// nothing fails.
template <typename Prepare, typename Run, typename Check>
TimedRuns time_back_to_back(const std::string& label, int warmup, int batches, int batch, cudaStream_t stream,
                            Prepare&& prepare, Run&& run, Check&& check) {
    TimedRuns result;
    CudaEvent start, stop;
    nvtxRangePushA(label.c_str());
    for (int i = 0; i < 1 + warmup; ++i) {  // the correctness check before any timing, then the warm-ups
        prepare();
        run();
        add_check(result, check());
    }
    for (int b = 0; b < batches; ++b) {
        prepare();
        CUDA_CHECK(cudaEventRecord(start, stream));
        for (int r = 0; r < batch; ++r) run();
        CUDA_CHECK(cudaEventRecord(stop, stream));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        add_check(result, check());
        result.ms.push_back(ms / batch);
    }
    nvtxRangePop();
    return result;
}

