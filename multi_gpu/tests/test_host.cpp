// reduce_multi_gpu's host half, without a GPU: how the input is split, the command line, which
// rank a process is, the NCCL id through a file, the bandwidth formulas, the results and the
// report.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bandwidth.h"
#include "launch.h"
#include "multi_gpu_report.h"
#include "results.h"
#include "shards.h"

namespace {

// ---------------------------------------------------------------- shards

// 128-bit integers: n * g itself, to check the formula that avoids forming it.
__extension__ typedef unsigned __int128 Wide;

// Every property a split must have: shard g starts where g-1 ended, the first at 0 and the
// last ending at n (so every index is in exactly one shard), each is floor(n g / G), and
// the sizes are floor(n/G) or ceil(n/G).
void expect_exact_cover(std::size_t n, int gpus) {
    const std::vector<Shard> shards = shards_of(n, gpus);
    ASSERT_EQ(shards.size(), static_cast<std::size_t>(gpus));
    std::size_t next = 0;
    for (int g = 0; g < gpus; ++g) {
        const Shard& shard = shards[static_cast<std::size_t>(g)];
        EXPECT_EQ(shard.begin, next) << "n = " << n << ", G = " << gpus << ", shard " << g;
        const auto floor = static_cast<std::size_t>(static_cast<Wide>(n) * static_cast<unsigned>(g) / static_cast<unsigned>(gpus));
        EXPECT_EQ(shard.begin, floor) << "n = " << n << ", G = " << gpus << ", shard " << g;
        EXPECT_GE(shard.count, n / gpus);
        EXPECT_LE(shard.count, n / gpus + 1);
        next = shard.begin + shard.count;
    }
    EXPECT_EQ(next, n) << "G = " << gpus;
}

TEST(MultiGpuShards, EmptyInputGivesEveryGpuAnEmptyShard) {
    for (int gpus = 1; gpus <= 8; ++gpus) {
        for (const Shard& shard : shards_of(0, gpus)) EXPECT_EQ(shard.count, 0u);
        expect_exact_cover(0, gpus);
    }
}

TEST(MultiGpuShards, FewerValuesThanGpusLeaveSomeShardsEmptyAndTheRestOneValue) {
    const std::vector<Shard> shards = shards_of(3, 8);
    std::size_t empty = 0, single = 0;
    for (const Shard& shard : shards) (shard.count == 0 ? empty : single) += 1;
    EXPECT_EQ(empty, 5u);
    EXPECT_EQ(single, 3u);
    expect_exact_cover(1, 2);
    expect_exact_cover(3, 8);
    expect_exact_cover(7, 8);
}

TEST(MultiGpuShards, SizesDifferByAtMostOneWhenGpusDoNotDivideN) {
    for (int gpus : {2, 3, 5, 7, 8}) expect_exact_cover(1000001, gpus);
    EXPECT_EQ(shard_of(1000001, 0, 2).count, 500000u);
    EXPECT_EQ(shard_of(1000001, 1, 2).count, 500001u);
}

TEST(MultiGpuShards, CoverZeroToNExactlyOnceForEverySizeAndGpuCount) {
    const std::vector<std::size_t> sizes = {1, 2, 31, 255, 65537, (std::size_t{1} << 24) + 3};
    for (std::size_t n : sizes) {
        for (int gpus = 1; gpus <= 8; ++gpus) expect_exact_cover(n, gpus);
    }
}

TEST(MultiGpuShards, TwoToThe33PlusOneSplitsExactlyOverTwoToEightGpus) {
    const std::size_t n = (std::size_t{1} << 33) + 1;
    for (int gpus = 2; gpus <= 8; ++gpus) expect_exact_cover(n, gpus);
}

TEST(MultiGpuShards, BoundariesDoNotOverflowNearTwoToThe64) {
    // n * g would overflow 64 bits here; the boundary formula never forms it.
    expect_exact_cover(~std::size_t{0}, 7);
    expect_exact_cover(~std::size_t{0} - 12345, 1024);
}

TEST(MultiGpuShards, AShardOutsideTheJobIsAnError) {
    EXPECT_THROW(shard_of(10, 2, 2), std::invalid_argument);
    EXPECT_THROW(shard_of(10, -1, 2), std::invalid_argument);
    EXPECT_THROW(shard_of(10, 0, 0), std::invalid_argument);
}

// ---------------------------------------------------------------- the command line

MultiGpuOptions parse(std::vector<std::string> args) { return parse_multi_gpu_options(args); }

// The message of the UsageError the arguments raise ("" if they parse).
std::string usage_error(std::vector<std::string> args) {
    try {
        parse_multi_gpu_options(args);
    } catch (const UsageError& e) {
        return e.what();
    }
    return "";
}

TEST(MultiGpuOptions, DefaultsAreTwoToThe30FloatsAllGpusAllReduceAndAOneGibVector) {
    const MultiGpuOptions o = parse({});
    EXPECT_EQ(o.n, std::size_t{1} << 30);
    EXPECT_EQ(o.type, ValueType::Float32);
    EXPECT_FALSE(o.gpus.has_value());
    EXPECT_EQ(o.iters, 20);
    EXPECT_EQ(o.warmup, 3);
    EXPECT_EQ(o.collective, Collective::AllReduce);
    EXPECT_EQ(o.vector_elements * sizeof(float), std::size_t{1} << 30);
    EXPECT_EQ(o.measure, Measure::Both);
    EXPECT_TRUE(o.baseline);
    EXPECT_TRUE(o.gate_after_flush);
    EXPECT_FALSE(o.csv);
    EXPECT_FALSE(o.rank.has_value());
    EXPECT_TRUE(o.id_file.empty());
}

TEST(MultiGpuOptions, AcceptsEveryOption) {
    const MultiGpuOptions o =
        parse({"--n", "2^33", "--type", "int", "--gpus", "2", "--iters", "5", "--warmup", "0", "--seed", "7",
               "--collective", "reduce", "--allreduce-bytes", "4096", "--measure", "reduction", "--no-baseline",
               "--gate-at-once", "--link-peak-gbps", "450", "--csv", "--rank", "1", "--ranks", "2", "--id-file", "/tmp/x.id",
               "--timeout", "30"});
    EXPECT_EQ(o.n, std::size_t{1} << 33);
    EXPECT_EQ(o.type, ValueType::Int32);
    EXPECT_EQ(o.gpus, 2);
    EXPECT_EQ(o.iters, 5);
    EXPECT_EQ(o.warmup, 0);
    EXPECT_EQ(o.seed, 7u);
    EXPECT_EQ(o.collective, Collective::Reduce);
    EXPECT_EQ(o.vector_elements, 1024u);
    EXPECT_EQ(o.measure, Measure::Reduction);
    EXPECT_FALSE(o.baseline);
    EXPECT_FALSE(o.gate_after_flush);
    EXPECT_TRUE(parse({"--gate-at-once", "--gate-after-flush"}).gate_after_flush);  // the last one counts
    EXPECT_EQ(o.link_peak_gbps, 450.0);
    EXPECT_TRUE(o.csv);
    EXPECT_EQ(o.rank, 1);
    EXPECT_EQ(o.ranks, 2);
    EXPECT_EQ(o.id_file, "/tmp/x.id");
    EXPECT_EQ(o.timeout_s, 30);
    EXPECT_EQ(parse({"--vector", "2^20"}).vector_elements, std::size_t{1} << 20);
    EXPECT_EQ(parse({"--n", "0"}).n, 0u);
    EXPECT_TRUE(parse({"--help"}).help);
    EXPECT_TRUE(parse({"--count-gpus"}).count_gpus);
}

TEST(MultiGpuOptions, EveryBadInputIsOneLineNamingTheOption) {
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"--bogus"}, "unknown option '--bogus'"},
        {{"--n", "2^41"}, "--n takes a count from 0 to 2^40"},
        {{"--n", "-1"}, "--n takes a count"},
        {{"--n", "lots"}, "--n takes a count"},
        {{"--n"}, "--n needs a value"},
        {{"--gpus", "0"}, "--gpus takes a whole number from 1"},
        {{"--gpus", "two"}, "--gpus takes a whole number from 1"},
        {{"--type", "half"}, "--type takes int, float or double"},
        {{"--collective", "gather"}, "--collective takes allreduce or reduce"},
        {{"--iters", "0"}, "--iters takes a whole number from 1"},
        {{"--vector", "0"}, "--vector takes a count of floats from 1"},
        {{"--allreduce-bytes", "6"}, "multiple of 4"},
        {{"--vector", "8", "--allreduce-bytes", "32"}, "choose one of --vector and --allreduce-bytes"},
        {{"--measure", "all"}, "--measure takes both, reduction or allreduce"},
        {{"--link-peak-gbps", "-3"}, "--link-peak-gbps takes a positive number"},
        {{"--rank", "0"}, "--rank and --ranks go together"},
        {{"--ranks", "0"}, "--ranks takes a whole number from 1"},
        {{"--timeout", "0"}, "--timeout takes a whole number from 1"},
        {{"--seed", "-5"}, "--seed takes a non-negative whole number"},
    };
    for (const auto& [args, expected] : cases) {
        const std::string message = usage_error(args);
        EXPECT_NE(message.find(expected), std::string::npos) << "args: " << args[0] << "; message: " << message;
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
}

TEST(MultiGpuOptions, UsageTextListsEveryOption) {
    const std::string text = multi_gpu_usage_text();
    for (const char* option : {"--n", "--type", "--gpus", "--collective", "--iters", "--warmup", "--seed", "--measure",
                               "--vector", "--allreduce-bytes", "--link-peak-gbps", "--no-baseline", "--gate-after-flush", "--gate-at-once", "--csv",
                               "--rank", "--ranks", "--id-file", "--timeout", "--count-gpus", "--help", "exit status"}) {
        EXPECT_NE(text.find(option), std::string::npos) << option;
    }
}

// ---------------------------------------------------------------- which rank this process is

Environment environment(std::map<std::string, std::string> variables) {
    auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(variables));
    return [shared](const char* name) -> const char* {
        const auto found = shared->find(name);
        return found == shared->end() ? nullptr : found->second.c_str();
    };
}

std::string layout_error(const MultiGpuOptions& options, std::map<std::string, std::string> variables) {
    try {
        process_layout(options, environment(std::move(variables)));
    } catch (const UsageError& e) {
        return e.what();
    }
    return "";
}

TEST(MultiGpuLayout, WithoutRanksOneProcessDrivesEveryGpu) {
    const ProcessLayout layout = process_layout(parse({}), environment({}));
    EXPECT_FALSE(layout.one_process_per_gpu);
    EXPECT_EQ(layout.rank, 0);
    EXPECT_EQ(layout.ranks, 1);
}

TEST(MultiGpuLayout, RankAndRanksOnTheCommandLineWinOverTheEnvironment) {
    const ProcessLayout layout = process_layout(parse({"--rank", "1", "--ranks", "2", "--id-file", "/tmp/id"}),
                                                environment({{"OMPI_COMM_WORLD_RANK", "5"}, {"OMPI_COMM_WORLD_SIZE", "8"}}));
    EXPECT_TRUE(layout.one_process_per_gpu);
    EXPECT_EQ(layout.rank, 1);
    EXPECT_EQ(layout.ranks, 2);
    EXPECT_FALSE(layout.local_rank.has_value());
    EXPECT_EQ(local_gpu_of(layout, 8), 1);
}

TEST(MultiGpuLayout, ReadsOpenMpisRankSizeAndLocalRank) {
    const ProcessLayout layout = process_layout(
        parse({"--id-file", "/shared/id"}),
        environment({{"OMPI_COMM_WORLD_RANK", "11"}, {"OMPI_COMM_WORLD_SIZE", "16"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "3"}}));
    EXPECT_TRUE(layout.one_process_per_gpu);
    EXPECT_EQ(layout.rank, 11);
    EXPECT_EQ(layout.ranks, 16);
    EXPECT_EQ(layout.local_rank, 3);
    EXPECT_EQ(local_gpu_of(layout, 8), 3);  // the local rank, not 11 % 8
    EXPECT_NE(layout.source.find("Open MPI"), std::string::npos);
}

TEST(MultiGpuLayout, ReadsMpichHydrasPmiRankAndSize) {
    const ProcessLayout layout = process_layout(
        parse({"--id-file", "/shared/id"}), environment({{"PMI_RANK", "2"}, {"PMI_SIZE", "4"}, {"MPI_LOCALRANKID", "0"}}));
    EXPECT_EQ(layout.rank, 2);
    EXPECT_EQ(layout.ranks, 4);
    EXPECT_EQ(layout.local_rank, 0);
    EXPECT_NE(layout.source.find("PMI_RANK"), std::string::npos);
}

TEST(MultiGpuLayout, ReadsSlurmsProcIdPreferringTheStepsTaskCount) {
    const ProcessLayout step = process_layout(
        parse({"--id-file", "/shared/id"}),
        environment({{"SLURM_PROCID", "9"}, {"SLURM_STEP_NUM_TASKS", "16"}, {"SLURM_NTASKS", "32"}, {"SLURM_LOCALID", "1"}}));
    EXPECT_EQ(step.rank, 9);
    EXPECT_EQ(step.ranks, 16);
    EXPECT_EQ(step.local_rank, 1);
    const ProcessLayout job = process_layout(parse({"--id-file", "/shared/id"}),
                                             environment({{"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "4"}}));
    EXPECT_EQ(job.ranks, 4);
    EXPECT_FALSE(job.local_rank.has_value());
    EXPECT_EQ(local_gpu_of(job, 2), 1);  // rank 3 on a machine with 2 GPUs
}

TEST(MultiGpuLayout, ALauncherOfOneProcessMeansOneProcessForEveryGpu) {
    const ProcessLayout layout =
        process_layout(parse({}), environment({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "1"}}));
    EXPECT_FALSE(layout.one_process_per_gpu);
    EXPECT_EQ(layout.ranks, 1);
}

TEST(MultiGpuLayout, InconsistentRanksAreUsageErrors) {
    EXPECT_NE(layout_error(parse({"--rank", "2", "--ranks", "2", "--id-file", "/x"}), {}).find("not below"),
              std::string::npos);
    EXPECT_NE(layout_error(parse({"--rank", "0", "--ranks", "2"}), {}).find("needs --id-file"), std::string::npos);
    EXPECT_NE(layout_error(parse({"--id-file", "/x"}), {}).find("--id-file is for one process per GPU"),
              std::string::npos);
    EXPECT_NE(layout_error(parse({"--gpus", "2", "--rank", "0", "--ranks", "2", "--id-file", "/x"}), {})
                  .find("--gpus is for one process"),
              std::string::npos);
    EXPECT_NE(layout_error(parse({}), {{"PMI_RANK", "0"}}).find("PMI_SIZE is not"), std::string::npos);
    EXPECT_NE(layout_error(parse({}), {{"OMPI_COMM_WORLD_RANK", "x"}, {"OMPI_COMM_WORLD_SIZE", "2"}})
                  .find("OMPI_COMM_WORLD_RANK is 'x'"),
              std::string::npos);
    EXPECT_NE(layout_error(parse({"--id-file", "/x"}), {{"SLURM_PROCID", "4"}, {"SLURM_NTASKS", "4"}}).find("not below"),
              std::string::npos);
}

TEST(MultiGpuLayout, JobTagComesFromTheLauncher) {
    EXPECT_EQ(launch_job_tag(environment({})), "");
    EXPECT_EQ(launch_job_tag(environment({{"PMIX_NAMESPACE", "prterun-a-123@1"}})), "prterun-a-123@1");
    EXPECT_EQ(launch_job_tag(environment({{"SLURM_JOB_ID", "77"}, {"SLURM_STEP_ID", "2"}})), "77.2");
}

// ---------------------------------------------------------------- the NCCL id through a file

// A fresh folder under the system's temporary folder, removed at the end of the test.
struct TemporaryFolder {
    std::filesystem::path path;
    TemporaryFolder() {
        path = std::filesystem::temp_directory_path() /
               ("multi_gpu_test_" + std::to_string(getpid()) + "_" +
                testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~TemporaryFolder() { std::filesystem::remove_all(path); }
};

std::string some_id() {
    std::string id(128, '\0');
    for (std::size_t i = 0; i < id.size(); ++i) id[i] = static_cast<char>((i * 37 + 11) & 0xFF);  // zeros and high bytes too
    return id;
}

TEST(MultiGpuIdFile, WhatRankZeroPublishesTheOthersReadByteForByte) {
    TemporaryFolder folder;
    const std::string path = (folder.path / "nccl.id").string();
    const IdRequest request = request_unique_id(path, 3);
    EXPECT_EQ(request.ticket.size(), 32u);
    publish_unique_id(path, some_id(), 4, "job 1", read_id_requests(path, 4));
    EXPECT_EQ(wait_for_unique_id(path, 4, "job 1", request, std::chrono::milliseconds(100)), some_id());
    withdraw_id_request(path, request);
    // Only the id file is left: the temporary files were renamed onto it and the request.
    int files = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(folder.path)) ++files;
    EXPECT_EQ(files, 1);
    remove_unique_id(path);
    EXPECT_FALSE(std::filesystem::exists(path));
}

// Rank 0 answering in a thread, as Team::one_rank runs it, until the test stops it.
struct RankZero {
    std::atomic<bool> stop{false};
    std::thread thread;
    RankZero(const std::string& path, const std::string& id, int ranks, const std::string& tag,
             std::chrono::milliseconds delay = std::chrono::milliseconds(0)) {
        thread = std::thread([this, path, id, ranks, tag, delay] {
            std::this_thread::sleep_for(delay);
            answer_id_requests(path, id, ranks, tag, stop);
        });
    }
    ~RankZero() {
        stop = true;
        thread.join();
    }
};

TEST(MultiGpuIdFile, AReaderThatStartsFirstWaitsForTheFile) {
    TemporaryFolder folder;
    const std::string path = (folder.path / "nccl.id").string();
    const IdRequest request = request_unique_id(path, 1);
    RankZero rank0(path, some_id(), 2, "", std::chrono::milliseconds(300));
    EXPECT_EQ(wait_for_unique_id(path, 2, "", request, std::chrono::seconds(20)), some_id());
}

TEST(MultiGpuIdFile, NoFileBeforeTheTimeoutIsAnErrorThatSaysWhatToCheck) {
    TemporaryFolder folder;
    const std::string path = (folder.path / "nccl.id").string();
    try {
        wait_for_unique_id(path, 2, "", request_unique_id(path, 1), std::chrono::milliseconds(200));
        FAIL() << "expected a BootstrapError";
    } catch (const BootstrapError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find(path), std::string::npos) << message;
        EXPECT_NE(message.find("is rank 0 running"), std::string::npos) << message;
    }
}

TEST(MultiGpuIdFile, AFileFromAnotherJobIsNotTakenAndTheErrorSaysSo) {
    TemporaryFolder folder;
    const std::string path = (folder.path / "nccl.id").string();
    const IdRequest request = request_unique_id(path, 1);
    publish_unique_id(path, some_id(), 8, "old-job", {{1, request.ticket}});  // even with this rank's ticket
    for (const auto& [ranks, tag] : std::vector<std::pair<int, std::string>>{{2, "old-job"}, {8, "new-job"}}) {
        try {
            wait_for_unique_id(path, ranks, tag, request, std::chrono::milliseconds(200));
            FAIL() << "took a file for another job";
        } catch (const BootstrapError& e) {
            EXPECT_NE(std::string(e.what()).find("left from another run"), std::string::npos) << e.what();
        }
    }
}

TEST(MultiGpuIdFile, AHalfWrittenOrForeignFileIsNotAnId) {
    TemporaryFolder folder;
    const std::string path = (folder.path / "nccl.id").string();
    const IdRequest request = request_unique_id(path, 1);
    for (const std::string& text : {std::string("reduce_multi_gpu NCCL unique id\nranks 2\n"),  // cut short
                                    "reduce_multi_gpu NCCL unique id\nranks 2\njob -\nid 00ff\nticket 1 " +
                                        request.ticket + "\n"}) {  // no end line: still being written
        std::ofstream(path) << text;
        EXPECT_THROW(wait_for_unique_id(path, 2, "", request, std::chrono::milliseconds(150)), BootstrapError);
    }
}

// The stale id file of issue 21: a run of the same job (2 ranks, started by hand) ended
// early and left its id file, answering its own rank 1. A new rank 1 must never take it:
// it waits, and takes the id of the new rank 0 once that one answers.
TEST(MultiGpuIdFile, AStaleFileOfTheSameJobIsNeverTaken) {
    TemporaryFolder folder;
    const std::string path = (folder.path / "nccl.id").string();
    const std::string stale_id(128, 'S');
    const IdRequest old_request = request_unique_id(path, 1);
    publish_unique_id(path, stale_id, 2, "", read_id_requests(path, 2));  // the old run's rank 0, then it died
    const IdRequest request = request_unique_id(path, 1);                  // the new run's rank 1
    EXPECT_NE(request.ticket, old_request.ticket);
    try {
        wait_for_unique_id(path, 2, "", request, std::chrono::milliseconds(300));
        FAIL() << "took the stale id";
    } catch (const BootstrapError& e) {
        EXPECT_NE(std::string(e.what()).find("does not answer this rank's request"), std::string::npos) << e.what();
    }
    RankZero rank0(path, some_id(), 2, "", std::chrono::milliseconds(200));  // the new run's rank 0, late
    EXPECT_EQ(wait_for_unique_id(path, 2, "", request, std::chrono::seconds(20)), some_id());
}

// A request left by a rank 1 that died: rank 0 answers it, then answers the new rank 1's
// request, which replaced it, within its polling period.
TEST(MultiGpuIdFile, ARequestReplacedWhileRankZeroAnswersIsAnsweredToo) {
    TemporaryFolder folder;
    const std::string path = (folder.path / "nccl.id").string();
    request_unique_id(path, 1);  // the dead rank 1's request
    RankZero rank0(path, some_id(), 2, "");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const IdRequest request = request_unique_id(path, 1);
    EXPECT_EQ(wait_for_unique_id(path, 2, "", request, std::chrono::seconds(20)), some_id());
}

// ---------------------------------------------------------------- NVLink multicast off

TEST(MultiGpuNvls, MulticastIsSwitchedOffWhateverTheCallerSet) {
    setenv("NCCL_NVLS_ENABLE", "1", 1);
    setenv("NVSHMEM_DISABLE_NVLS", "0", 1);
    disable_nvlink_multicast();
    EXPECT_STREQ(std::getenv("NCCL_NVLS_ENABLE"), "0");
    EXPECT_STREQ(std::getenv("TORCH_SYMM_MEM_DISABLE_MULTICAST"), "1");
    EXPECT_STREQ(std::getenv("NVSHMEM_DISABLE_NVLS"), "1");
    const std::string line = nvlink_multicast_line();
    EXPECT_NE(line.find("NCCL_NVLS_ENABLE=0"), std::string::npos) << line;
    EXPECT_NE(line.find("off"), std::string::npos) << line;
}

// ---------------------------------------------------------------- bandwidth

TEST(MultiGpuBandwidth, BusBandwidthIsAlgorithmBandwidthTimesTwoGMinusOneOverG) {
    EXPECT_DOUBLE_EQ(allreduce_bus_factor(1), 0.0);
    EXPECT_DOUBLE_EQ(allreduce_bus_factor(2), 1.0);
    EXPECT_DOUBLE_EQ(allreduce_bus_factor(4), 1.5);
    EXPECT_DOUBLE_EQ(allreduce_bus_factor(8), 1.75);
    const std::size_t bytes = std::size_t{1} << 30;  // 2^28 floats
    EXPECT_DOUBLE_EQ(allreduce_algbw_gbps(bytes, 1.0), 1073.741824);  // 1 GiB in 1 ms
    EXPECT_DOUBLE_EQ(allreduce_busbw_gbps(bytes, 1.0, 8), 1073.741824 * 1.75);
    EXPECT_DOUBLE_EQ(allreduce_busbw_gbps(bytes, 1.0, 2), allreduce_algbw_gbps(bytes, 1.0));
    EXPECT_DOUBLE_EQ(allreduce_algbw_gbps(bytes, 0.0), 0.0);  // no time measured: no figure
}

TEST(MultiGpuBandwidth, NvlinkGenerationReadsBothNvmlConventions) {
    EXPECT_EQ(nvlink_generation(4, 9), 4);   // Hopper, the generation itself
    EXPECT_EQ(nvlink_generation(6, 9), 4);   // Hopper, NVML_NVLINK_VERSION_4_0
    EXPECT_EQ(nvlink_generation(4, 8), 3);   // Ampere, NVML_NVLINK_VERSION_3_0
    EXPECT_EQ(nvlink_generation(3, 8), 3);   // Ampere, the generation
    EXPECT_EQ(nvlink_generation(5, 10), 5);  // Blackwell, the generation
    EXPECT_EQ(nvlink_generation(5, 8), 3);   // NVML_NVLINK_VERSION_3_1
    EXPECT_EQ(nvlink_generation(7, 10), 5);  // NVML_NVLINK_VERSION_5_0
    EXPECT_EQ(nvlink_generation(2, 7), 2);
    EXPECT_EQ(nvlink_generation(0, 9), 0);
    EXPECT_EQ(nvlink_generation(99, 9), 0);
}

TEST(MultiGpuBandwidth, AnH100sEighteenNvlink4LinksCarry450GBPerSecondEachWay) {
    EXPECT_EQ(nvlink_gbps_per_link(4), 25.0);
    EXPECT_EQ(18 * *nvlink_gbps_per_link(nvlink_generation(6, 9)), 450.0);
    EXPECT_EQ(nvlink_gbps_per_link(1), 20.0);
    EXPECT_EQ(nvlink_gbps_per_link(5), 50.0);
    EXPECT_FALSE(nvlink_gbps_per_link(0).has_value());
}

// ---------------------------------------------------------------- results

// Rank `rank` of `ranks`, its shard of 1000 values and these total times.
GpuRuns gpu_runs(int rank, std::vector<double> total, int checked = 3, int failed = 0, int ranks = 2) {
    GpuRuns runs;
    runs.gpu = {rank, rank, "NVIDIA H100 80GB HBM3", "node" + std::to_string(rank / 8), 3352.0};
    runs.shard = shard_of(1000, rank, ranks);
    runs.local_ms = total;
    for (double& t : runs.local_ms) t -= 0.01;
    runs.collective_ms = std::vector<double>(total.size(), 0.01);
    runs.total_ms = std::move(total);
    runs.checked = checked;
    runs.failed = failed;
    if (failed) runs.first_failure = "got 12, expected 13";
    return runs;
}

TEST(MultiGpuResults, ARunTakesTheSlowestGpusTimeAndTheChecksAddUp) {
    ReductionResult result;
    result.n = 1000;
    result.iters = 3;
    result.gpus = {gpu_runs(0, {1.0, 5.0, 2.0}), gpu_runs(1, {3.0, 1.0, 2.5})};
    finish_reduction(result);
    EXPECT_EQ(result.run_ms, (std::vector<double>{3.0, 5.0, 2.5}));
    EXPECT_DOUBLE_EQ(result.run.median, 3.0);
    EXPECT_EQ(result.checked, 6);
    EXPECT_TRUE(result.verified());
    EXPECT_EQ(result.check, "exact");

    result.gpus[1] = gpu_runs(1, {3.0, 1.0, 2.5}, 3, 2);
    finish_reduction(result);
    EXPECT_FALSE(result.verified());
    EXPECT_EQ(result.failed, 2);
    EXPECT_EQ(result.check, "rank 1: got 12, expected 13");
}

TEST(MultiGpuResults, PackedRunsComeBackUnchangedAndLongNamesAreCut) {
    GpuRuns runs = gpu_runs(5, {1.5, 2.5, 3.5, 4.5}, 4, 1, 8);
    runs.gpu.host = std::string(500, 'h');
    const std::string bytes = pack_gpu_runs(runs, 4);
    EXPECT_EQ(bytes.size(), packed_gpu_runs_bytes(4));
    const GpuRuns back = unpack_gpu_runs(bytes.data(), 4);
    EXPECT_EQ(back.gpu.rank, 5);
    EXPECT_EQ(back.gpu.device, 5);
    EXPECT_EQ(back.gpu.device_name, runs.gpu.device_name);
    EXPECT_EQ(back.gpu.peak_gbps, 3352.0);
    EXPECT_EQ(back.shard.begin, runs.shard.begin);
    EXPECT_EQ(back.shard.count, runs.shard.count);
    EXPECT_EQ(back.total_ms, runs.total_ms);
    EXPECT_EQ(back.local_ms, runs.local_ms);
    EXPECT_EQ(back.collective_ms, runs.collective_ms);
    EXPECT_EQ(back.checked, 4);
    EXPECT_EQ(back.failed, 1);
    EXPECT_EQ(back.first_failure, runs.first_failure);
    EXPECT_LT(back.gpu.host.size(), 100u);
    EXPECT_EQ(back.gpu.host, std::string(back.gpu.host.size(), 'h'));
    // Who a rank is travels as runs with no times.
    const GpuRuns who = unpack_gpu_runs(pack_gpu_runs(runs, 0).data(), 0);
    EXPECT_EQ(who.gpu.device_name, runs.gpu.device_name);
    EXPECT_TRUE(who.total_ms.empty());
}

// ---------------------------------------------------------------- report

TEST(MultiGpuReport, CsvHasOneRowPerMeasurementUnderTheDocumentedColumns) {
    ReductionResult reduction;
    reduction.n = 1000;
    reduction.type = ValueType::Float32;
    reduction.iters = 3;
    reduction.gpus = {gpu_runs(0, {1.0, 1.0, 1.0}), gpu_runs(1, {1.0, 1.0, 1.0})};
    finish_reduction(reduction);
    BaselineResult baseline;
    baseline.ran = true;
    baseline.device_name = "NVIDIA H100 80GB HBM3";
    baseline.median_ms = 2.0;
    baseline.gbps = 0.002;
    baseline.check = "exact";
    AllReduceResult allreduce;
    allreduce.ran = true;
    allreduce.gpus = 2;
    allreduce.elements = 256;
    allreduce.bytes = 1024;
    allreduce.checked_elements = 512;
    allreduce.link = {450.0, "test"};
    allreduce.check = "exact";
    std::ostringstream out;
    reduction.gate_after_flush = true;
    write_multi_gpu_csv(out, &reduction, &baseline, &allreduce, "LL");
    std::vector<std::string> lines;
    std::istringstream in(out.str());
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    ASSERT_EQ(lines.size(), 1u + 1 + 2 + 1 + 1);  // header, single GPU, 2 GPUs, aggregate, all-reduce
    std::string header;
    for (const std::string& column : multi_gpu_csv_columns()) header += (header.empty() ? "" : ",") + column;
    EXPECT_EQ(lines[0], header);
    EXPECT_EQ(lines[1].rfind("single_gpu,", 0), 0u);
    EXPECT_EQ(lines[2].rfind("gpu,allreduce,2,0,", 0), 0u);
    EXPECT_EQ(lines[3].rfind("gpu,allreduce,2,1,", 0), 0u);
    EXPECT_EQ(lines[4].rfind("aggregate,", 0), 0u);
    EXPECT_EQ(lines[5].rfind("allreduce,", 0), 0u);
    // The run's settings end the rows of the measurements they apply to: the gate only the
    // reduction's, the protocol every collective's; the single GPU's neither.
    EXPECT_EQ(lines[1].substr(lines[1].size() - 2), ",,") << lines[1];
    for (int i : {2, 3, 4}) EXPECT_EQ(lines[i].substr(lines[i].size() - 7), ",yes,LL") << lines[i];
    EXPECT_EQ(lines[5].substr(lines[5].size() - 4), ",,LL") << lines[5];
    for (const std::string& line : lines) {
        EXPECT_EQ(std::count(line.begin(), line.end(), ','), static_cast<long>(multi_gpu_csv_columns().size() - 1))
            << line;
    }
}

TEST(MultiGpuReport, TheTableShowsScalingWithABaselineAndSaysWhyWithout) {
    ReductionResult reduction;
    reduction.n = 1000;
    reduction.iters = 1;
    reduction.gpus = {gpu_runs(0, {1.0}, 1), gpu_runs(1, {1.0}, 1)};
    finish_reduction(reduction);
    BaselineResult baseline;
    baseline.ran = true;
    baseline.gbps = 0.002;
    baseline.check = "exact";
    std::ostringstream with;
    print_reduction(with, reduction, baseline);
    EXPECT_NE(with.str().find("scaling"), std::string::npos) << with.str();
    EXPECT_NE(with.str().find("exact"), std::string::npos);
    BaselineResult missing;
    missing.why_not = "does not fit on GPU 0";
    std::ostringstream without;
    print_reduction(without, reduction, missing);
    EXPECT_NE(without.str().find("not timed: does not fit on GPU 0"), std::string::npos) << without.str();
    EXPECT_EQ(without.str().find("scaling"), std::string::npos);
    EXPECT_NE(rank_summary_line(reduction, 1).find("rank 1 of 2"), std::string::npos);
    AllReduceResult skipped;
    skipped.why_not = "one GPU";
    std::ostringstream allreduce;
    print_allreduce(allreduce, skipped);
    EXPECT_NE(allreduce.str().find("skipped: one GPU"), std::string::npos);
}

TEST(MultiGpuReport, GpusOfOneKindOnOneHostAreCountedOnce) {
    std::vector<RankInfo> members;
    for (int rank = 0; rank < 16; ++rank) members.push_back({rank, rank % 8, "H100", rank < 8 ? "a" : "b", 3352.0});
    EXPECT_EQ(gpus_text(members), "8 x H100 on host a; 8 x H100 on host b");
    EXPECT_EQ(sum_of_peaks(members), 16 * 3352.0);
    members[3].peak_gbps.reset();
    EXPECT_FALSE(sum_of_peaks(members).has_value());
}

}  // namespace
