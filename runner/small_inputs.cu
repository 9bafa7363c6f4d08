// small_inputs: what a reduction costs beyond its bytes (docs/11-fixed-costs.md).
//
// At each n, in one run, on one input: the launch floor (one launch that reads nothing),
// the same launch after an occupancy query (what asking on every call would cost), the
// read floor (one launch that reads the n values and combines nothing), up to one tile the
// one-tile reduction (one block, nothing but the reduction), every stage,
// and CUB; each time also as a multiple of the ideal, launch floor + bytes / peak. With
// --batch K, also K reductions one after another, as K launches into a stream and as one
// replay of the same K captured in a CUDA Graph, per reduction, against the floor of K
// empty launches submitted the same way; the read floor is batched the same way too.
//
//   build/release/bin/small_inputs --type int --sweep 2^10:2^24
//   build/release/bin/small_inputs --stages reduce6,reduce7 --batch 32 --sweep 2^16:2^22 --csv
//   build/release/bin/small_inputs --stages reduce7 --variants --n 2^20   # every finish, each against the floor
#include <algorithm>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fixed_costs.h"
#include "stage_main.h"
#include "stages.h"

namespace {

constexpr const char* kName = "small_inputs";

// One result row: a Record, with what this program adds to it.
struct Row {
    Row(std::string experiment_, Record record_, int batch_ = 1, std::string submitted_ = "single")
        : experiment(std::move(experiment_)), record(std::move(record_)), batch(batch_), submitted(std::move(submitted_)) {}
    std::string experiment;  // "floor", "stage", "cub", "batch"
    Record record;
    int batch = 1;           // reductions per timed run
    std::string submitted;   // "single": one reduction per run; a batch's "stream" or "graph"
    bool launch_floor = false;       // the launch floor itself: the yardstick of the rows submitted the same way
    std::optional<double> floor_ms;  // the launch floor submitted the same way, per launch
    std::optional<double> ideal_ms;  // floor + bytes per reduction / peak
    double per_reduction_ms() const { return record.median_ms / batch; }
    std::optional<double> x_ideal() const {
        if (!ideal_ms || *ideal_ms <= 0) return std::nullopt;
        return per_reduction_ms() / *ideal_ms;
    }
};

// This program's own options, taken off the command line before the shared parser sees it.
struct SmallOptions {
    std::vector<const Stage*> stages = all_stages();
    int batch = 0;  // 0: no batches
};

std::string take_value(std::vector<std::string>& args, std::size_t at) {
    if (at + 1 >= args.size()) throw UsageError(args[at] + " needs a value");
    std::string value = args[at + 1];
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(at), args.begin() + static_cast<std::ptrdiff_t>(at) + 2);
    return value;
}

SmallOptions take_small_options(std::vector<std::string>& args) {
    SmallOptions small;
    for (std::size_t i = 0; i < args.size();) {
        if (args[i] == "--stages") {
            std::stringstream names(take_value(args, i));
            small.stages.clear();
            for (std::string name; std::getline(names, name, ',');) {
                const Stage* stage = find_stage(name);
                if (!stage) throw UsageError("--stages: no stage named '" + name + "' in this tree");
                small.stages.push_back(stage);
            }
        } else if (args[i] == "--batch") {
            const std::string value = take_value(args, i);
            const auto k = parse_count(value);
            if (!k || *k < 1 || *k > 4096) throw UsageError("--batch takes K from 1 to 4096, not '" + value + "'");
            small.batch = static_cast<int>(*k);
        } else {
            ++i;
        }
    }
    return small;
}

double transfer_ms(std::size_t bytes, const Record& r) {
    return r.peak_gbps ? bytes / (*r.peak_gbps * 1e9) * 1e3 : 0;
}

// Fill each row's floor and ideal: the launch floor submitted the same way (single runs,
// or a batch in a stream, or in a graph), plus one reduction's bytes at the peak.
void against_floors(std::vector<Row>& rows) {
    for (Row& row : rows) {
        for (const Row& floor : rows) {
            if (floor.launch_floor && floor.submitted == row.submitted) {
                row.floor_ms = floor.per_reduction_ms();
            }
        }
        if (!row.floor_ms) continue;
        row.ideal_ms = *row.floor_ms + transfer_ms(row.record.bytes / row.batch, row.record);
    }
}

std::string us(std::optional<double> ms) { return ms ? fixed(*ms * 1e3, 2) : ""; }
std::string ratio(std::optional<double> value) { return value ? fixed(*value, 3) : ""; }

const std::vector<std::string> kColumns = {
    "experiment", "stage", "kernel", "variant", "type", "n", "bytes_per_reduction", "block", "batch", "submitted", "runs",
    "median_us", "min_us", "max_us", "per_reduction_us", "gbps", "pct_peak", "floor_us", "ideal_us", "x_ideal",
    "verified", "check", "distinct_results", "data"};

void write_rows_csv(std::ostream& out, const std::vector<Row>& rows, bool with_header) {
    if (with_header) {
        for (std::size_t c = 0; c < kColumns.size(); ++c) out << (c ? "," : "") << kColumns[c];
        out << "\n";
    }
    for (const Row& row : rows) {
        const Record& r = row.record;
        const std::vector<std::string> cells = {
            row.experiment, r.stage, r.kernel, r.variant, r.type, std::to_string(r.n),
            std::to_string(r.bytes / row.batch), std::to_string(r.block), std::to_string(row.batch), row.submitted,
            std::to_string(r.runs), us(r.median_ms), us(r.min_ms), us(r.max_ms), us(row.per_reduction_ms()),
            fixed(r.gbps, 1), r.pct_peak ? fixed(*r.pct_peak, 1) : "", us(row.floor_ms), us(row.ideal_ms),
            ratio(row.x_ideal()), r.verified ? "yes" : "no", r.check, std::to_string(r.distinct_results), r.data};
        for (std::size_t c = 0; c < cells.size(); ++c) out << (c ? "," : "") << csv_field(cells[c]);
        out << "\n";
    }
}

void print_rows(std::ostream& out, const std::vector<Row>& rows) {
    std::vector<std::vector<std::string>> cells = {{"experiment", "stage", "kernel [variant]", "batch", "per reduction us",
                                                    "floor us", "ideal us", "x ideal", "GB/s", "check"}};
    for (const Row& row : rows) {
        const Record& r = row.record;
        cells.push_back({row.experiment, r.stage, r.kernel + (r.variant.empty() ? "" : " [" + r.variant + "]"),
                         std::to_string(row.batch), us(row.per_reduction_ms()), us(row.floor_ms), us(row.ideal_ms),
                         ratio(row.x_ideal()), fixed(r.gbps, 0), r.check});
    }
    print_aligned(out, cells, 3);
}

// Every (stage, config) to time: each stage at the command line's choices, or with
// --variants every labelled variant it declares.
std::vector<std::pair<const Stage*, RunConfig>> stage_runs(const SmallOptions& small, const Options& options,
                                                           const DeviceInfo& device) {
    std::vector<std::pair<const Stage*, RunConfig>> runs;
    for (const Stage* stage : small.stages) {
        for (RunConfig& config : stage_configs(*stage, options, device)) runs.emplace_back(stage, std::move(config));
    }
    return runs;
}

template <typename T>
std::vector<Row> measure_at(const DeviceInput<T>& input, const std::vector<std::pair<const Stage*, RunConfig>>& runs,
                            int batch_size, BenchContext& context) {
    std::vector<Row> rows;
    rows.emplace_back("floor", bench_launch_floor(input, context)).launch_floor = true;
    rows.emplace_back("floor", bench_launch_after_query(input, context));
    rows.emplace_back("floor", bench_read_floor(input, context));
    if (input.n > 0 && input.n <= one_tile_capacity<T>()) rows.emplace_back("floor", bench_one_tile(input, context));
    for (const auto& [stage, config] : runs) rows.emplace_back("stage", bench_stage(*stage, config, input, context));
    rows.emplace_back("cub", bench_cub(input, context));
    if (cub_has_not_guaranteed()) rows.emplace_back("cub", bench_cub_not_guaranteed(input, context));
    if (batch_size > 0) {
        const BatchInputs<T> batch = make_batch_inputs(input, batch_size, context.device.l2_bytes, context.stream);
        for (Submission how : {Submission::Stream, Submission::Graph}) {
            const std::string submitted(submission_name(how));
            rows.emplace_back("batch", bench_floor_batch(batch, how, context), batch_size, submitted).launch_floor = true;
            rows.emplace_back("batch", bench_read_floor_batch(batch, how, context), batch_size, submitted);
            for (const auto& [stage, config] : runs) {
                rows.emplace_back("batch", bench_stage_batch(*stage, config, batch, how, context), batch_size, submitted);
            }
        }
    }
    against_floors(rows);
    return rows;
}

template <typename T>
int run_typed(const SmallOptions& small, const Options& options) {
    const DeviceInfo device = open_device(options.device, options.peak_gbps);
    const std::vector<std::size_t> sizes = run_sizes(options);
    const auto runs = stage_runs(small, options, device);
    const std::size_t largest = sizes.back();
    MemoryPlan plan = stage_memory_plan<T>(runs, largest, L2Flusher::bytes_for(device.l2_bytes));
    if (small.batch) {
        plan.add("batch inputs", batch_copies(largest * sizeof(T), small.batch, device.l2_bytes) *
                                      batch_stride(largest, sizeof(T)) * sizeof(T));
    }
    require_device_memory(plan, "n = " + count_text(largest) + " " + std::string(type_name(options.type)) + " values");

    L2Flusher flusher(device.l2_bytes);
    CudaStream stream;
    BenchContext context{device, options, flusher, stream};
    const bool table = options.format != OutputFormat::Csv;
    if (table) {
        std::cout << kName << ": the launch floor, the read floor, the stages and " << cub_version()
                  << "'s DeviceReduce::Sum\n  " << describe_device(device) << "\n  " << describe_peak(device)
                  << "\n  median of " << options.iters << " timed runs after 1 checked run and " << options.warmup
                  << " warm-ups, L2 flushed before each run (a batch: before each batch)\n";
    }
    bool all_verified = true;
    for (std::size_t n : sizes) {
        const DeviceInput<T> input = make_device_input<T>(n, options.seed, options.data);
        const std::vector<Row> rows = measure_at(input, runs, small.batch, context);
        for (const Row& row : rows) all_verified = all_verified && row.record.verified;
        if (table) {
            std::cout << "\nn = " << count_text(n) << " " << type_name(options.type) << "\n";
            print_rows(std::cout, rows);
        } else {
            write_rows_csv(std::cout, rows, n == sizes.front());
        }
        std::cout.flush();
    }
    if (table) {
        std::cout << "\nideal = launch floor (submitted the same way) + bytes per reduction / peak; x ideal = per"
                     " reduction time / ideal.\n";
    }
    return all_verified ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    ProgramSpec spec;
    spec.name = kName;
    spec.summary = "the launch floor, the read floor, every stage and CUB, and graphs against streams";
    spec.sweep = true;
    spec.more_options =
        "  --stages A,B      time only these stages (default: every stage)\n"
        "  --batch K         also K reductions per timed run, in a stream and in a CUDA Graph\n";
    SmallOptions small;
    Options options;
    try {
        small = take_small_options(args);
        for (const Stage* stage : small.stages) {
            spec.min_block = std::max(spec.min_block, stage->min_block);
            spec.max_block = std::min(spec.max_block, stage->max_block);
        }
        spec.block_owner = "the stages timed";
        spec.stage_variants = stage_variants(small.stages);
        options = parse_options(args, spec);
    } catch (const UsageError& e) {
        std::fprintf(stderr, "%s: %s\n", kName, e.what());
        return 2;
    }
    if (options.help) {
        std::cout << usage_text(spec);
        return 0;
    }
    return run_reporting_errors(kName, [&] {
        return with_value_type(options.type, [&](auto zero) { return run_typed<decltype(zero)>(small, options); });
    });
}
