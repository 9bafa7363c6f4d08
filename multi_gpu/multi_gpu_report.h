// reduce_multi_gpu's output: the header, the tables, and the CSV. Pure host code.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "results.h"

// The lines above every table, in the style of the single-GPU programs (common/report.h).
struct RunDescription {
    std::string program;   // "reduce_multi_gpu: ..."
    std::string nvls;      // "NVLink multicast (NVLS) off: NCCL_NVLS_ENABLE=0 ..."
    std::string mode;      // "one process drives 2 GPUs (ncclCommInitAll)", or the ranks
    std::string gpus;      // "2 x NVIDIA H100 80GB HBM3 on host h"
    std::string device;    // rank 0's GPU in full: SMs, L2, memory
    std::string peak;      // "3352 GB/s per GPU theoretical (...); 6704 GB/s for the 2"
    std::string software;  // "CUDA runtime 13.0, driver supports CUDA 13.0; NCCL 2.28.9"
    std::string problem;   // "n = ... float values = 34.4 GB, seed 2026; collective allreduce"
    std::string method;    // how each run is timed
};
void print_run_header(std::ostream& out, const RunDescription& run);

// "2 x NVIDIA H100 80GB HBM3 on host a; 2 x ... on host b", grouping equal GPUs per host.
std::string gpus_text(const std::vector<RankInfo>& members);
// The GPUs' theoretical peaks added up; nullopt when one of them is unknown.
std::optional<double> sum_of_peaks(const std::vector<RankInfo>& members);

// The per-GPU table, the aggregate, the single-GPU baseline and the scaling.
void print_reduction(std::ostream& out, const ReductionResult& result, const BaselineResult& baseline);
// The element-wise all-reduce: time, algbw, busbw, the link peak.
void print_allreduce(std::ostream& out, const AllReduceResult& result);
// What a rank other than 0 prints about its own shard (rank 0 prints the table).
std::string rank_summary_line(const ReductionResult& result, int rank);

// One row per measurement: the single-GPU baseline, each GPU, the aggregate, the all-reduce.
// Columns a measurement does not have are empty. `nccl_proto` names the NCCL protocol the
// collectives ran with (nccl_protocol_setting(): NCCL_PROTO, or "default"), so that rows of
// runs with different protocols can share one file; the reduction's rows also say whether
// the gate opened after every flush (--gate-after-flush).
const std::vector<std::string>& multi_gpu_csv_columns();
void write_multi_gpu_csv(std::ostream& out, const ReductionResult* reduction, const BaselineResult* baseline,
                         const AllReduceResult* allreduce, const std::string& nccl_proto, bool with_header = true);
