// grid_layout_probe: does reduce7 lose bandwidth to its grid layout? (issue 31)
//
// reduce7 reads 2^30 ints at ~3,110 GB/s on the H100; the same loop body in a grid of one
// tile per block reads ~3,174. This probe sums the same input with reduce7's loop body
// (256 threads, 16-byte vector loads, `loads` independent loads issued before any add,
// warp shuffles, the warps' sums through shared memory, one atomicAdd per block for int)
// and changes only how the tiles are handed to the blocks:
//
//   resident-stride      the blocks that fit at once (occupancy x SMs), each striding over
//                        the tiles (tile b, b + grid, b + 2 grid, ...): reduce7's layout.
//                        At any moment the grid reads ~1056 tiles spread over the input.
//   resident-contiguous  the same grid, each block a contiguous run of tiles: at any
//                        moment ~1056 separate streams, each walking its own region.
//   resident-dynamic     the same grid, the tiles handed out as the blocks ask (a counter
//                        in global memory, one atomic per tile): the share of work follows
//                        each SM's speed, as in one-shot, with a resident grid.
//   one-shot             one tile per block (262,144 blocks at 2^30 int): the block
//                        scheduler hands out tiles in order, so the reads move through
//                        the input as one front, and a block that finishes early is
//                        replaced by the next one (no SM waits for a slow neighbour).
//   one-shot-512x3       512 threads, each 3 consecutive vectors (thread t reads vectors
//                        3t .. 3t+2 of its block's chunk), one chunk per block: the shape
//                        of simveit/effective_reduction's kernel_9, ~3,188 GB/s.
//   one-shot-512x4       one-shot with 512 threads a block (a 32 KiB tile): reduce7 at
//                        --block 512 with its atomic finish, but for the result's zeroing.
//   one-shot-512x4+memset  the same, with the result zeroed by a memset before every launch,
//                        inside the timed region, as reduce7's launcher does: the pair
//                        isolates what that memset node costs (back to back, at 2^26 a
//                        launch lasts about 90 us).
//   one-shot-512x4+counted  the same grid with a finish that needs no memset: the blocks
//                        add into a total in the workspace and count themselves done, and
//                        the last copies the total to the result and zeroes total and
//                        count for the next launch (int only; one more atomic per block).
//   one-shot-512x4+packed+release, +acquire, +acq_rel  +packed with the word's add ordered
//                        as named (int only): a release compiles to MEMBAR.ALL.GPU before the
//                        add, an acquire to CCTL.IVALL (the L1's invalidation) after it, and
//                        +fenced's __threadfence() to MEMBAR.SC.GPU and CCTL.IVALL: which part
//                        of a fence in every block costs what.
//   one-shot-512x4+grouped-release  +grouped with each block's count added with release
//                        only, the acquire (a fence) in a group's last block alone.
//   one-shot-512x4+grouped-flagged, resident-512x4+grouped-flagged  +grouped with no fence:
//                        each block's partial and the launch's number in one 8-byte word, the
//                        last block reading each word until it shows this launch (flagged_finish).
//   bulk-resident        resident-stride's tiles and grid stride, but each tile brought into
//                        shared memory by Hopper's bulk copy (cp.async.bulk, one request per
//                        tile, 2 tiles in flight per block) instead of 16-byte loads; its
//                        32 KiB of shared memory a block leave fewer blocks resident (792
//                        on the H100, against 1,056).
//   bulk-one-shot        one-shot's grid and tiles, by the bulk copy.
//   one-shot-waves-kK    one-shot's kernel with the grid capped to K x resident blocks
//                        (K = 2, 4, 8), striding: where between resident and one-shot
//                        the gain appears.
// With --loads, also the same layouts for resident-stride and one-shot with N = 1, 2, 4,
// 8, 16 loads whose machine code really issues all N before the first add (the kernel
// strided_tiles_all_loads_first, __launch_bounds__(256, 1): see below), labelled
// resident-stride-loadsN and one-shot-loadsN.
//
// The finish: int adds each block's sum into the result with one atomicAdd (reduce7's
// int default). float writes each block's sum to a partials array and a second launch
// of one block adds them in a fixed order (deterministic; the time includes it);
// the layouts labelled "+atomic" are float with reduce7's atomic finish instead, which
// also writes its partial (for the check below) and then atomically adds it.
//
// Every run is checked. int: each element is 1..15, from a hash of its index and the
// seed; the host sums the same values, and the result must match modulo 2^32 (both
// sides wrap). float: each element is 1 or 2, so every block's partial is a whole number
// below 2^24 and exact in float; the partials (copied back on the first and the last
// run) must add up exactly, in 64-bit integers, to the host's sum - a dropped or doubled
// element changes that by at least 1 - and the final float total must lie within a
// rounding bound of it. Back-to-back int runs accumulate R results without zeroing: the
// result must be R x the sum, modulo 2^32.
//
// Two timings for every layout:
//   flushed       before each run a read of a buffer 2 x the L2 size (common/timing.h,
//                 the harness's method), then one event pair around the run; 20 warm-ups,
//                 100 timed: median, min and max.
//   back-to-back  1 batch of R = 100 launches to warm up, then 10 batches of R launches
//                 back to back with one event pair around each batch: median, min and
//                 max of the per-launch time (batch / R), as the public kernels time.
//
//   build/release/bin/grid_layout_probe                          # int and float, 2^26, 2^28, 2^30
//   build/release/bin/grid_layout_probe --type int --n 2^30
//   build/release/bin/grid_layout_probe --only resident-stride --runs 1 --warmup 0 --batches 0   # one launch (ncu)
//   build/release/bin/grid_layout_probe --trace-blocks DIR        # block_trace_<layout>.csv at 2^30 int
//   build/release/bin/grid_layout_probe --loads                   # also the loads-N kernels
//
// Output: CSV, one line per (type, n, layout, method), after '#' lines naming the GPU,
// driver and date. Exit status: 0 all verified, 1 a check failed, 2 bad input, 3 CUDA error.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda_check.h"
#include "device_buffer.h"
#include "device_info.h"
#include "grid_layout_kernels.cuh"
#include "options.h"  // parse_count: counts as the stages take them
#include "stats.h"
#include "timing.h"

namespace {

using namespace grid_probe;  // the input and the kernels (grid_layout_kernels.cuh)

// ---------------------------------------------------------------- the layouts
using KernelFn = void (*)(Args, Finish);

struct Layout {
    std::string label;
    KernelFn kernel;
    unsigned threads;
    std::size_t vectors_per_block_step;  // a tile or a chunk, in vectors
    enum Grid { Resident, OneShot, Waves } grid;
    int waves = 0;  // K of one-shot-waves-kK
    bool atomic_float = false;
    bool traced = false;  // --trace-blocks records this one
    bool dynamic = false;  // takes its tiles from a counter (resident-dynamic)
    bool bulk_copy = false;  // Hopper's cp.async.bulk: sm_90 and later
    bool zero_each_run = false;  // a memset of the result before every launch, timed (reduce7's atomic finish)
    std::optional<Finish> finish = std::nullopt;  // another finish than the type's usual one (int Atomic, float Partials)
};

template <typename T>
std::vector<Layout> layouts(bool with_loads) {
    constexpr std::size_t kTile = 4 * 256;
    std::vector<Layout> list = {
        {"resident-stride", strided_tiles<256, 4, T>, 256, kTile, Layout::Resident, 0, false, true},
        {"resident-contiguous", contiguous_tiles<256, 4, T>, 256, kTile, Layout::Resident},
        {"resident-dynamic", dynamic_tiles<256, 4, T>, 256, kTile, Layout::Resident, 0, false, true, true},
        {"one-shot", strided_tiles<256, 4, T>, 256, kTile, Layout::OneShot, 0, false, true},
        {"one-shot-512x3", consecutive_vectors<512, 3, T>, 512, 3 * 512, Layout::OneShot},
        {"one-shot-512x4", strided_tiles<512, 4, T>, 512, 4 * 512, Layout::OneShot},
        {"one-shot-512x4+memset", strided_tiles<512, 4, T>, 512, 4 * 512, Layout::OneShot,
         0, false, false, false, false, true},
        {"bulk-resident", bulk_copied_tiles<256, 2, T>, 256, kTile, Layout::Resident, 0, false, false, false, true},
        {"bulk-one-shot", bulk_copied_tiles<256, 1, T>, 256, kTile, Layout::OneShot, 0, false, false, false, true},
    };
    const Layout one_shot_512x4 = list[5];  // the others' base: reduce7's default tile
    for (int k : {2, 4, 8}) {
        list.push_back({"one-shot-waves-k" + std::to_string(k), strided_tiles<256, 4, T>, 256, kTile, Layout::Waves, k});
    }
    if (with_loads) {
        const std::pair<int, KernelFn> loads[] = {
            {1, strided_tiles_all_loads_first<256, 1, T>}, {2, strided_tiles_all_loads_first<256, 2, T>},
            {4, strided_tiles_all_loads_first<256, 4, T>}, {8, strided_tiles_all_loads_first<256, 8, T>},
            {16, strided_tiles_all_loads_first<256, 16, T>}};
        for (const auto& [count, kernel] : loads) {
            const std::size_t tile = std::size_t(count) * 256;
            list.push_back({"resident-stride-loads" + std::to_string(count), kernel, 256, tile, Layout::Resident});
            list.push_back({"one-shot-loads" + std::to_string(count), kernel, 256, tile, Layout::OneShot});
        }
    }
    if constexpr (std::is_same_v<T, int>) {
        Layout counted = one_shot_512x4;
        counted.label += "+counted";
        counted.finish = Finish::Counted;
        list.insert(list.begin() + 7, counted);  // after one-shot-512x4+memset
        Layout packed = counted, fenced = counted;
        packed.label = "one-shot-512x4+packed";
        packed.finish = Finish::Packed;
        fenced.label = "one-shot-512x4+fenced";
        fenced.finish = Finish::Fenced;
        list.insert(list.begin() + 8, {packed, fenced});
        for (auto [suffix, finish] : {std::pair{"+release", Finish::PackedRelease}, {"+acquire", Finish::PackedAcquire},
                                      {"+acq_rel", Finish::PackedAcqRel}}) {
            Layout ordered = packed;  // +packed with the add ordered: which half of a fence costs
            ordered.label += suffix;
            ordered.finish = finish;
            list.push_back(ordered);
        }
    }
    if constexpr (std::is_same_v<T, float>) {  // reduce7's atomic finish, for float too
        std::vector<Layout> atomic;
        for (Layout layout : list) {
            layout.label += "+atomic";
            layout.atomic_float = true;
            layout.traced = false;
            atomic.push_back(layout);
        }
        list.insert(list.end(), atomic.begin(), atomic.end());
    }
    Layout grouped = one_shot_512x4;
    grouped.label += "+grouped";
    grouped.finish = Finish::Grouped;
    list.push_back(grouped);
    Layout grouped_resident = grouped;  // reduce7's float default at block 512 (last-block on the resident grid), grouped
    grouped_resident.label = "resident-512x4+grouped";
    grouped_resident.grid = Layout::Resident;
    list.push_back(grouped_resident);
    Layout grouped_release = grouped;  // the release by every block, the acquire in the last blocks alone
    grouped_release.label = "one-shot-512x4+grouped-release";
    grouped_release.finish = Finish::GroupedRelease;
    list.push_back(grouped_release);
    Layout grouped_flagged = grouped;  // no fence: each partial's word carries the launch's number
    grouped_flagged.label = "one-shot-512x4+grouped-flagged";
    grouped_flagged.finish = Finish::GroupedFlagged;
    list.push_back(grouped_flagged);
    Layout grouped_flagged_resident = grouped_flagged;
    grouped_flagged_resident.label = "resident-512x4+grouped-flagged";
    grouped_flagged_resident.grid = Layout::Resident;
    list.push_back(grouped_flagged_resident);
    return list;
}

// ---------------------------------------------------------------- options
struct ProbeOptions {
    std::vector<std::size_t> sizes;
    std::vector<std::string> types;
    std::vector<std::string> only;  // layout labels; empty: all
    int warmup = 20, runs = 100;    // flushed
    int batch = 100, batches = 10;  // back-to-back
    bool with_loads = false;
    std::string trace_dir;          // --trace-blocks DIR
    std::uint32_t seed = 2026;
};

struct ProbeUsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A count as the stages take it ("1000", "2^20": common/options.h), from 1 to 2^33.
std::size_t parse_probe_count(const std::string& text, const char* option) {
    const auto count = parse_count(text);
    if (count && *count >= 1 && *count <= (std::size_t{1} << 33)) return *count;
    throw ProbeUsageError(std::string(option) + " wants a whole number from 1 to 2^33 or 2^K, not '" + text + "'");
}

int parse_int(const std::string& text, const char* option, int lowest) {
    try {
        std::size_t used = 0;
        const int v = std::stoi(text, &used);
        if (used == text.size() && v >= lowest) return v;
    } catch (const std::exception&) {
    }
    throw ProbeUsageError(std::string(option) + " wants a whole number >= " + std::to_string(lowest) + ", not '" + text + "'");
}

std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> parts;
    std::size_t from = 0;
    while (from <= text.size()) {
        const std::size_t comma = text.find(',', from);
        const std::size_t to = comma == std::string::npos ? text.size() : comma;
        if (to > from) parts.push_back(text.substr(from, to - from));
        from = to + 1;
    }
    return parts;
}

const char* kUsage =
    "usage: grid_layout_probe [--n N]... [--type int|float]... [--only LAYOUT[,LAYOUT...]] [--loads]\n"
    "                         [--runs K] [--warmup W] [--batch R] [--batches B] [--trace-blocks DIR] [--seed S]\n"
    "  --n N             elements (2^K or a number; repeat for several; default 2^26, 2^28, 2^30)\n"
    "  --type T          int | float (repeat for both; default both)\n"
    "  --only L,...      these layouts only (labels as in the output)\n"
    "  --loads           also resident-stride-loadsN and one-shot-loadsN, N = 1, 2, 4, 8, 16\n"
    "  --runs K          flushed: timed runs (default 100; 0 skips the flushed timing)\n"
    "  --warmup W        flushed: untimed runs before (default 20)\n"
    "  --batch R         back-to-back: launches per batch (default 100)\n"
    "  --batches B       back-to-back: timed batches (default 10; 0 skips it)\n"
    "  --trace-blocks D  instead of timing: one traced run of resident-stride and one-shot at\n"
    "                    2^30 int (or the --n and --type given), D/block_trace_<layout>.csv\n";

ProbeOptions parse(int argc, char** argv) {
    ProbeOptions o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw ProbeUsageError(arg + " needs a value");
            return argv[++i];
        };
        if (arg == "--n") {
            o.sizes.push_back(parse_probe_count(value(), "--n"));
        } else if (arg == "--type") {
            const std::string t = value();
            if (t != "int" && t != "float") throw ProbeUsageError("--type wants int or float, not '" + t + "'");
            o.types.push_back(t);
        } else if (arg == "--only") {
            for (const std::string& l : split(value())) o.only.push_back(l);
        } else if (arg == "--loads") {
            o.with_loads = true;
        } else if (arg == "--runs") {
            o.runs = parse_int(value(), "--runs", 0);
        } else if (arg == "--warmup") {
            o.warmup = parse_int(value(), "--warmup", 0);
        } else if (arg == "--batch") {
            o.batch = parse_int(value(), "--batch", 1);
        } else if (arg == "--batches") {
            o.batches = parse_int(value(), "--batches", 0);
        } else if (arg == "--trace-blocks") {
            o.trace_dir = value();
        } else if (arg == "--seed") {
            o.seed = static_cast<std::uint32_t>(parse_int(value(), "--seed", 0));
        } else if (arg == "--help" || arg == "-h") {
            std::fputs(kUsage, stdout);
            std::exit(0);
        } else {
            throw ProbeUsageError("unknown option '" + arg + "' (--help lists them)");
        }
    }
    if (!o.trace_dir.empty()) {
        if (o.sizes.empty()) o.sizes = {std::size_t{1} << 30};
        if (o.types.empty()) o.types = {"int"};
        if (o.only.empty()) o.only = {"resident-stride", "resident-dynamic", "one-shot"};
    }
    if (o.sizes.empty()) o.sizes = {std::size_t{1} << 26, std::size_t{1} << 28, std::size_t{1} << 30};
    if (o.types.empty()) o.types = {"int", "float"};
    return o;
}

// ---------------------------------------------------------------- running one layout
struct CheckFailed : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Setup {
    const DeviceInfo& device;
    const ProbeOptions& options;
    L2Flusher& flusher;
    cudaStream_t stream;
};

struct Launch {
    unsigned blocks = 0, threads = 0;
    Finish finish = Finish::Atomic;
};

template <typename T>
class LayoutRun {
public:
    LayoutRun(const Layout& layout, const Setup& setup, const DeviceBuffer<T>& input, std::uint64_t exact)
        : layout_(layout), setup_(setup), input_(input), exact_(exact) {
        const std::size_t n = input.size();
        vectors_ = n / kVec;
        const std::size_t steps = std::max<std::size_t>(1, (vectors_ + layout.vectors_per_block_step - 1) /
                                                               layout.vectors_per_block_step);
        int per_sm = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, layout.kernel, layout.threads, 0));
        resident_ = static_cast<unsigned>(per_sm * setup.device.sms);
        std::size_t blocks = steps;  // one-shot
        if (layout.grid == Layout::Resident) blocks = std::min<std::size_t>(steps, resident_);
        if (layout.grid == Layout::Waves) blocks = std::min<std::size_t>(steps, std::size_t(layout.waves) * resident_);
        if (blocks > 0x7fffffffu) throw ProbeUsageError("n is too large for a grid of one block per tile");
        launch_.blocks = static_cast<unsigned>(blocks);
        launch_.threads = layout.threads;
        if (std::is_same_v<T, int>) launch_.finish = Finish::Atomic;
        else launch_.finish = layout.atomic_float ? Finish::PartialsAndAtomic : Finish::Partials;
        if (layout.finish) launch_.finish = *layout.finish;
        partials_ = DeviceBuffer<T>(launch_.blocks);
        const std::size_t groups = (launch_.blocks + layout.threads - 1) / layout.threads;
        group_sums_ = DeviceBuffer<T>(groups);
        packed_word_ = DeviceBuffer<unsigned long long>(1);
        CUDA_CHECK(cudaMemset(packed_word_.get(), 0, packed_word_.bytes()));
        next_tile_ = DeviceBuffer<unsigned long long>(1);
        out_ = DeviceBuffer<T>(1);
        total_ = DeviceBuffer<T>(1);  // Counted's total and count start at zero; the last block re-zeroes them
        blocks_done_ = DeviceBuffer<unsigned>(1 + groups);  // Grouped: the groups' count, then each group's
        flagged_ = DeviceBuffer<unsigned long long>(launch_.blocks + groups);  // launch number 0: none yet
        CUDA_CHECK(cudaMemset(flagged_.get(), 0, flagged_.bytes()));
        CUDA_CHECK(cudaMemset(total_.get(), 0, total_.bytes()));
        CUDA_CHECK(cudaMemset(blocks_done_.get(), 0, blocks_done_.bytes()));
        cudaFuncAttributes attributes{};
        CUDA_CHECK(cudaFuncGetAttributes(&attributes, layout.kernel));
        registers_ = attributes.numRegs;
        per_sm_ = per_sm;
    }

    unsigned blocks() const { return launch_.blocks; }
    int registers() const { return registers_; }
    int per_sm() const { return per_sm_; }

    void zero_result() { CUDA_CHECK(cudaMemsetAsync(out_.get(), 0, sizeof(T), setup_.stream)); }

    // One reduction: the kernel, and for the deterministic float finish the second launch.
    void run(BlockTrace* trace = nullptr) {
        if (++launch_number_ == 0) launch_number_ = 1;  // 0 marks a word never written
        const Args args{input_.get(), input_.size(), vectors_, out_.get(), partials_.get(), trace,
                        layout_.dynamic ? next_tile_.get() : nullptr, total_.get(), blocks_done_.get(),
                        packed_word_.get(), group_sums_.get(), flagged_.get(), launch_number_};
        // +memset: the result zeroed before each launch, inside the timed region, as reduce7's
        // launcher does for its atomic finish (a memset node between two kernels).
        if (layout_.zero_each_run) zero_result();
        // resident-dynamic's counter starts at 0 each run: one 8-byte memset inside the timed
        // region (about the cost of reduce7's zeroing of its result for the atomic finish).
        if (layout_.dynamic) CUDA_CHECK(cudaMemsetAsync(next_tile_.get(), 0, sizeof(unsigned long long), setup_.stream));
        layout_.kernel<<<launch_.blocks, launch_.threads, 0, setup_.stream>>>(args, launch_.finish);
        CUDA_CHECK_LAUNCH();
        if (launch_.finish == Finish::Partials) {
            sum_partials<T><<<1, 1024, 0, setup_.stream>>>(partials_.get(), launch_.blocks, out_.get());
            CUDA_CHECK_LAUNCH();
        }
    }
    // Whether the result must be zeroed before a launch (the finishes that add into it).
    bool zeroes_result() const {
        return launch_.finish == Finish::Atomic || launch_.finish == Finish::PartialsAndAtomic || launch_.finish == Finish::Fenced;
    }
    // Whether the result is zeroed before a timing, outside its timed region: where a launch
    // needs it, and for the one-launch finishes that write it (Counted, Packed, Grouped) too,
    // so that a last block that failed to write would leave 0, not the previous run's (equal) sum.
    bool zeroed_before_timing() const { return launch_.finish != Finish::Partials; }
    // Launches whose sums the result holds after `runs` of them: all (an atomic finish, not
    // zeroed between them) or the last one.
    std::uint64_t summed(std::uint64_t runs) const { return zeroes_result() && !layout_.zero_each_run ? runs : 1; }

    // `runs` results accumulated into the result (atomic finishes without zeroing between
    // launches) or 1 (the deterministic finish overwrites it). `full`: also the partials.
    void check(std::uint64_t runs, bool full, const char* when) {
        CUDA_CHECK(cudaStreamSynchronize(setup_.stream));
        T result{};
        CUDA_CHECK(cudaMemcpy(&result, out_.get(), sizeof(T), cudaMemcpyDeviceToHost));
        const std::uint64_t expected = exact_ * summed(runs);
        std::string failure;
        if constexpr (std::is_same_v<T, int>) {
            const auto got = static_cast<std::uint32_t>(result);
            const auto want = static_cast<std::uint32_t>(expected);
            if (got != want) failure = "sum " + std::to_string(got) + " (mod 2^32), expected " + std::to_string(want);
        } else {
            // Rounding: each of the blocks' adds into the total may round by half an ulp of
            // the total (atomic: in any order, and `runs` launches of them without zeroing);
            // the fixed-order tree does better. A bound of (blocks x runs + 1024) ulps.
            const double want = double(expected);
            const double ulp = std::ldexp(1.0, std::ilogb(std::max(want, 1.0)) - 23);
            const double bound = (double(launch_.blocks) * double(summed(runs)) + 1024.0) * ulp;
            if (!(std::fabs(double(result) - want) <= bound)) {
                failure = "sum " + std::to_string(double(result)) + ", expected " + std::to_string(want) + " within " +
                          std::to_string(bound);
            }
            if (full && failure.empty()) {  // each partial is exact: their total must be too
                std::vector<T> partials(launch_.blocks);
                if (launch_.finish == Finish::GroupedFlagged) {  // the partials are in the words' low halves
                    std::vector<unsigned long long> words(launch_.blocks);
                    CUDA_CHECK(cudaMemcpy(words.data(), flagged_.get(), words.size() * sizeof(words[0]), cudaMemcpyDeviceToHost));
                    for (std::size_t b = 0; b < words.size(); ++b) {
                        const auto bits = static_cast<std::uint32_t>(words[b]);
                        std::memcpy(&partials[b], &bits, sizeof(T));
                    }
                } else {
                    CUDA_CHECK(cudaMemcpy(partials.data(), partials_.get(), partials.size() * sizeof(T), cudaMemcpyDeviceToHost));
                }
                std::uint64_t total = 0;
                for (T p : partials) total += static_cast<std::uint64_t>(p);
                if (total != exact_) {
                    failure = "the blocks' partials add up to " + std::to_string(total) + ", expected " +
                              std::to_string(exact_) + " (an element dropped or counted twice)";
                }
            }
        }
        if (!failure.empty()) throw CheckFailed(layout_.label + " (" + when + "): " + failure);
    }

    TimingStats flushed() {
        std::vector<double> ms;
        CudaEvent start, stop;
        const ProbeOptions& o = setup_.options;
        for (int i = 0; i < 1 + o.warmup + o.runs; ++i) {
            if (zeroed_before_timing()) zero_result();
            setup_.flusher.flush(setup_.stream);
            CUDA_CHECK(cudaEventRecord(start, setup_.stream));
            run();
            CUDA_CHECK(cudaEventRecord(stop, setup_.stream));
            CUDA_CHECK(cudaEventSynchronize(stop));
            float elapsed = 0;
            CUDA_CHECK(cudaEventElapsedTime(&elapsed, start, stop));
            const bool first = i == 0, last = i == o.warmup + o.runs;
            check(1, first || last, "flushed");
            if (i >= 1 + o.warmup) ms.push_back(elapsed);
        }
        return summarize(ms);
    }

    TimingStats back_to_back() {
        std::vector<double> ms;
        CudaEvent start, stop;
        const ProbeOptions& o = setup_.options;
        for (int b = 0; b < 1 + o.batches; ++b) {  // batch 0 warms up
            if (zeroed_before_timing()) zero_result();
            CUDA_CHECK(cudaEventRecord(start, setup_.stream));
            for (int r = 0; r < o.batch; ++r) run();
            CUDA_CHECK(cudaEventRecord(stop, setup_.stream));
            CUDA_CHECK(cudaEventSynchronize(stop));
            float elapsed = 0;
            CUDA_CHECK(cudaEventElapsedTime(&elapsed, start, stop));
            // An atomic finish (int, and float's +atomic) adds every launch's sum into the result.
            check(zeroes_result() ? std::uint64_t(o.batch) : 1, b == o.batches, "back-to-back");
            if (b >= 1) ms.push_back(elapsed / o.batch);
        }
        return summarize(ms);
    }

private:
    const Layout& layout_;
    const Setup& setup_;
    const DeviceBuffer<T>& input_;
    std::uint64_t exact_;
    std::size_t vectors_ = 0;
    unsigned resident_ = 0;
    Launch launch_;
    DeviceBuffer<T> partials_, out_, total_, group_sums_;
    DeviceBuffer<unsigned long long> next_tile_, packed_word_, flagged_;
    DeviceBuffer<unsigned> blocks_done_;
    unsigned launch_number_ = 0;  // GroupedFlagged: counts this layout's launches
    int registers_ = 0, per_sm_ = 0;
};

void print_row(const char* type, std::size_t n, const std::string& layout, const char* method, unsigned blocks,
               unsigned threads, const TimingStats& s, std::size_t bytes, const DeviceInfo& device) {
    const double gbps = s.median > 0 ? bytes / (s.median * 1e-3) / 1e9 : 0;
    char pct[32] = "";
    if (device.peak.gbps) std::snprintf(pct, sizeof pct, "%.1f", 100.0 * gbps / *device.peak.gbps);
    std::printf("%s,%zu,%s,%s,%u,%u,%d,%.5f,%.5f,%.5f,%.1f,%s,yes\n", type, n, layout.c_str(), method, blocks, threads,
                s.runs, s.median, s.min, s.max, gbps, pct);
    std::fflush(stdout);
}

bool wanted(const ProbeOptions& o, const std::string& label) {
    return o.only.empty() || std::find(o.only.begin(), o.only.end(), label) != o.only.end();
}

template <typename T>
void trace_layout(LayoutRun<T>& run, const Layout& layout, const Setup& setup, std::size_t n) {
    DeviceBuffer<BlockTrace> trace(run.blocks());
    CUDA_CHECK(cudaMemset(trace.get(), 0, trace.bytes()));
    run.zero_result();
    run.run();  // warm-up: clocks, code
    run.zero_result();
    setup.flusher.flush(setup.stream);
    run.run(trace.get());
    run.check(1, true, "traced");
    std::vector<BlockTrace> blocks(run.blocks());
    CUDA_CHECK(cudaMemcpy(blocks.data(), trace.get(), trace.bytes(), cudaMemcpyDeviceToHost));
    unsigned long long first = ~0ull, last = 0;
    for (const BlockTrace& b : blocks) {
        first = std::min(first, b.start_ns);
        last = std::max(last, b.end_ns);
    }
    // When each SM finished its last block: the spread between the first SM to go idle and
    // the last is the tail, time in which part of the GPU no longer loads anything.
    std::vector<unsigned long long> sm_end(setup.device.sms, 0);
    for (const BlockTrace& b : blocks) {
        if (b.sm < sm_end.size()) sm_end[b.sm] = std::max(sm_end[b.sm], b.end_ns);
    }
    unsigned long long earliest_idle = ~0ull;
    for (unsigned long long e : sm_end) if (e) earliest_idle = std::min(earliest_idle, e);
    const std::string path = setup.options.trace_dir + "/block_trace_" + layout.label + ".csv";
    std::FILE* file = std::fopen(path.c_str(), "w");
    if (!file) throw std::runtime_error("cannot write " + path);
    std::fprintf(file, "block,sm,start_ns,end_ns\n");
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        std::fprintf(file, "%zu,%u,%llu,%llu\n", i, blocks[i].sm, blocks[i].start_ns - first, blocks[i].end_ns - first);
    }
    std::fprintf(file, "# %s n=%zu %s: %u blocks of %u threads, one run after an L2 flush; times from the first block's start\n",
                 layout.label.c_str(), n, std::is_same_v<T, int> ? "int" : "float", run.blocks(), layout.threads);
    std::fprintf(file, "# kernel span %.1f us; first SM idle at %.1f us, last at %.1f us (tail %.1f us, %.1f%% of the span)\n",
                 (last - first) * 1e-3, (earliest_idle - first) * 1e-3, (last - first) * 1e-3,
                 (last - earliest_idle) * 1e-3, 100.0 * (last - earliest_idle) / double(last - first));
    std::fclose(file);
    std::printf("# trace %s: %s, span %.1f us, tail (first SM idle to last) %.1f us\n", layout.label.c_str(), path.c_str(),
                (last - first) * 1e-3, (last - earliest_idle) * 1e-3);
}

template <typename T>
void probe_type(const char* type, const Setup& setup) {
    const ProbeOptions& o = setup.options;
    const std::vector<Layout> all = layouts<T>(o.with_loads);
    for (const std::string& label : o.only) {
        if (std::none_of(all.begin(), all.end(), [&](const Layout& l) { return l.label == label; })) {
            throw ProbeUsageError("--only: no layout '" + label + "' for " + type + (o.with_loads ? "" : " (the loads-N ones need --loads)"));
        }
    }
    for (std::size_t n : o.sizes) {
        DeviceBuffer<T> input(n);
        fill<T><<<1024, 256>>>(input.get(), n, o.seed);
        CUDA_CHECK_LAUNCH();
        const std::uint64_t exact = host_sum<T>(n, o.seed);
        CUDA_CHECK(cudaDeviceSynchronize());
        for (const Layout& layout : all) {
            if (!wanted(o, layout.label)) continue;
            if (layout.bulk_copy && setup.device.cc_major < 9) {
                std::fprintf(stderr, "grid_layout_probe: %s skipped: the bulk copy needs sm_90 or later\n", layout.label.c_str());
                continue;
            }
            LayoutRun<T> run(layout, setup, input, exact);
            // On stderr, so that stdout stays one CSV table after its '#' header lines.
            std::fprintf(stderr, "grid_layout_probe: %s %s n=%zu: %u blocks of %u threads, %d registers per thread, %d blocks per SM\n", type,
                        layout.label.c_str(), n, run.blocks(), layout.threads, run.registers(), run.per_sm());
            if (!o.trace_dir.empty()) {
                if (layout.traced || !o.only.empty()) trace_layout(run, layout, setup, n);
                continue;
            }
            const std::size_t bytes = n * sizeof(T);
            if (o.runs > 0) {
                print_row(type, n, layout.label, "flushed", run.blocks(), layout.threads, run.flushed(), bytes, setup.device);
            }
            if (o.batches > 0) {
                print_row(type, n, layout.label, "back-to-back", run.blocks(), layout.threads, run.back_to_back(), bytes,
                          setup.device);
            }
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const ProbeOptions options = parse(argc, argv);
        const DeviceInfo device = open_device(0, std::nullopt);
        for (std::size_t n : options.sizes) {
            const std::size_t need = n * 4 + L2Flusher::bytes_for(device.l2_bytes) + (std::size_t{64} << 20);
            if (need > device.memory_bytes) throw ProbeUsageError("n = " + std::to_string(n) + " does not fit in the GPU's memory");
        }
        L2Flusher flusher(device.l2_bytes);
        CudaStream stream;
        const Setup setup{device, options, flusher, stream};
        char date[64];
        const std::time_t now = std::time(nullptr);
        std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
        std::printf("# grid_layout_probe on %s\n# %s\n# peak: %s\n# date: %s\n", describe_device(device).c_str(),
                    describe_software(device).c_str(), describe_peak(device).c_str(), date);
        std::printf("# flushed: %d warm-ups, %d timed, L2 flushed (%zu MiB read) before each; back-to-back: 1 + %d batches of %d launches\n",
                    options.warmup, options.runs, flusher.bytes() >> 20, options.batches, options.batch);
        if (options.trace_dir.empty()) {
            std::printf("type,n,layout,method,blocks,threads,runs,median_ms,min_ms,max_ms,gbps,pct_peak,verified\n");
        }
        for (const std::string& type : options.types) {
            if (type == "int") probe_type<int>("int", setup);
            else probe_type<float>("float", setup);
        }
        return 0;
    } catch (const ProbeUsageError& e) {
        std::fprintf(stderr, "grid_layout_probe: %s\n", e.what());
        return 2;
    } catch (const CheckFailed& e) {
        std::fflush(stdout);
        std::fprintf(stderr, "grid_layout_probe: check failed: %s\n", e.what());
        return 1;
    } catch (const std::exception& e) {
        std::fflush(stdout);
        std::fprintf(stderr, "grid_layout_probe: %s\n", e.what());
        return 3;
    }
}
