#include "multi_gpu.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <set>
#include <thread>

#include "bandwidth.h"
#include "benchmark.h"
#include "device_input.h"
#include "nvlink.h"
#include "report.h"
#include "stages.h"
#include "stats.h"

extern const Stage reduce7_stage;  // each GPU sums its shard with reduce7 (reduce7/kernel.cu)

namespace {

// Before each run the result is overwritten with bytes 0x7F, a value no sum of these inputs
// can take, so a GPU that writes nothing cannot pass the check (as common/benchmark.cu does).
constexpr int kPoisonByte = 0x7F;

template <typename T> ncclDataType_t nccl_type();
template <> ncclDataType_t nccl_type<int>() { return ncclInt32; }
template <> ncclDataType_t nccl_type<float>() { return ncclFloat32; }
template <> ncclDataType_t nccl_type<double>() { return ncclFloat64; }

std::string host_name() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return "host";
    return name;
}

float elapsed_ms(cudaEvent_t from, cudaEvent_t to) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, from, to));
    return ms;
}

// ---------------------------------------------------------------- the start gate
// Each GPU's part of a timed run is enqueued behind a gate kernel, which spins on a flag in
// pinned, mapped host memory; the host opens the gate once every GPU's part is enqueued. So
// the GPUs start together (each sees the same host-memory write), and the host's launch
// latency falls outside the timed region, as in the single-GPU baseline (bench_stage records
// its start behind the L2 flush kernel). NCCL calls are issued after the gate opens: one
// may wait for the work queued before it.

// The gate gives up after this long, so that a bug can never hang the GPU: the run then
// counts as failed.
constexpr unsigned long long kGateLimitNs = 2'000'000'000ull;
constexpr const char* kGateTimeoutText = "the start gate was not opened within 2 s (the run's time is meaningless)";

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

class StartGate {
public:
    // Word 0: the flag; word 1 + i: set when GPU i of `gpus` gave up waiting.
    explicit StartGate(std::vector<TeamGpu>& gpus) {
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
    ~StartGate() { cudaFreeHost(const_cast<int*>(words_)); }
    StartGate(const StartGate&) = delete;
    StartGate& operator=(const StartGate&) = delete;

    // Before a run is enqueued; the previous run's gate kernels have all exited (the host
    // waited for its stop events).
    void close() { store(0); }
    // On GPU i's stream, the current device being its GPU.
    void enqueue(std::size_t i, cudaStream_t stream) {
        wait_at_gate<<<1, 1, 0, stream>>>(device_words_[i], device_words_[i] + 1 + i, kGateLimitNs);
        CUDA_CHECK_LAUNCH();
    }
    // Once every GPU's run is enqueued.
    void open() { store(1); }
    // After the run: whether GPU i's gate kernel gave up; clears it for the next run.
    bool timed_out(std::size_t i) {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        const bool gave_up = words_[1 + i] != 0;
        words_[1 + i] = 0;
        return gave_up;
    }

private:
    void store(int value) {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        words_[0] = value;
        std::atomic_thread_fence(std::memory_order_seq_cst);
    }
    volatile int* words_ = nullptr;
    std::vector<int*> device_words_;
};

// "n = 8,589,934,592 (2^33) float values"
std::string values_text(std::size_t n, ValueType type) {
    const std::string power = count_text(n);
    return "n = " + with_thousands(n) + (power.find('^') != std::string::npos ? " (" + power + ")" : "") + " " +
           std::string(type_name(type)) + " values";
}

}  // namespace

// ---------------------------------------------------------------- the GPUs and their communicators

std::string nccl_version_text() {
    int version = 0;
    NCCL_CHECK(ncclGetVersion(&version));
    // NCCL_VERSION(X, Y, Z) = X * 10000 + Y * 100 + Z since 2.9
    return "NCCL " + std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
           std::to_string(version % 100);
}

// Opens the device and gives it what every run needs; the caller has checked its memory.
void Team::add_gpu(int device, int rank) {
    TeamGpu gpu;
    gpu.device = device;
    gpu.rank = rank;
    gpu.info = open_device(device, std::nullopt);  // also makes it the current device
    gpu.stream = std::make_unique<CudaStream>();
    gpu.flusher = std::make_unique<L2Flusher>(gpu.info.l2_bytes);
    gpu.barrier_value = DeviceBuffer<int>(1);
    // 0 + 0 stays 0, run after run. On the stream the barrier's all-reduce runs on.
    CUDA_CHECK(cudaMemsetAsync(gpu.barrier_value.get(), 0, sizeof(int), *gpu.stream));
    gpu.barrier_done = std::make_unique<CudaEvent>();
    gpus_.push_back(std::move(gpu));
}

std::unique_ptr<Team> Team::one_process(int gpus, std::chrono::seconds timeout) {
    disable_nvlink_multicast();  // before the first NCCL call reads the environment
    std::unique_ptr<Team> team(new Team);
    team->timeout_ = timeout;
    std::vector<int> devices;
    for (int device = 0; device < gpus; ++device) {
        team->add_gpu(device, device);
        devices.push_back(device);
        const DeviceInfo& info = team->gpus_.back().info;
        team->members_.push_back({device, device, info.name, host_name(), info.peak.gbps});
    }
    std::vector<ncclComm_t> comms(static_cast<std::size_t>(gpus));
    NCCL_CHECK(ncclCommInitAll(comms.data(), gpus, devices.data()));
    for (int g = 0; g < gpus; ++g) team->gpus_[static_cast<std::size_t>(g)].comm = comms[static_cast<std::size_t>(g)];
    return team;
}

std::unique_ptr<Team> Team::one_rank(const ProcessLayout& layout, int device, const std::string& id_file,
                                     const std::string& job_tag, std::chrono::seconds timeout) {
    disable_nvlink_multicast();
    std::unique_ptr<Team> team(new Team);
    team->timeout_ = timeout;
    team->one_process_per_gpu_ = true;
    team->add_gpu(device, layout.rank);

    // Rank 0 creates the id (it also starts NCCL's bootstrap listener on this host) and
    // answers the others' requests for it through the file, in a thread that runs until the
    // communicator is complete; the others ask, and take the id that answers them (launch.h).
    ncclUniqueId id{};
    struct Answering {  // rank 0's answering thread, stopped and joined however one_rank ends
        std::atomic<bool> stop{false};
        std::thread thread;
        ~Answering() {
            stop = true;
            if (thread.joinable()) thread.join();
        }
    } answering;
    if (layout.rank == 0) {
        NCCL_CHECK(ncclGetUniqueId(&id));
        const std::string bytes(id.internal, sizeof id.internal);
        publish_unique_id(id_file, bytes, layout.ranks, job_tag, read_id_requests(id_file, layout.ranks));
        answering.thread = std::thread([&answering, id_file, bytes, ranks = layout.ranks, job_tag] {
            try {
                answer_id_requests(id_file, bytes, ranks, job_tag, answering.stop);
            } catch (const BootstrapError& e) {  // the file was published once: the ranks that asked already have it
                std::fprintf(stderr, "reduce_multi_gpu: rank 0 stopped answering requests for the NCCL id: %s\n", e.what());
            }
        });
    } else {
        const IdRequest request = request_unique_id(id_file, layout.rank);
        std::string bytes;
        try {
            bytes = wait_for_unique_id(id_file, layout.ranks, job_tag, request, timeout);
        } catch (...) {
            withdraw_id_request(id_file, request);
            throw;
        }
        withdraw_id_request(id_file, request);
        if (bytes.size() != sizeof id.internal) {
            throw BootstrapError(id_file + " holds a " + std::to_string(bytes.size()) + "-byte id; this NCCL's is " +
                                 std::to_string(sizeof id.internal) + " bytes: are all ranks the same build?");
        }
        std::memcpy(id.internal, bytes.data(), sizeof id.internal);
    }

    // ncclCommInitRank returns only when all the ranks have joined, and waits for ever for
    // a rank that never comes. It runs in a thread of its own so that this one can give up
    // after the timeout (then that thread is left behind: InitTimeout).
    struct Init {
        std::promise<ncclResult_t> done;
        ncclComm_t comm = nullptr;
        cudaError_t device_status = cudaSuccess;  // the thread's cudaSetDevice
    };
    auto init = std::make_shared<Init>();
    std::future<ncclResult_t> done = init->done.get_future();
    std::thread([init, device, id, ranks = layout.ranks, rank = layout.rank] {
        // The current device is per thread: the communicator's GPU.
        init->device_status = cudaSetDevice(device);
        if (init->device_status != cudaSuccess) {
            init->done.set_value(ncclUnhandledCudaError);
            return;
        }
        init->done.set_value(ncclCommInitRank(&init->comm, ranks, id, rank));
    }).detach();
    if (done.wait_for(timeout) != std::future_status::ready) {
        throw InitTimeout("the NCCL communicator of " + std::to_string(layout.ranks) + " ranks was not complete after " +
                          std::to_string(timeout.count()) + " s: are all " + std::to_string(layout.ranks) +
                          " ranks running, with the same --ranks and --id-file?");
    }
    const ncclResult_t init_status = done.get();
    cuda_check(init->device_status, "cudaSetDevice (in the thread that runs ncclCommInitRank)", __FILE__, __LINE__);
    nccl_check(init_status, "ncclCommInitRank", __FILE__, __LINE__);
    team->gpus_.front().comm = init->comm;
    // Every rank has joined, so every rank has read the id: the file has done its job.
    if (layout.rank == 0) {
        answering.stop = true;
        answering.thread.join();
        remove_unique_id(id_file);
    }

    // Every rank learns who the others are (GPU, host, peak) for the report.
    const TeamGpu& mine = team->gpus_.front();
    GpuRuns me;
    me.gpu = {layout.rank, device, mine.info.name, host_name(), mine.info.peak.gbps};
    for (const std::string& bytes : team->all_gather(pack_gpu_runs(me, 0))) {
        team->members_.push_back(unpack_gpu_runs(bytes.data(), 0).gpu);
    }
    return team;
}

Team::~Team() {
    for (TeamGpu& gpu : gpus_) {
        cudaSetDevice(gpu.device);
        if (gpu.comm && !closed_) ncclCommAbort(gpu.comm);  // no check: a destructor must not throw
        // Free each GPU's buffers, stream and events with that GPU current.
        gpu.barrier_done.reset();
        gpu.barrier_value = DeviceBuffer<int>();
        gpu.flusher.reset();
        gpu.stream.reset();
    }
}

void Team::close() {
    // ncclCommFinalize completes what is in flight and may wait for the peers: with several
    // communicators in one thread, all of them together, as one group.
    NCCL_CHECK(ncclGroupStart());
    for (TeamGpu& gpu : gpus_) NCCL_CHECK(ncclCommFinalize(gpu.comm));
    NCCL_CHECK(ncclGroupEnd());
    for (TeamGpu& gpu : gpus_) {
        CUDA_CHECK(cudaSetDevice(gpu.device));
        NCCL_CHECK(ncclCommDestroy(gpu.comm));
        gpu.comm = nullptr;
    }
    closed_ = true;
}

TeamGpu* Team::rank0() {
    for (TeamGpu& gpu : gpus_) {
        if (gpu.rank == 0) return &gpu;
    }
    return nullptr;
}

void Team::wait(const std::vector<cudaEvent_t>& events, const std::string& what, bool spin) {
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    for (std::size_t i = 0; i < events.size(); ++i) {
        for (;;) {
            const cudaError_t status = cudaEventQuery(events[i]);
            if (status == cudaSuccess) break;
            if (status != cudaErrorNotReady) cuda_check(status, "cudaEventQuery", __FILE__, __LINE__);
            if (cudaPeekAtLastError() == cudaErrorNotReady) cudaGetLastError();  // "not ready" is no error
            // A rank that died, or a network failure, shows up here; the GPU itself would
            // wait for its peers for ever.
            ncclResult_t async = ncclSuccess;
            NCCL_CHECK(ncclCommGetAsyncError(gpus_[i].comm, &async));
            if (async != ncclSuccess && async != ncclInProgress) {
                nccl_check(async, ("NCCL, during " + what + " (ncclCommGetAsyncError)").c_str(), __FILE__, __LINE__);
            }
            if (std::chrono::steady_clock::now() > deadline) {
                throw NcclError(what + " on GPU " + std::to_string(gpus_[i].device) + " (rank " +
                                std::to_string(gpus_[i].rank) + ") was not done after " +
                                std::to_string(timeout_.count()) + " s: is every rank still running?");
            }
            // The times come from CUDA events, and every timed run is enqueued whole before
            // this wait, so a late poll here lengthens no timed region; but after the barrier
            // the host opens its GPUs' start gate, and a sleeping poll would make one process
            // open its gate up to 50 us after another's: the barrier spins.
            if (!spin) std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
    }
}

void Team::barrier() {
    group([](std::size_t, TeamGpu& gpu) {
        NCCL_CHECK(ncclAllReduce(gpu.barrier_value.get(), gpu.barrier_value.get(), 1, ncclInt32, ncclSum, gpu.comm,
                                 *gpu.stream));
    });
    std::vector<cudaEvent_t> events;
    for (TeamGpu& gpu : gpus_) {
        CUDA_CHECK(cudaSetDevice(gpu.device));
        CUDA_CHECK(cudaEventRecord(*gpu.barrier_done, *gpu.stream));
        events.push_back(*gpu.barrier_done);
    }
    wait(events, "the barrier before a run", /*spin=*/true);
}

std::vector<std::string> Team::all_gather(const std::string& mine) {
    if (gpus_.size() != 1) throw std::logic_error("Team::all_gather is for one process per GPU");
    TeamGpu& gpu = gpus_.front();
    int count = 0;  // the job's size (at start-up, before members_ is filled)
    NCCL_CHECK(ncclCommCount(gpu.comm, &count));
    CUDA_CHECK(cudaSetDevice(gpu.device));
    const std::size_t bytes = std::max<std::size_t>(mine.size(), 1);
    DeviceBuffer<char> send(bytes), received(bytes * static_cast<std::size_t>(count));
    // On the communicator's stream: it does not wait for the legacy default stream
    // (cudaStreamNonBlocking), so a plain cudaMemcpy could still be in flight when NCCL reads.
    CUDA_CHECK(cudaMemcpyAsync(send.get(), mine.data(), mine.size(), cudaMemcpyHostToDevice, *gpu.stream));
    NCCL_CHECK(ncclAllGather(send.get(), received.get(), bytes, ncclChar, gpu.comm, *gpu.stream));
    CudaEvent done;
    CUDA_CHECK(cudaEventRecord(done, *gpu.stream));
    wait({done}, "ncclAllGather of the ranks' results");
    std::string all(received.bytes(), '\0');
    CUDA_CHECK(cudaMemcpy(all.data(), received.get(), all.size(), cudaMemcpyDeviceToHost));
    std::vector<std::string> each;
    for (int r = 0; r < count; ++r) each.push_back(all.substr(static_cast<std::size_t>(r) * bytes, mine.size()));
    return each;
}

// ---------------------------------------------------------------- memory

RunConfig reduce7_config(ValueType) {
    RunConfig config;  // reduce7's labelled variants at their defaults for the type: 16-byte loads, its finish
    config.block = reduce7_stage.default_block;
    return config;
}

MemoryPlan reduction_memory_plan(const Shard& shard, ValueType type, std::size_t l2_bytes) {
    MemoryPlan plan;
    plan.add("shard", shard.count * type_size(type));
    plan.add("workspace", reduce7_stage.workspace_bytes(shard.count, type_size(type), reduce7_config(type)));
    plan.add("L2 flush buffer", L2Flusher::bytes_for(l2_bytes));
    plan.add("NCCL buffers", kNcclMemoryBytes);
    return plan;
}

MemoryPlan allreduce_memory_plan(std::size_t elements, std::size_t l2_bytes) {
    MemoryPlan plan;
    plan.add("all-reduce vector", elements * sizeof(float));
    plan.add("L2 flush buffer", L2Flusher::bytes_for(l2_bytes));
    plan.add("NCCL buffers", kNcclMemoryBytes);
    return plan;
}

void require_memory_before_start(const std::vector<int>& devices, const std::vector<int>& ranks, int gpus,
                                 const MultiGpuOptions& options) {
    for (std::size_t i = 0; i < devices.size(); ++i) {
        CUDA_CHECK(cudaSetDevice(devices[i]));
        int l2 = 0;
        CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, devices[i]));
        const std::string gpu = "GPU " + std::to_string(devices[i]) + " (rank " + std::to_string(ranks[i]) + ")";
        if (options.measure != Measure::AllReduce) {
            const Shard shard = shard_of(options.n, ranks[i], gpus);
            require_device_memory(reduction_memory_plan(shard, options.type, static_cast<std::size_t>(l2)),
                                  gpu + ": its shard of " + values_text(options.n, options.type) + ", " +
                                      with_thousands(shard.count) + " values,");
        }
        if (options.measure != Measure::Reduction && gpus > 1) {
            require_device_memory(allreduce_memory_plan(options.vector_elements, static_cast<std::size_t>(l2)),
                                  gpu + ": the all-reduce of " + with_thousands(options.vector_elements) + " floats");
        }
    }
}

// ---------------------------------------------------------------- the reduction

namespace {

// One GPU's part of the reduction: its shard, generated where it is summed, and its events.
template <typename T>
struct ShardOnGpu {
    TeamGpu& gpu;
    Shard shard;
    DeviceBuffer<T> values;
    DeviceBuffer<unsigned char> workspace;
    DeviceBuffer<T> result;  // the shard's sum, then (in place) the collective's
    CudaEvent flushed, start, local_done, stop;
    GpuRuns runs;

    // Allocates on the current device, which must be gpu's.
    ShardOnGpu(TeamGpu& gpu_, const Shard& shard_, const RunConfig& config)
        : gpu(gpu_),
          shard(shard_),
          values(shard_.count),
          workspace(reduce7_stage.workspace_bytes(shard_.count, sizeof(T), config)),
          result(1) {}
    ~ShardOnGpu() { cudaSetDevice(gpu.device); }  // the members are freed after this, on their GPU
};

// Run 0's partials, in rank order: they must add up to the exact sum, and the collective's
// result (where this process has one) must equal their sum. Fills result.partials_*.
template <typename T>
void check_partials(const std::vector<T>& partials, std::optional<double> collective_value, const ExpectedSum& want,
                    ReductionResult& result) {
    long double sum = 0;
    for (T partial : partials) sum += static_cast<long double>(partial);
    const long double exact = static_cast<long double>(want.exact);
    const std::string g = std::to_string(partials.size());
    if (sum != exact) {
        result.partials_ok = false;
        result.partials_check = "FAIL: the " + g + " partials (each GPU's sum of its shard, run 0) add up to " +
                                fixed(static_cast<double>(sum), 0) + ", not the exact sum " + std::to_string(want.exact);
        return;
    }
    std::string text = "the " + g + " partials (each GPU's sum of its shard, run 0) add up to the exact sum";
    if (collective_value) {
        if (static_cast<long double>(*collective_value) != sum) {
            result.partials_ok = false;
            result.partials_check = "FAIL: " + text + ", but the collective's result " + fixed(*collective_value, 0) +
                                    " is not their sum: did the collective combine them?";
            return;
        }
        text += ", and the collective's result equals it";
    } else {
        text += "; the collective's result is on rank 0's process";
    }
    if (partials.size() > 1) {
        for (std::size_t r = 0; r < partials.size(); ++r) {
            if (static_cast<long double>(partials[r]) == exact) {
                text += "; inconclusive for this input: rank " + std::to_string(r) +
                        "'s partial alone equals the total (the other shards sum to 0), so on that GPU a collective "
                        "that did nothing would pass";
                break;
            }
        }
    }
    result.partials_check = text;
}

}  // namespace

template <typename T>
ReductionResult reduce_across_gpus(Team& team, const ReductionRequest& request, std::shared_future<ExpectedSum> expected) {
    const std::size_t n = request.n;
    if (!expected.valid()) expected = std::async(std::launch::async, expected_sum<T>, n, request.seed, InputData::Integers);
    const RunConfig config = reduce7_config(value_type_of<T>());
    const SumFn<T> sum = reduce7_stage.sum<T>();

    // Each GPU generates its own shard: no input crosses a link, and the values are the
    // whole input's elements [begin, begin + count), the same as one GPU would sum.
    std::vector<std::unique_ptr<ShardOnGpu<T>>> parts;
    for (TeamGpu& gpu : team.gpus()) {
        CUDA_CHECK(cudaSetDevice(gpu.device));
        const Shard shard = shard_of(n, gpu.rank, team.ranks());
        MemoryPlan plan;  // NCCL's buffers and the flush buffer are allocated already
        plan.add("shard", shard.count * sizeof(T));
        plan.add("workspace", reduce7_stage.workspace_bytes(shard.count, sizeof(T), config));
        require_device_memory(plan, "GPU " + std::to_string(gpu.device) + ": its shard of " +
                                        values_text(n, value_type_of<T>()));
        auto part = std::make_unique<ShardOnGpu<T>>(gpu, shard, config);
        if (part->workspace.bytes()) {
            CUDA_CHECK(cudaMemsetAsync(part->workspace.get(), 0, part->workspace.bytes(), *gpu.stream));
        }
        generate_input_on_device(part->values.get(), shard.begin, shard.count, n, request.seed, InputData::Integers,
                                 *gpu.stream);
        part->runs.gpu = team.members()[static_cast<std::size_t>(gpu.rank)];
        part->runs.shard = shard;
        parts.push_back(std::move(part));
    }
    const ExpectedSum& want = expected.get();  // the host's sum ran while the GPUs generated
    ReductionResult result;
    result.n = n;
    result.type = value_type_of<T>();
    result.collective = request.collective;
    result.gate_after_flush = request.gate_after_flush;
    result.warmup = request.warmup;
    result.iters = request.iters;
    result.expected = want.exact;

    // Run 0 and the warm-ups are not timed; every run is checked.
    StartGate gate(team.gpus());
    // Run 0 copies each GPU's partial (its shard's sum) here before the collective.
    T* partials = nullptr;
    CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&partials), parts.size() * sizeof(T), cudaHostAllocPortable));
    const std::unique_ptr<T, cudaError_t (*)(void*)> free_partials(partials, cudaFreeHost);
    std::optional<double> collective_value;  // run 0's result on the first GPU here that gets it
    const int runs = 1 + request.warmup + request.iters;
    for (int run = 0; run < runs; ++run) {
        // With one process per GPU the processes meet first, then each opens its own gate:
        // the skew between processes is that of the barrier's return. (The barrier is an
        // NCCL all-reduce: enqueued behind the closed gate it would wait for the collective
        // of this run, which waits for the gate.)
        if (team.one_process_per_gpu()) team.barrier();
        // Run 0 (checked, not timed) runs with the gate open: the first launch of a kernel
        // loads its module (CUDA's lazy loading), which waits for the device, and so would
        // wait for a closed gate (seen on the H200s: run 0 waited for the gate's 2 s limit).
        if (run > 0) gate.close();
        // Each GPU: flush its L2 and poison its result (outside the timed region), the gate,
        // then the timed region: it sums its shard to one value...
        for (std::size_t i = 0; i < parts.size(); ++i) {
            ShardOnGpu<T>& part = *parts[i];
            TeamGpu& gpu = part.gpu;
            CUDA_CHECK(cudaSetDevice(gpu.device));
            gpu.flusher->flush(*gpu.stream);
            CUDA_CHECK(cudaMemsetAsync(part.result.get(), kPoisonByte, sizeof(T), *gpu.stream));
            CUDA_CHECK(cudaEventRecord(part.flushed, *gpu.stream));
            gate.enqueue(i, *gpu.stream);
            CUDA_CHECK(cudaEventRecord(part.start, *gpu.stream));
            std::size_t count = part.shard.count;
            if (gpu.rank == request.drop_last_element_of_rank && count > 0) --count;
            sum(part.values.get(), count, part.result.get(), part.workspace.get(), config, *gpu.stream);
            CUDA_CHECK(cudaEventRecord(part.local_done, *gpu.stream));
            if (run == 0) {
                CUDA_CHECK(cudaMemcpyAsync(&partials[i], part.result.get(), sizeof(T), cudaMemcpyDeviceToHost, *gpu.stream));
            }
        }
        // Every GPU's sum is enqueued: open the gate, so the GPUs start together, and only
        // then issue the collective. An NCCL call may wait for work already queued on its
        // stream (on the H200s the first gated run's ncclGroupEnd waited for the closed gate
        // until the gate's 2 s limit), so it must not be issued behind a closed gate. The
        // GPUs are summing their shards while the host issues it, so its launch stays hidden
        // unless a shard's sum is shorter than a launch (a few microseconds).
        if (request.gate_after_flush) {  // every GPU done flushing, waiting at its gate
            for (auto& part : parts) CUDA_CHECK(cudaEventSynchronize(part->flushed));
        }
        gate.open();
        // ... then one collective combines the G values, in place in each result.
        if (!request.skip_collective) {
            team.group([&](std::size_t i, TeamGpu& gpu) {
                T* value = parts[i]->result.get();
                if (request.collective == Collective::AllReduce) {
                    NCCL_CHECK(ncclAllReduce(value, value, 1, nccl_type<T>(), ncclSum, gpu.comm, *gpu.stream));
                } else {
                    NCCL_CHECK(ncclReduce(value, value, 1, nccl_type<T>(), ncclSum, /*root=*/0, gpu.comm, *gpu.stream));
                }
            });
        }
        std::vector<cudaEvent_t> stops;
        for (auto& part : parts) {
            CUDA_CHECK(cudaSetDevice(part->gpu.device));
            CUDA_CHECK(cudaEventRecord(part->stop, *part->gpu.stream));
            stops.push_back(part->stop);
        }
        team.wait(stops, "a timed run");

        // After the timed region: each GPU's times from its own events, and the checks.
        for (std::size_t i = 0; i < parts.size(); ++i) {
            ShardOnGpu<T>& part = *parts[i];
            CUDA_CHECK(cudaSetDevice(part.gpu.device));
            GpuRuns& mine = part.runs;
            const bool gave_up = gate.timed_out(i);
            if (run >= 1 + request.warmup) {
                mine.local_ms.push_back(elapsed_ms(part.start, part.local_done));
                mine.collective_ms.push_back(elapsed_ms(part.local_done, part.stop));
                mine.total_ms.push_back(elapsed_ms(part.start, part.stop));
            }
            // ncclReduce leaves the sum on the root only; the others keep their partial.
            if (request.collective == Collective::Reduce && part.gpu.rank != 0) {
                if (gave_up) {
                    ++mine.checked;
                    if (mine.failed++ == 0) mine.first_failure = kGateTimeoutText;
                }
                continue;
            }
            T got{};
            CUDA_CHECK(cudaMemcpy(&got, part.result.get(), sizeof(T), cudaMemcpyDeviceToHost));
            const SumCheck verdict = check_sum(got, want);
            if (run == 0 && part.gpu.rank == 0) result.value = verdict.value;
            if (run == 0 && !collective_value) collective_value = verdict.value;
            ++mine.checked;
            if (!verdict.ok && mine.failed++ == 0) mine.first_failure = verdict.detail;
            if (verdict.ok && gave_up && mine.failed++ == 0) mine.first_failure = kGateTimeoutText;
        }
    }

    // Run 0's partials: every rank's, in rank order (one process per GPU: an all-gather).
    std::vector<T> all_partials(partials, partials + parts.size());
    if (team.one_process_per_gpu()) {
        all_partials.clear();
        for (const std::string& bytes : team.all_gather(std::string(reinterpret_cast<const char*>(partials), sizeof(T)))) {
            T value{};
            std::memcpy(&value, bytes.data(), sizeof(T));
            all_partials.push_back(value);
        }
    }
    check_partials(all_partials, collective_value, want, result);

    // Every rank's runs, in rank order: here already, or from the other processes. One
    // ncclAllGather of each rank's packed runs (a few hundred bytes and 3 doubles per run),
    // rather than an ncclAllReduce(max) of the totals alone: then every rank has every GPU's
    // row, rank 0 prints the same table as one process does, and the run's time is the same
    // largest total per run (finish_reduction), whoever drives the GPUs.
    if (team.one_process_per_gpu()) {
        const std::string mine = pack_gpu_runs(parts.front()->runs, request.iters);
        for (const std::string& bytes : team.all_gather(mine)) {
            result.gpus.push_back(unpack_gpu_runs(bytes.data(), request.iters));
        }
    } else {
        for (auto& part : parts) result.gpus.push_back(part->runs);
    }
    for (auto& part : parts) part.reset();  // free each GPU's shard while it is current
    finish_reduction(result);
    return result;
}

template <typename T>
BaselineResult single_gpu_baseline(Team& team, const ReductionRequest& request, std::shared_future<ExpectedSum> expected) {
    BaselineResult baseline;
    TeamGpu* gpu = team.rank0();
    if (!gpu) {
        baseline.why_not = "timed by rank 0's process";
        return baseline;
    }
    baseline.device = gpu->device;
    baseline.device_name = gpu->info.name;
    const std::size_t n = request.n;
    if (!expected.valid()) expected = std::async(std::launch::async, expected_sum<T>, n, request.seed, InputData::Integers);
    CUDA_CHECK(cudaSetDevice(gpu->device));
    const RunConfig config = reduce7_config(value_type_of<T>());
    MemoryPlan plan;  // the flush buffer and NCCL's buffers are allocated already
    plan.add("input", n * sizeof(T));
    plan.add("workspace", reduce7_stage.workspace_bytes(n, sizeof(T), config));
    const DeviceMemory memory = device_memory();
    if (const auto shortfall = memory_shortfall(plan, "the whole input, " + values_text(n, value_type_of<T>()) + ",",
                                                memory.free_bytes, memory.total_bytes)) {
        baseline.why_not = "does not fit on GPU " + std::to_string(gpu->device) + ": " + *shortfall;
        return baseline;
    }
    DeviceInput<T> input{n, DeviceBuffer<T>(n), {}};
    generate_input_on_device(input.values.get(), 0, n, n, request.seed, InputData::Integers, *gpu->stream);
    input.expected = expected.get();
    CUDA_CHECK(cudaStreamSynchronize(*gpu->stream));

    Options options;  // bench_stage reads the run counts from the common options
    options.type = value_type_of<T>();
    options.warmup = request.warmup;
    options.iters = request.iters;
    BenchContext context{gpu->info, options, *gpu->flusher, *gpu->stream};
    const Record record = bench_stage(reduce7_stage, config, input, context);
    baseline.ran = true;
    baseline.runs = record.runs;
    baseline.median_ms = record.median_ms;
    baseline.min_ms = record.min_ms;
    baseline.max_ms = record.max_ms;
    baseline.gbps = record.gbps;
    baseline.pct_peak = record.pct_peak;
    baseline.peak_gbps = gpu->info.peak.gbps;
    baseline.checked = record.checked_runs;
    baseline.failed = record.failed_runs;
    baseline.check = record.check;
    return baseline;
}

// ---------------------------------------------------------------- the all-reduce of a vector

namespace {

__global__ void fill_allreduce_vector(float* values, std::size_t count, int rank) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x) {
        values[i] = allreduce_test_value(rank, i);
    }
}

// Counts the elements that are not the sum over the G ranks' values.
__global__ void count_allreduce_mismatches(const float* values, std::size_t count, int ranks,
                                           unsigned long long* mismatches) {
    unsigned long long mine = 0;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x) {
        float want = 0;
        for (int rank = 0; rank < ranks; ++rank) want += allreduce_test_value(rank, i);
        if (values[i] != want) ++mine;
    }
    if (mine) atomicAdd(mismatches, mine);
}

float allreduce_expected_value(int ranks, std::size_t i) {
    float want = 0;
    for (int rank = 0; rank < ranks; ++rank) want += allreduce_test_value(rank, i);
    return want;
}

struct VectorOnGpu {
    TeamGpu& gpu;
    DeviceBuffer<float> values;
    DeviceBuffer<unsigned long long> mismatches;  // counted by the check kernel
    CudaEvent start, stop;
    unsigned long long wrong = 0;  // elements found wrong, on the GPU or by the host
    std::vector<double> ms;        // per timed run

    VectorOnGpu(TeamGpu& gpu_, std::size_t elements) : gpu(gpu_), values(elements), mismatches(1) {}
    ~VectorOnGpu() { cudaSetDevice(gpu.device); }
};

// Counts the received elements that are not the sender's values.
__global__ void count_copy_mismatches(const float* received, std::size_t count, int sender,
                                      unsigned long long* mismatches) {
    unsigned long long mine = 0;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x) {
        if (received[i] != allreduce_test_value(sender, i)) ++mine;
    }
    if (mine) atomicAdd(mismatches, mine);
}

// Every GPU copies its S-byte vector to the next GPU's receive buffer while the previous
// GPU copies into its own: each link carries S bytes in each direction at once, as a ring
// all-reduce of G = 2 does (2(G-1)/G x S = S), but with no reduction and no protocol. Run
// before the all-reduce, on the freshly filled vectors, so that every received element can
// be checked against the sender's value. The receive buffers are not in the plan checked at
// start: where one does not fit, the copy is skipped with the reason.
void measure_peer_copy(Team& team, std::vector<std::unique_ptr<VectorOnGpu>>& parts, const AllReduceRequest& request,
                       StartGate& gate, unsigned blocks, AllReduceResult& result) {
    const std::size_t count = request.elements;
    const std::size_t g = parts.size();
    std::vector<DeviceBuffer<float>> received;
    const auto free_received = [&] {
        for (std::size_t i = 0; i < received.size(); ++i) {
            CUDA_CHECK(cudaSetDevice(parts[i]->gpu.device));
            received[i] = DeviceBuffer<float>();
        }
    };
    for (auto& part : parts) {
        CUDA_CHECK(cudaSetDevice(part->gpu.device));
        MemoryPlan plan;
        plan.add("peer copy receive buffer", result.bytes);
        const DeviceMemory memory = device_memory();
        if (const auto shortfall = memory_shortfall(plan, "GPU " + std::to_string(part->gpu.device) + ": the peer copy of " +
                                                              with_thousands(count) + " floats",
                                                    memory.free_bytes, memory.total_bytes)) {
            free_received();
            result.peer_copy_why_not = "its receive buffer does not fit beside the all-reduce's vector: " + *shortfall;
            return;
        }
        received.emplace_back(count);
        // Direct copies over NVLink need peer access (NCCL may have enabled it already).
        for (auto& other : parts) {
            if (other.get() == part.get()) continue;
            int can = 0;
            CUDA_CHECK(cudaDeviceCanAccessPeer(&can, part->gpu.device, other->gpu.device));
            if (!can) continue;
            const cudaError_t status = cudaDeviceEnablePeerAccess(other->gpu.device, 0);
            if (status == cudaErrorPeerAccessAlreadyEnabled) {
                cudaGetLastError();
            } else {
                CUDA_CHECK(status);
            }
        }
    }
    std::vector<cudaEvent_t> stops;
    for (auto& part : parts) stops.push_back(part->stop);
    std::vector<double> run_ms(static_cast<std::size_t>(request.iters), 0.0);
    for (int run = 0; run < request.warmup + request.iters; ++run) {
        if (run > 0) gate.close();  // run 0 (a warm-up) ungated, as for the reduction
        for (std::size_t i = 0; i < g; ++i) {
            VectorOnGpu& from = *parts[i];
            VectorOnGpu& to = *parts[(i + 1) % g];
            CUDA_CHECK(cudaSetDevice(from.gpu.device));
            gate.enqueue(i, *from.gpu.stream);
            CUDA_CHECK(cudaEventRecord(from.start, *from.gpu.stream));
            CUDA_CHECK(cudaMemcpyPeerAsync(received[(i + 1) % g].get(), to.gpu.device, from.values.get(),
                                           from.gpu.device, result.bytes, *from.gpu.stream));
            CUDA_CHECK(cudaEventRecord(from.stop, *from.gpu.stream));
        }
        gate.open();
        team.wait(stops, "a timed peer copy");
        for (std::size_t i = 0; i < g; ++i) {
            if (gate.timed_out(i) && run >= request.warmup) ++result.peer_copy_gate_timeouts;
        }
        if (run < request.warmup) continue;
        for (auto& part : parts) {
            run_ms[static_cast<std::size_t>(run - request.warmup)] =
                std::max<double>(run_ms[static_cast<std::size_t>(run - request.warmup)], elapsed_ms(part->start, part->stop));
        }
    }
    // The copy is checked too: every GPU received the previous GPU's vector, every element
    // compared on the receiving GPU with the sender's value.
    std::vector<cudaEvent_t> checked;
    for (std::size_t i = 0; i < g; ++i) {
        VectorOnGpu& to = *parts[(i + 1) % g];
        CUDA_CHECK(cudaSetDevice(to.gpu.device));
        CUDA_CHECK(cudaMemsetAsync(to.mismatches.get(), 0, sizeof(unsigned long long), *to.gpu.stream));
        count_copy_mismatches<<<blocks, 256, 0, *to.gpu.stream>>>(received[(i + 1) % g].get(), count,
                                                                  parts[i]->gpu.rank, to.mismatches.get());
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaEventRecord(to.stop, *to.gpu.stream));
    }
    team.wait(stops, "the check of the peer copy");
    for (auto& part : parts) {
        CUDA_CHECK(cudaSetDevice(part->gpu.device));
        unsigned long long wrong = 0;
        CUDA_CHECK(cudaMemcpy(&wrong, part->mismatches.get(), sizeof wrong, cudaMemcpyDeviceToHost));
        result.peer_copy_mismatches += wrong;
        result.peer_copy_checked += count;
        // Clean for the all-reduce's check.
        CUDA_CHECK(cudaMemsetAsync(part->mismatches.get(), 0, sizeof(unsigned long long), *part->gpu.stream));
    }
    free_received();
    result.peer_copy = summarize(run_ms);
    result.peer_copy_gbps = allreduce_algbw_gbps(result.bytes, result.peer_copy->median);
}

}  // namespace

AllReduceResult allreduce_vector(Team& team, const AllReduceRequest& request) {
    AllReduceResult result;
    result.gpus = team.ranks();
    result.elements = request.elements;
    result.bytes = request.elements * sizeof(float);
    if (team.ranks() < 2) {
        result.why_not = "one GPU: an all-reduce over one GPU moves nothing (busbw = algbw x 2(G-1)/G = 0)";
        return result;
    }
    const std::size_t count = request.elements;
    if (count == 0) throw std::invalid_argument("the all-reduce needs a vector of at least one float");
    const auto blocks = static_cast<unsigned>(std::min<std::size_t>((count + 255) / 256, 4096));
    std::vector<std::unique_ptr<VectorOnGpu>> parts;
    for (TeamGpu& gpu : team.gpus()) {
        CUDA_CHECK(cudaSetDevice(gpu.device));
        MemoryPlan plan;
        plan.add("all-reduce vector", result.bytes);
        require_device_memory(plan, "GPU " + std::to_string(gpu.device) + ": the all-reduce of " +
                                        with_thousands(count) + " floats");
        parts.push_back(std::make_unique<VectorOnGpu>(gpu, count));
        fill_allreduce_vector<<<blocks, 256, 0, *gpu.stream>>>(parts.back()->values.get(), count, gpu.rank);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaMemsetAsync(parts.back()->mismatches.get(), 0, sizeof(unsigned long long), *gpu.stream));
    }
    StartGate gate(team.gpus());

    // A reference for the links first, while the vectors hold each rank's own values: the
    // same bytes over the same links by the copy engines alone.
    if (team.one_process_per_gpu()) {
        result.peer_copy_why_not = "one process per GPU: no process sees two GPUs to copy between";
    } else {
        measure_peer_copy(team, parts, request, gate, blocks, result);
    }

    auto all_reduce = [&] {
        team.group([&](std::size_t i, TeamGpu& gpu) {
            float* values = parts[i]->values.get();
            NCCL_CHECK(ncclAllReduce(values, values, count, ncclFloat32, ncclSum, gpu.comm, *gpu.stream));
        });
    };

    // Correctness next: one all-reduce (not gated: NCCL's first call sets up its connections),
    // then every element of every GPU's vector compared with the sum over the G ranks'
    // values, on the GPU; and the first and last element on the host, in case the check
    // kernel itself is wrong.
    all_reduce();
    std::vector<cudaEvent_t> stops;
    for (auto& part : parts) {
        CUDA_CHECK(cudaSetDevice(part->gpu.device));
        count_allreduce_mismatches<<<blocks, 256, 0, *part->gpu.stream>>>(part->values.get(), count, team.ranks(),
                                                                            part->mismatches.get());
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaEventRecord(part->stop, *part->gpu.stream));
        stops.push_back(part->stop);
    }
    team.wait(stops, "the checked all-reduce");
    for (auto& part : parts) {
        CUDA_CHECK(cudaSetDevice(part->gpu.device));
        CUDA_CHECK(cudaMemcpy(&part->wrong, part->mismatches.get(), sizeof part->wrong, cudaMemcpyDeviceToHost));
        for (std::size_t i : {std::size_t{0}, count - 1}) {
            float got = 0;
            CUDA_CHECK(cudaMemcpy(&got, part->values.get() + i, sizeof got, cudaMemcpyDeviceToHost));
            if (got != allreduce_expected_value(team.ranks(), i) && part->wrong == 0) part->wrong = 1;
        }
    }

    // Then the timed runs, each enqueued whole behind the start gate (as for the reduction).
    // The vector is not refilled: each run sums the previous run's results, so the values
    // grow (positive, they can reach +inf but never NaN), and an all-reduce takes the same
    // time whatever the values. No L2 flush either: a 1 GiB vector is 20 times an H100's L2,
    // and NCCL's own benchmarks (nccl-tests) do not flush.
    std::vector<int> gate_timeouts(parts.size(), 0);
    for (int run = 0; run < request.warmup + request.iters; ++run) {
        if (team.one_process_per_gpu()) team.barrier();  // then each process opens its own gate
        if (run > 0) gate.close();  // run 0 (a warm-up) ungated, as for the reduction
        for (std::size_t i = 0; i < parts.size(); ++i) {
            CUDA_CHECK(cudaSetDevice(parts[i]->gpu.device));
            gate.enqueue(i, *parts[i]->gpu.stream);
            CUDA_CHECK(cudaEventRecord(parts[i]->start, *parts[i]->gpu.stream));
        }
        // Open before the collective is issued (see the reduction above): the gate aligns the
        // GPUs' start events, and the collective's launch is part of the timed region.
        gate.open();
        all_reduce();
        for (auto& part : parts) {
            CUDA_CHECK(cudaSetDevice(part->gpu.device));
            CUDA_CHECK(cudaEventRecord(part->stop, *part->gpu.stream));
        }
        team.wait(stops, "a timed all-reduce");
        for (std::size_t i = 0; i < parts.size(); ++i) {
            if (gate.timed_out(i) && run >= request.warmup) ++gate_timeouts[i];
        }
        if (run < request.warmup) continue;
        for (auto& part : parts) part->ms.push_back(elapsed_ms(part->start, part->stop));
    }

    // The run's time is the slowest GPU's, as for the reduction. Every rank packs its times,
    // its mismatch count and its gate timeouts; one process has them all already.
    std::vector<std::vector<double>> per_gpu;  // [elements wrong, elements checked, gate timeouts, times ...]
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const VectorOnGpu& part = *parts[i];
        std::vector<double> mine = {static_cast<double>(part.wrong), static_cast<double>(count),
                                    static_cast<double>(gate_timeouts[i])};
        mine.insert(mine.end(), part.ms.begin(), part.ms.end());
        per_gpu.push_back(mine);
    }
    if (team.one_process_per_gpu()) {
        const std::vector<double>& mine = per_gpu.front();
        std::string bytes(mine.size() * sizeof(double), '\0');
        std::memcpy(bytes.data(), mine.data(), bytes.size());
        per_gpu.clear();
        for (const std::string& theirs : team.all_gather(bytes)) {
            std::vector<double> values(theirs.size() / sizeof(double));
            std::memcpy(values.data(), theirs.data(), values.size() * sizeof(double));
            per_gpu.push_back(values);
        }
    }
    result.run_ms.assign(static_cast<std::size_t>(request.iters), 0.0);
    for (const std::vector<double>& gpu : per_gpu) {
        result.mismatches += static_cast<unsigned long long>(gpu[0]);
        result.checked_elements += static_cast<std::size_t>(gpu[1]);
        result.gate_timeouts += static_cast<int>(gpu[2]);
        for (std::size_t i = 0; i < result.run_ms.size(); ++i) result.run_ms[i] = std::max(result.run_ms[i], gpu[3 + i]);
    }
    result.run = summarize(result.run_ms);
    result.algbw_gbps = allreduce_algbw_gbps(result.bytes, result.run.median);
    result.busbw_gbps = allreduce_busbw_gbps(result.bytes, result.run.median, team.ranks());
    result.check = result.mismatches == 0 ? "exact" : with_thousands(result.mismatches) + " elements wrong";
    if (result.gate_timeouts) {
        result.check += "; " + std::to_string(result.gate_timeouts) + " timed GPU runs failed: " + kGateTimeoutText;
    }

    // The links: the slowest of this process's GPUs bounds the bus bandwidth.
    std::vector<int> devices;
    for (TeamGpu& gpu : team.gpus()) {
        devices.push_back(gpu.device);
        const LinkPeak link = nvlink_peak(gpu.device, request.link_peak_gbps);
        if (devices.size() == 1 || (link.gbps && (!result.link.gbps || *link.gbps < *result.link.gbps))) result.link = link;
    }
    if (!team.one_process_per_gpu()) result.peer_access = peer_access_text(devices);
    std::set<std::string> hosts;
    for (const RankInfo& member : team.members()) hosts.insert(member.host);
    result.across_machines = hosts.size() > 1;
    for (auto& part : parts) part.reset();
    result.ran = true;
    return result;
}

#define INSTANTIATE(T)                                                                                       \
    template ReductionResult reduce_across_gpus<T>(Team&, const ReductionRequest&, std::shared_future<ExpectedSum>); \
    template BaselineResult single_gpu_baseline<T>(Team&, const ReductionRequest&, std::shared_future<ExpectedSum>);
INSTANTIATE(int)
INSTANTIATE(float)
INSTANTIATE(double)
