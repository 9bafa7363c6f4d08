// How reduce_multi_gpu is started: its command line, which rank a process is, and how the
// ranks of one job find each other. Pure host code (no CUDA, no NCCL), tested without a GPU.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "options.h"  // common/: ValueType, UsageError, parse_count, kMaxElements

// ---------------------------------------------------------------- the command line

// How the G partial sums become one value (main.cu says why all-reduce is the default).
enum class Collective {
    AllReduce,  // every GPU gets the sum
    Reduce,     // only rank 0 gets it
};
std::string collective_name(Collective collective);  // "allreduce", "reduce"

// Which of the two measurements a run makes.
enum class Measure {
    Both,
    Reduction,  // the sum of n values across the GPUs (and the single-GPU baseline)
    AllReduce,  // the element-wise all-reduce of a float vector (the gradient case)
};

struct MultiGpuOptions {
    std::size_t n = std::size_t{1} << 30;
    ValueType type = ValueType::Float32;
    std::optional<int> gpus;  // one process: GPUs 0 .. gpus-1; unset: every GPU present
    int iters = 20;
    int warmup = 3;
    std::uint64_t seed = 2026;
    Collective collective = Collective::AllReduce;
    std::size_t vector_elements = std::size_t{1} << 28;  // floats per GPU in the all-reduce: 1 GiB
    Measure measure = Measure::Both;
    bool baseline = true;                 // also time reduce7 on one GPU over the whole input
    bool gate_after_flush = true;         // open the start gate only once every GPU's L2 flush is done
    std::optional<double> link_peak_gbps;  // overrides the NVLink peak NVML reports
    bool csv = false;
    bool help = false;
    bool count_gpus = false;  // print how many GPUs this process sees, and exit (scripts)
    // One process per GPU
    std::optional<int> rank, ranks;  // --rank R --ranks N; else from the launcher's environment
    std::string id_file;             // where rank 0 leaves the NCCL id for the others
    int timeout_s = 120;             // how long a rank waits for the others
};

// Throws UsageError (one line, for stderr and exit status 2) for any bad argument.
MultiGpuOptions parse_multi_gpu_options(const std::vector<std::string>& args);
std::string multi_gpu_usage_text();

// ---------------------------------------------------------------- which rank this process is

// Reads an environment variable: nullptr when unset. Tests pass a map instead of getenv.
using Environment = std::function<const char*(const char* name)>;
Environment process_environment();  // getenv

struct ProcessLayout {
    bool one_process_per_gpu = false;  // false: this process drives every GPU
    int rank = 0;                      // this process's rank, 0 .. ranks-1
    int ranks = 1;                     // processes in the job (= GPUs)
    std::optional<int> local_rank;     // its index among the job's processes on this machine
    std::string source;                // where rank and size came from, for the header
};

// --rank/--ranks first; else the variables a launcher sets: OMPI_COMM_WORLD_RANK/SIZE
// (Open MPI's mpirun), PMI_RANK/PMI_SIZE (MPICH's Hydra), SLURM_PROCID with
// SLURM_STEP_NUM_TASKS or SLURM_NTASKS (srun); else one process for all GPUs. A launcher
// that starts a single process means the one-process mode. Throws UsageError for
// inconsistent input: a rank outside [0, ranks), --id-file missing or without ranks, --gpus
// with ranks.
ProcessLayout process_layout(const MultiGpuOptions& options, const Environment& env);

// The GPU a rank uses among the `visible` this process sees: its local rank (the launcher's
// OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID or MPI_LOCALRANKID) when known, so that the
// ranks of each machine take its GPUs 0, 1, ...; else the global rank. Modulo `visible`.
int local_gpu_of(const ProcessLayout& layout, int visible);

// ---------------------------------------------------------------- the NCCL id through a file
// Every rank of an NCCL communicator must be given the same ncclUniqueId, which rank 0
// creates. MPI programs broadcast it with MPI_Bcast; this program links no MPI, so rank 0
// writes it to a file every rank can read (a shared filesystem across machines), and the
// others poll for it. The id is 128 bytes; the file holds them as hex, with the job's size
// and a job tag, so that a rank never takes a file left by another job for its own.
//
// A file left by a crashed run of the same job (same size, same tag, or none, by hand)
// would pass those checks, and a rank that read it would wait in ncclCommInitRank for a
// rank 0 that is gone. So each other rank first asks: it leaves a fresh random ticket in
// PATH.want.RANK, rank 0 copies every ticket it finds into the id file, and a rank takes
// only a file that holds its own ticket. The ticket did not exist before this rank
// started, so no file written before then can hold it.

struct BootstrapError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The launcher's name for this job (Open MPI's PMIX_NAMESPACE or OMPI_MCA_ess_base_jobid,
// Slurm's SLURM_JOB_ID.SLURM_STEP_ID), the same in every rank; "" when started by hand.
std::string launch_job_tag(const Environment& env);

// A rank's request for the id: its rank and a fresh random ticket (32 hex digits).
struct IdRequest {
    int rank = 0;
    std::string ticket;
};
// Every rank but 0: write PATH.want.RANK with a new ticket (atomically), and return it.
IdRequest request_unique_id(const std::string& path, int rank);
// Rank 0: the tickets of the requests present now, by rank (1 ... ranks-1).
std::map<int, std::string> read_id_requests(const std::string& path, int ranks);
// Rank 0: write the id file with these tickets, atomically (a temporary file in the same
// folder, then rename(), so a reader sees no file or the whole file, never half of one).
void publish_unique_id(const std::string& path, const std::string& id_bytes, int ranks, const std::string& job_tag,
                       const std::map<int, std::string>& tickets);
// Rank 0, in a thread of its own while ncclCommInitRank waits for the others: publish the id
// at once, then again whenever the requests change (every 50 ms), until *stop.
void answer_id_requests(const std::string& path, const std::string& id_bytes, int ranks, const std::string& job_tag,
                        const std::atomic<bool>& stop);
// Every other rank: poll for an id file for this job that holds `request`'s ticket, or throw
// BootstrapError after `timeout` with what was found.
std::string wait_for_unique_id(const std::string& path, int ranks, const std::string& job_tag,
                               const IdRequest& request, std::chrono::milliseconds timeout);
// A rank that has its id removes its request; rank 0, once every rank has joined the
// communicator (so every rank has read it), removes the id file.
void withdraw_id_request(const std::string& path, const IdRequest& request);
void remove_unique_id(const std::string& path);

// ---------------------------------------------------------------- NVLink multicast off
// NVLink SHARP (NVLS) lets the NVSwitches reduce in the switch (NVLink multicast): NCCL
// would use it for large all-reduces on NVSwitch systems. On the shared lent machines it must
// stay off (it can put the host's GPUs out of service), so the figures here are NCCL over
// NVLink point to point, without NVLS.
// Sets NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1 and NVSHMEM_DISABLE_NVLS=1,
// overwriting what the caller set. Must run before the first NCCL call, which reads them.
void disable_nvlink_multicast();
// "NVLink multicast (NVLS) off: NCCL_NVLS_ENABLE=0 ..." from the environment as it is now.
std::string nvlink_multicast_line();
// The NCCL protocol this process runs with: NCCL_PROTO's value ("LL", "LL128", "Simple", or a
// list NCCL accepts), or "default" when it is unset, and NCCL picks one per call by size.
std::string nccl_protocol_setting();
