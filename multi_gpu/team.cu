// The GPUs of a run and their NCCL communicators (one process or one per GPU), and the
// memory each GPU's part needs before anything starts.
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

#include "multi_gpu_internal.h"

namespace {

std::string host_name() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return "host";
    return name;
}

}  // namespace

std::string values_text(std::size_t n, ValueType type) {
    const std::string power = count_text(n);
    return "n = " + with_thousands(n) + (power.find('^') != std::string::npos ? " (" + power + ")" : "") + " " +
           std::string(type_name(type)) + " values";
}

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
