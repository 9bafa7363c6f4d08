// public_timer: a published sum kernel, timed by this repository's two methods (issue 31)
//
// The public kernels print one number each, by their own timing (a stream of launches,
// one event pair, no flush, no check after the first). To compare them with reduce7 by
// the same yardstick, this program compiles a published source unchanged, with the
// authors' own compiler flags, renames its main() away, and times the authors' own launch
// function with common/timing.h, the code that times every stage:
//
//   flushed       the L2 flushed before each run, one event pair around it; 20 warm-ups,
//                 100 timed: median, min and max (the stages' default method).
//   back-to-back  1 + 20 checked runs, then 10 batches of 100 launches with one event
//                 pair over each batch: median, min and max of the per-launch times.
//
// Every run is checked against the host's exact sum of the harness's integer input
// (common/input.h: values +-1..8 from a hash of the index), so a published kernel that
// dropped or doubled an element would fail here. The output is poisoned before each run
// (or batch), so a launch that writes nothing fails too.
//
// The source never enters this repository: CMake builds this file only when the
// configure names a checkout (scripts/public_kernels.sh does it):
//
//   cmake --preset release -DPUBLIC_SIMVEIT_DIR=~/effective_reduction -DPUBLIC_FASTCU_DIR=~/fast.cu
//   cmake --build build/release --target public_timer_kernel_9 public_timer_fast_cu
//   build/release/bin/public_timer_kernel_9 --n 2^26 --n 2^28 --n 2^30
//
// What each program launches (read from their sources):
//   kernel_9   simveit/effective_reduction kernel_9.cu: kernel_9_launch<512, 12>(in, out, n),
//              a cudaMemset of the result, then one block per 6,144 ints (512 threads x 3
//              consecutive int4 each), one atomicAdd per block. Its last block reads up
//              to one chunk past n (it checks the index only before adding): the input
//              buffer here has that much zeroed slack after it.
//   kernel1-4  pranjalssh/fast.cu sum.cu: kernelDispatch(k, in, out, ..., n), one block
//              per 10,240 ints (kernel 1) or per 65,536 ints (2-4: 1024 threads x 16
//              int4 loads BLOCK apart); the kernel zeroes the result itself, from the
//              first thread of block 0.
// Both are int only, and take n as int (fast.cu) or size_t (kernel_9): n up to 2^30.
//
// Output: CSV after '#' lines naming the GPU, driver and date. Exit status: 0 every run
// exact, 1 a check failed, 2 bad input, 3 CUDA error.
#include <cuda_runtime.h>

#include <cstdio>
#include <ctime>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cuda_check.h"
#include "device_buffer.h"
#include "device_info.h"
#include "device_input.h"
#include "input.h"
#include "options.h"
#include "stats.h"
#include "timing.h"
#include "verify.h"

// The published program, unchanged; its main() becomes an unused function.
#define main published_program_main
#include PUBLIC_SOURCE
#undef main

namespace {

struct PublicKernel {
    const char* name;
    std::function<void(const int* in, int* out, std::size_t n)> launch;
};

#if defined(PUBLIC_PROGRAM_KERNEL_9)
constexpr const char* kProgram = "simveit/effective_reduction kernel_9.cu";
constexpr std::size_t kSlackInts = 512 * 12;  // its last block's chunk: what it may read past n
std::vector<PublicKernel> public_kernels() {
    return {{"kernel_9", [](const int* in, int* out, std::size_t n) { kernel_9_launch<512, 12>(in, out, n); }}};
}
#elif defined(PUBLIC_PROGRAM_FAST_CU)
constexpr const char* kProgram = "pranjalssh/fast.cu sum.cu";
constexpr std::size_t kSlackInts = 0;  // every load is checked against n
std::vector<PublicKernel> public_kernels() {
    std::vector<PublicKernel> kernels;
    static const char* const names[] = {"kernel1", "kernel2", "kernel3", "kernel4"};
    for (int k = 1; k <= 4; ++k) {
        kernels.push_back({names[k - 1], [k](const int* in, int* out, std::size_t n) {
                               int unused_host_result = 0;
                               kernelDispatch(k, const_cast<int*>(in), out, &unused_host_result, static_cast<int>(n));
                           }});
    }
    return kernels;
}
#else
#error "define PUBLIC_PROGRAM_KERNEL_9 or PUBLIC_PROGRAM_FAST_CU (CMakeLists.txt does)"
#endif

struct TimerOptions {
    std::vector<std::size_t> sizes;
    bool flushed = true, back_to_back = true;
    int warmup = 20, iters = 100, batches = 10, batch = 100;
};

TimerOptions parse(int argc, char** argv) {
    TimerOptions o;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        auto value = [&]() -> std::string_view {
            if (i + 1 >= argc) throw UsageError(std::string(arg) + " needs a value");
            return argv[++i];
        };
        if (arg == "--n") {
            const std::string_view text = value();
            const auto n = parse_count(text);
            if (!n || *n < 4 || *n % 4 != 0 || *n > (std::size_t{1} << 30)) {
                throw UsageError("--n takes a multiple of 4 from 4 to 2^30 (the published kernels' limits), not '" +
                                 std::string(text) + "'");
            }
            o.sizes.push_back(*n);
        } else if (arg == "--timing") {
            const std::string_view m = value();
            if (m == "flushed") o.back_to_back = false;
            else if (m == "back-to-back") o.flushed = false;
            else if (m != "both") throw UsageError("--timing takes flushed, back-to-back or both, not '" + std::string(m) + "'");
        } else if (arg == "--iters") {
            o.iters = parse_int_in_range("--iters", value(), 1, 100000);
        } else if (arg == "--warmup") {
            o.warmup = parse_int_in_range("--warmup", value(), 0, 100000);
        } else if (arg == "--batches") {
            o.batches = parse_int_in_range("--batches", value(), 1, 100000);
        } else {
            throw UsageError("unknown option '" + std::string(arg) + "' (--n N, --timing flushed|back-to-back|both, --iters, --warmup, --batches)");
        }
    }
    if (o.sizes.empty()) o.sizes = {std::size_t{1} << 26, std::size_t{1} << 28, std::size_t{1} << 30};
    return o;
}

void print_row(const char* method, const char* kernel, std::size_t n, const TimedRuns& runs, const DeviceInfo& device) {
    const TimingStats s = summarize(runs.ms);
    const double bytes = double(n) * sizeof(int);
    const double gbps = s.median > 0 ? bytes / (s.median * 1e-3) / 1e9 : 0;
    const double pct = device.peak.gbps ? 100.0 * gbps / *device.peak.gbps : 0;
    std::printf("%s,%s,%s,int,%zu,%.0f,%d,%.6g,%.6g,%.6g,%.2f,%.2f,%s,%d,%d\n", method, kProgram, kernel, n, bytes,
                s.runs, s.median, s.min, s.max, gbps, pct, runs.failed == 0 ? "true" : "false", runs.checked,
                runs.failed);
}

// Times every kernel of the program at size n by each method; returns false if a check failed.
bool time_size(std::size_t n, const TimerOptions& o, const DeviceInfo& device, L2Flusher& flusher) {
    DeviceBuffer<int> input(n + kSlackInts);
    DeviceBuffer<int> out(1);
    constexpr std::uint64_t kSeed = 2026;  // the stages' default seed
    constexpr cudaStream_t kDefaultStream = 0;  // the published launchers use the legacy default stream
    generate_input_on_device(input.get(), 0, n, n, kSeed, InputData::Integers, kDefaultStream);
    if (kSlackInts) CUDA_CHECK(cudaMemsetAsync(input.get() + n, 0, kSlackInts * sizeof(int), kDefaultStream));
    CUDA_CHECK(cudaStreamSynchronize(kDefaultStream));
    const long long exact = expected_sum<int>(n, kSeed).exact;

    bool all_exact = true;
    for (const PublicKernel& k : public_kernels()) {
        auto poison = [&] { CUDA_CHECK(cudaMemsetAsync(out.get(), 0x5a, sizeof(int), kDefaultStream)); };
        auto run = [&] {
            k.launch(input.get(), out.get(), n);
            CUDA_CHECK_LAUNCH();
        };
        auto check = [&] {
            int got = 0;
            CUDA_CHECK(cudaMemcpy(&got, out.get(), sizeof(int), cudaMemcpyDeviceToHost));
            return check_sum<int>(got, exact);
        };
        const std::string label = std::string(k.name) + " n=" + std::to_string(n);
        std::vector<std::pair<const char*, TimedRuns>> rows;
        if (o.flushed) rows.emplace_back("flushed", time_runs(label, o.warmup, o.iters, flusher, kDefaultStream, poison, run, check));
        if (o.back_to_back) {
            rows.emplace_back("back-to-back",
                              time_back_to_back(label, o.warmup, o.batches, o.batch, kDefaultStream, poison, run, check));
        }
        for (const auto& [method, runs] : rows) {
            print_row(method, k.name, n, runs, device);
            if (runs.failed) {
                std::fprintf(stderr, "public_timer: %s at n = %zu: %d of %d runs wrong, first: %s\n", k.name, n,
                             runs.failed, runs.checked, runs.first_failure.c_str());
                all_exact = false;
            }
        }
        std::fflush(stdout);
    }
    return all_exact;
}

}  // namespace

int main(int argc, char** argv) {
    try {  // UsageError: common/options.h, as the stages' options throw it
        const TimerOptions options = parse(argc, argv);
        const DeviceInfo device = open_device(0, std::nullopt);
        L2Flusher flusher(device.l2_bytes);
        char date[64];
        const std::time_t now = std::time(nullptr);
        std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
        std::printf("# public_timer (%s) on %s\n# %s\n# peak: %s\n# date: %s\n", kProgram,
                    describe_device(device).c_str(), describe_software(device).c_str(), describe_peak(device).c_str(),
                    date);
        std::printf("# flushed: %d warm-ups, %d timed, L2 flushed (%zu MiB read) before each; back-to-back: 1 + %d "
                    "checked runs, then %d batches of %d launches\n",
                    options.warmup, options.iters, flusher.bytes() >> 20, options.warmup, options.batches,
                    options.batch);
        std::printf("timing,program,kernel,type,n,bytes,runs,median_ms,min_ms,max_ms,gbps,pct_peak,verified,checked_runs,failed_runs\n");
        bool all_exact = true;
        for (std::size_t n : options.sizes) all_exact = time_size(n, options, device, flusher) && all_exact;
        return all_exact ? 0 : 1;
    } catch (const UsageError& e) {
        std::fprintf(stderr, "public_timer: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fflush(stdout);
        std::fprintf(stderr, "public_timer: %s\n", e.what());
        return 3;
    }
}
