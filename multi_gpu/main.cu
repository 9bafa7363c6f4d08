// reduce_multi_gpu: one sum across several GPUs
//
// The stages sum n values on one GPU as fast as its memory reads them. Past one GPU, the
// pattern is the one every data-parallel program uses for a global sum (the norm of the
// gradients for clipping, a loss averaged over all the data, a dot product of vectors
// spread over the GPUs):
//
//   1. Shard. GPU g of G owns the contiguous elements [n g/G, n (g+1)/G) and generates them
//      in its own memory (shards.h): no input crosses a link.
//   2. Reduce locally. Each GPU sums its shard to ONE value with reduce7, the last stage, at
//      its own DRAM bandwidth: G GPUs read G times the bytes per second of one.
//   3. Combine with one collective of one value. NCCL moves a few bytes between the GPUs,
//      so this step costs a latency (about ten microseconds on NVLink, see
//      docs/09-multi-gpu.md), not bandwidth. The whole sum scales with G as long as the
//      local reductions take much longer than that latency: 2^33 floats are 34 GB, about
//      7.6 ms for one H200 and half that for two, plus the collective; 2^20 floats are 4 MB,
//      a few microseconds per GPU, and there the collective is most of the time.
//
// Why ncclAllReduce and not ncclReduce (--collective): where this pattern is used every GPU
// needs the result (each scales its own gradients by the clipped norm, each logs the same
// loss), and for one value both are one latency-bound step, so all-reduce is the default
// and reduce-to-rank-0 is there to compare (the table says which ran).
//
// Then the opposite case, the element-wise all-reduce of a whole vector: the gradients of
// data-parallel training, summed over the GPUs element by element. Now every byte crosses a
// link, and the figure of merit is NCCL's bus bandwidth against the NVLink peak (bandwidth.h).
//
// Both are checked as every stage is: the input is integers whose exact sum the host knows
// (common/input.h), and every run's result must equal it, bit for bit, on every GPU that
// receives it.
//
// Two ways to start it:
//  - one process driving all G GPUs (the default): ncclCommInitAll makes the G
//    communicators, and each collective is issued for all of them in one
//    ncclGroupStart/ncclGroupEnd, on each GPU's stream;
//  - one process per GPU, as NCCL runs across machines: each process is one rank
//    (--rank R --ranks N, or what mpirun or srun set), rank 0 writes the NCCL id to a file
//    every rank can read (--id-file, launch.h: no MPI is linked), and ncclCommInitRank.
//
//   run:        build/release/bin/reduce_multi_gpu --n 2^33 --type float
//   compare:    build/release/bin/reduce_multi_gpu --n 2^33 --collective reduce
//   processes:  build/release/bin/reduce_multi_gpu --rank 1 --ranks 2 --id-file /tmp/nccl.id &
//               build/release/bin/reduce_multi_gpu --rank 0 --ranks 2 --id-file /tmp/nccl.id
//   machines:   mpirun -np 16 -H a:8,b:8 build/release/bin/reduce_multi_gpu --n 2^34 --id-file /shared/nccl.id
//               srun -N 2 --ntasks-per-node 8 build/release/bin/reduce_multi_gpu --n 2^34 --id-file /shared/nccl.id
//   all-reduce: build/release/bin/reduce_multi_gpu --measure allreduce --vector 2^20
//   chapter:    scripts/multi_gpu.sh
//
// NVLink multicast (NVLS) stays off in every run (launch.h says why); the first line of the
// header shows it.

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <iostream>
#include <new>

#include "device_input.h"
#include "multi_gpu.h"
#include "multi_gpu_report.h"
#include "report.h"

namespace {

// ---------------------------------------------------------------- one run

// How many GPUs this process sees. Throws CudaError, with the reason, when there is none.
int visible_gpus() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        cudaGetLastError();
        open_device(0, std::nullopt);  // throws "no CUDA device found: ..."
    }
    return count;
}

RunDescription describe(Team& team, const MultiGpuOptions& options, const ProcessLayout& layout) {
    RunDescription run;
    const int gpus = team.ranks();
    run.program = "reduce_multi_gpu: one sum across " + std::to_string(gpus) + " GPU" + (gpus == 1 ? "" : "s") +
                  ": a shard each, reduce7, one collective of one value";
    run.nvls = nvlink_multicast_line();
    if (team.one_process_per_gpu()) {
        run.mode = std::to_string(gpus) + " processes, one per GPU, rank and size from " + layout.source +
                   ": ncclCommInitRank, the NCCL id through " + options.id_file;
    } else {
        run.mode = "one process drives the " + std::to_string(gpus) + " GPU" + (gpus == 1 ? "" : "s") +
                   ": ncclCommInitAll, and each collective in one ncclGroupStart/End over their streams";
    }
    run.gpus = gpus_text(team.members());
    const TeamGpu& gpu = *team.rank0();
    run.device = "rank 0: GPU " + std::to_string(gpu.device) + ", " + describe_device(gpu.info);
    run.peak = describe_peak(gpu.info);
    if (const auto peaks = sum_of_peaks(team.members()); peaks && gpus > 1) {
        run.peak += "; the " + std::to_string(gpus) + " GPUs' peaks add up to " + fixed(*peaks, 0) +
                    " GB/s";
    }
    const std::string protocol = nccl_protocol_setting();
    run.software = describe_software(gpu.info) + "; " + nccl_version_text() + ", protocol " +
                   (protocol == "default" ? "NCCL's choice per call" : "NCCL_PROTO=" + protocol);
    const std::string type(type_name(options.type));
    if (options.measure != Measure::AllReduce) {
        const std::string power = count_text(options.n);
        run.problem = "n = " + with_thousands(options.n) + (power.find('^') != std::string::npos ? " (" + power + ")" : "") +
                      " " + type + " values = " + bytes_text(static_cast<double>(options.n * type_size(options.type))) +
                      ", seed " + std::to_string(options.seed) + "; collective " + collective_name(options.collective);
    }
    if (options.measure != Measure::Reduction) {
        run.problem += std::string(run.problem.empty() ? "" : "; ") + "all-reduce of " +
                       with_thousands(options.vector_elements) + " floats = " +
                       bytes_text(static_cast<double>(options.vector_elements * sizeof(float))) + " per GPU";
    }
    run.method = "median of " + std::to_string(options.iters) + " timed runs after 1 checked run and " +
                 std::to_string(options.warmup) + " warm-ups; before each run of the reduction every GPU's L2 is " +
                 "flushed; each GPU's sum is enqueued behind a gate kernel the host opens once (so the GPUs " +
                 "start together and reduce7's launch is outside the timed region), " +
                 (options.gate_after_flush ? "opened only once every GPU's flush has finished, "
                                           : "opened as soon as every sum is enqueued (--gate-at-once), ") +
                 "then the collective is issued" + (team.one_process_per_gpu() ? ", each process after a barrier" : "") +
                 "; every run's result is checked";
    return run;
}

template <typename T>
int run(const MultiGpuOptions& options, const ProcessLayout& layout) {
    // Which GPUs this process drives, as which ranks.
    const int visible = visible_gpus();
    std::vector<int> devices, ranks;
    int gpus = 0;
    if (layout.one_process_per_gpu) {
        gpus = layout.ranks;
        devices = {local_gpu_of(layout, visible)};
        ranks = {layout.rank};
    } else {
        gpus = options.gpus.value_or(visible);
        if (gpus > visible) {
            throw UsageError("--gpus " + std::to_string(gpus) + ": this machine has " + std::to_string(visible) +
                             " GPU" + (visible == 1 ? "" : "s"));
        }
        for (int g = 0; g < gpus; ++g) {
            devices.push_back(g);
            ranks.push_back(g);
        }
    }
    // Everything each GPU needs, NCCL's own buffers included, must fit before anything is
    // allocated: a request too large is one line and exit status 3.
    require_memory_before_start(devices, ranks, gpus, options);
    const bool reduction = options.measure != Measure::AllReduce;
    const bool vector = options.measure != Measure::Reduction;
    // The host computes the exact sum on all its cores while the GPUs are set up.
    std::shared_future<ExpectedSum> expected;
    if (reduction) {
        expected = std::async(std::launch::async, expected_sum<T>, options.n, options.seed, InputData::Integers);
    }
    const std::chrono::seconds timeout(options.timeout_s);
    const std::unique_ptr<Team> team =
        layout.one_process_per_gpu
            ? Team::one_rank(layout, devices.front(), options.id_file, launch_job_tag(process_environment()), timeout)
            : Team::one_process(gpus, timeout);
    // Rank 0 prints the report; every other rank one line about its own shard.
    const bool reporter = team->rank0() != nullptr;
    const bool table = !options.csv;
    if (reporter && table) print_run_header(std::cout, describe(*team, options, layout));
    std::cout.flush();

    bool verified = true;
    ReductionResult reduction_result;
    BaselineResult baseline;
    AllReduceResult allreduce_result;
    if (reduction) {
        const ReductionRequest request{.n = options.n, .seed = options.seed, .collective = options.collective,
                                       .warmup = options.warmup, .iters = options.iters,
                                       .gate_after_flush = options.gate_after_flush};
        if (options.baseline) baseline = single_gpu_baseline<T>(*team, request, expected);
        else baseline.why_not = "--no-baseline";
        reduction_result = reduce_across_gpus<T>(*team, request, expected);
        verified = reduction_result.verified() && baseline.failed == 0;
        if (table && reporter) print_reduction(std::cout, reduction_result, baseline);
        if (table && !reporter) std::cout << rank_summary_line(reduction_result, layout.rank) << "\n";
        std::cout.flush();
    }
    if (vector) {
        const AllReduceRequest request{.elements = options.vector_elements, .warmup = options.warmup,
                                       .iters = options.iters, .link_peak_gbps = options.link_peak_gbps};
        allreduce_result = allreduce_vector(*team, request);
        verified = verified && (!allreduce_result.ran || allreduce_result.verified());
        if (table && reporter) print_allreduce(std::cout, allreduce_result);
        if (table && !reporter && allreduce_result.ran) {
            std::cout << "rank " << layout.rank << ": all-reduce of " << with_thousands(allreduce_result.elements)
                      << " floats, check: " << allreduce_result.check << "\n";
        }
    }
    if (options.csv && reporter) {
        write_multi_gpu_csv(std::cout, reduction ? &reduction_result : nullptr, reduction ? &baseline : nullptr,
                            vector ? &allreduce_result : nullptr, nccl_protocol_setting());
    }
    team->close();
    if (table && reporter && !verified) std::cout << "Some results failed verification: see the check lines.\n";
    return verified ? 0 : 1;
}

}  // namespace

// ---------------------------------------------------------------- main

int main(int argc, char** argv) {
    disable_nvlink_multicast();  // first of all: nothing may load NCCL before it
    const std::string name = "reduce_multi_gpu";
    MultiGpuOptions options;
    ProcessLayout layout;
    try {
        options = parse_multi_gpu_options(std::vector<std::string>(argv + 1, argv + argc));
        if (options.help) {
            std::cout << multi_gpu_usage_text();
            return 0;
        }
        layout = process_layout(options, process_environment());
    } catch (const UsageError& e) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
        return 2;
    }
    if (options.count_gpus) {
        int count = 0;
        if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
        std::cout << count << "\n";
        return 0;
    }
    // Errors name the rank when there are several processes, whose lines interleave.
    const std::string who = layout.one_process_per_gpu ? name + " (rank " + std::to_string(layout.rank) + ")" : name;
    try {
        return with_value_type(options.type, [&](auto zero) { return run<decltype(zero)>(options, layout); });
    } catch (const UsageError& e) {
        std::fprintf(stderr, "%s: %s\n", who.c_str(), e.what());
        return 2;
    } catch (const TooLargeError& e) {
        std::fprintf(stderr, "%s: too large for this GPU: %s\n", who.c_str(), e.what());
    } catch (const InitTimeout& e) {
        // A thread is still inside ncclCommInitRank, waiting for the missing ranks, and
        // nothing can call it off: end now, without running the destructors it would race.
        std::fprintf(stderr, "%s: %s\n", who.c_str(), e.what());
        std::fflush(stdout);
        std::fflush(stderr);
        std::_Exit(3);
    } catch (const NcclError& e) {
        std::fprintf(stderr, "%s: NCCL error: %s\n", who.c_str(), e.what());
    } catch (const BootstrapError& e) {
        std::fprintf(stderr, "%s: %s\n", who.c_str(), e.what());
    } catch (const CudaError& e) {
        std::fprintf(stderr, "%s: CUDA error: %s\n", who.c_str(), e.what());
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "%s: out of host memory\n", who.c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: error: %s\n", who.c_str(), e.what());
    }
    return 3;
}
