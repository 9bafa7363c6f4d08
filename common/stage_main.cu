#include "stage_main.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <new>
#include <utility>

#include "benchmark.h"
#include "stages.h"

namespace {

// " (uniform in [0, 1))" for --data uniform; nothing for the default integers
std::string data_note(const Options& options) {
    return options.data == InputData::Uniform ? " (uniform in [0, 1), checked against a correctly rounded sum)" : "";
}

// "256": --block, or the stages' default_block; where their defaults differ, each one that
// differs from the first's: "256 (reduce7 512)".
std::string block_text(const Program& program, const Options& options) {
    if (options.block != 0 || program.stages.empty()) return std::to_string(run_config(reduce0_stage, options).block);
    const int first = program.stages.front()->default_block;
    std::string others;
    for (const Stage* stage : program.stages) {
        if (stage->default_block != first) others += ", " + std::string(stage->name) + " " + std::to_string(stage->default_block);
    }
    return std::to_string(first) + (others.empty() ? "" : " (" + others.substr(2) + ")");
}

// "n = 67,108,864 (2^26) float values = 268.4 MB, block 256, seed 2026"
std::string problem_line(const Options& options, const std::string& block, std::size_t n) {
    const std::size_t bytes = n * type_size(options.type);
    const std::string power = count_text(n);  // "2^26", or the plain number
    return "n = " + with_thousands(n) + (n > 1 && power.find('^') != std::string::npos ? " (" + power + ")" : "") + " " +
           std::string(type_name(options.type)) + " values" + data_note(options) + " = " +
           bytes_text(static_cast<double>(bytes)) + ", block " + block + ", seed " +
           std::to_string(options.seed);
}

// "n = 2^10 ... 2^28 float values, block 256, seed 2026"
std::string sweep_line(const Options& options, const std::string& block, std::size_t from, std::size_t to) {
    return "n = " + count_text(from) + " ... " + count_text(to) + " " + std::string(type_name(options.type)) +
           " values" + data_note(options) + ", block " + block + ", seed " +
           std::to_string(options.seed);
}

std::string method_line(const Options& options, const L2Flusher& flusher) {
    if (options.timing == TimingMethod::BackToBack) {
        return "back-to-back: median of " + std::to_string(options.iters) + " batches of " +
               std::to_string(options.batch) + " launches with nothing between them (one event pair a batch, " +
               "its time / " + std::to_string(options.batch) + "), after 1 checked run and " +
               std::to_string(options.warmup) + " warm-ups; no L2 flush; each launch is the whole reduction to " +
               "one value, and each batch's last result is checked";
    }
    return "median of " + std::to_string(options.iters) + " timed runs after 1 checked run and " +
           std::to_string(options.warmup) + " warm-ups; before each run the L2 is flushed (a " +
           bytes_text(static_cast<double>(flusher.bytes())) +
           " read); each run is the whole reduction to one value, and every run's result is checked";
}

// What to time, in order: each stage with the options' config, reduce0 unless
// --no-baseline, and with --variants every labelled variant of each stage.
std::vector<std::pair<const Stage*, RunConfig>> timed_kernels(const Program& program, const Options& options,
                                                              const DeviceInfo& device) {
    std::vector<std::pair<const Stage*, RunConfig>> kernels;
    for (const Stage* stage : program.stages) {
        const bool only_baseline = stage == &reduce0_stage && program.stages.size() > 1;
        if (!options.baseline && only_baseline) continue;
        for (RunConfig& config : stage_configs(*stage, options, device)) kernels.emplace_back(stage, std::move(config));
    }
    return kernels;
}

// "input: generated on the GPU in 5.4 ms; expected sum computed on the host in 290 ms (16 threads)"
template <typename T>
std::string input_line(const DeviceInput<T>& input) {
    char text[200];
    std::snprintf(text, sizeof text,
                  "input: generated on the GPU in %.1f ms; expected sum computed on the host in %.0f ms (%d thread%s)",
                  input.generate_ms, input.reference_ms, input.reference_threads,
                  input.reference_threads == 1 ? "" : "s");
    return text;
}

template <typename T>
int run_typed(const Program& program, const Options& options) {
    const DeviceInfo device = open_device(options.device, options.peak_gbps);
    const std::vector<std::size_t> sizes = run_sizes(options);
    const auto kernels = timed_kernels(program, options, device);

    // Everything the largest size needs must fit before anything is allocated: a request
    // too large for the GPU is one line and exit status 3, not a failure halfway through.
    const std::size_t largest = sizes.back();
    const std::string largest_text = "n = " + count_text(largest) + " " + std::string(type_name(options.type)) + " values";
    MemoryPlan plan = stage_memory_plan<T>(kernels, largest, L2Flusher::bytes_for(device.l2_bytes));
    require_device_memory(plan, largest_text);
    // The copy yardstick needs a second array as large as the input. Where that does not
    // fit, the stages and CUB still run, and the table says why the copy is missing.
    bool with_copy = program.yardsticks;
    std::string copy_note;
    if (with_copy) {
        plan.add("copy", largest * sizeof(T));
        const DeviceMemory memory = device_memory();
        if (const auto shortfall = memory_shortfall(plan, largest_text + " and their copy", memory.free_bytes,
                                                    memory.total_bytes)) {
            with_copy = false;
            copy_note = "copy: not timed: " + *shortfall;
        }
    }
    L2Flusher flusher(device.l2_bytes);
    CudaStream stream;
    BenchContext context{device, options, flusher, stream};

    const bool table = options.format == OutputFormat::Table;
    const std::string block = block_text(program, options);
    if (table) {
        print_header(std::cout, RunHeader{program.spec.name + ": " + program.spec.summary, describe_device(device),
                                          describe_peak(device), describe_software(device),
                                          options.sweep ? sweep_line(options, block, sizes.front(), sizes.back())
                                                        : problem_line(options, block, sizes.front()),
                                          method_line(options, flusher)});
    }
    if (!copy_note.empty()) (table ? std::cout : std::cerr) << copy_note << "\n";
    std::vector<Record> all;
    bool all_verified = true;
    for (std::size_t n : sizes) {
        const DeviceInput<T> input = make_device_input<T>(n, options.seed, options.data);
        if (table && !options.sweep) std::cout << "  " << input_line(input) << "\n";
        std::vector<Record> records;
        for (const auto& [stage, config] : kernels) records.push_back(bench_stage(*stage, config, input, context));
        if (program.yardsticks) {
            records.push_back(bench_cub(input, context));
            if (cub_has_not_guaranteed()) records.push_back(bench_cub_not_guaranteed(input, context));
            if (with_copy) records.push_back(bench_copy(input, context));
        }
        compare_records(records);
        for (const Record& r : records) all_verified = all_verified && r.verified;
        if (table) {
            std::cout << "\n";
            if (options.sweep) std::cout << problem_line(options, block, n) << "\n  " << input_line(input) << "\n";
            print_table(std::cout, records);
        } else if (options.format == OutputFormat::Csv) {
            write_csv(std::cout, records, all.empty());
        }
        std::cout.flush();
        all.insert(all.end(), records.begin(), records.end());
    }
    if (options.format == OutputFormat::Json) write_json(std::cout, all);
    if (table) {
        std::cout << "\nGB/s = n x " << type_size(options.type)
                  << " bytes / median time (the copy: 2 x that, read + write). x reduce0, x CUB: their median time /"
                     " this median time.\n";
        if (options.data == InputData::Uniform) {
            std::cout << "ulp error: how far the first run's result is from the correctly rounded sum, in units in the"
                         " last place.\ndistinct: how many different results the "
                      << 1 + options.warmup + options.iters << " runs gave (1: the same bits every run).\n";
        }
        if (!all_verified) std::cout << "Some results failed verification: see the check column.\n";
    }
    return all_verified ? 0 : 1;
}

}  // namespace

namespace {
// A function's static, made on first use: registration runs in another file's static
// initializer, which may come before this file's.
OperatorProgram& operator_program() {
    static OperatorProgram program;
    return program;
}
}  // namespace

std::vector<RunConfig> stage_configs(const Stage& stage, const Options& options, const DeviceInfo& device) {
    if (!options.variants) return {run_config(stage, options)};
    // Every labelled variant the stage declares (variant.h), on top of the command line's choices.
    std::vector<RunConfig> configs;
    RunConfig config = run_config(stage, options);
    for (VariantChoices& choices : variant_runs(stage.variants, options.variant_choices, options.type,
                                                device.cc_major * 10 + device.cc_minor)) {
        config.variants = std::move(choices);
        configs.push_back(config);
    }
    return configs;
}

std::vector<std::size_t> run_sizes(const Options& options) {
    std::vector<std::size_t> sizes;
    if (options.sweep) {
        for (int k = options.sweep->from_log2; k <= options.sweep->to_log2; ++k) sizes.push_back(std::size_t{1} << k);
    } else {
        sizes.push_back(options.n);
    }
    return sizes;
}

void register_operator_program(OperatorProgram program) { operator_program() = std::move(program); }

int run_program(int argc, char** argv, const Program& program) {
    const std::string name = program.spec.name;
    const std::vector<std::string> args(argv + 1, argv + argc);
    ProgramSpec spec = program.spec;
    if (const OperatorProgram& ops = operator_program(); ops.run) {
        if (std::find(args.begin(), args.end(), "--op") != args.end()) return ops.run(name, args);
        spec.more_options += ops.help;
        spec.op_types = ops.types;
    }
    Options options;
    try {
        options = parse_options(args, spec);
    } catch (const UsageError& e) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
        return 2;
    }
    if (options.help) {
        std::cout << usage_text(spec);
        return 0;
    }
    return run_reporting_errors(name, [&] {
        if (options.explain) {  // host only: replays the kernel's tree, touches no GPU
            const Stage& stage = *program.stages.back();
            const TreeTrace trace = stage.trace(static_cast<unsigned>(run_config(stage, options).block));
            print_explain(std::cout, stage.name, trace, analyze_tree(trace));
            if (type_size(options.type) != 4) {  // the tree is the same; its bank conflicts are not
                std::cout << "(--type " << type_name(options.type)
                          << ": the tree is the same, but the bank conflicts above are for 4-byte values; 8-byte values "
                             "are not modelled)\n";
            }
            return 0;
        }
        return with_value_type(options.type,
                               [&](auto zero) { return run_typed<decltype(zero)>(program, options); });
    });
}

int stage_main(int argc, char** argv, const Stage& stage, bool with_yardsticks) {
    Program program;
    program.spec.name = stage.name;
    program.spec.summary = std::string(stage.idea) + " (kernel " + stage.kernel + ")";
    program.spec.min_block = stage.min_block;
    program.spec.max_block = stage.max_block;
    program.spec.block_owner = stage.name;
    program.spec.explain = stage.trace != nullptr;
    if (&stage != &reduce0_stage) program.stages.push_back(&reduce0_stage);
    program.stages.push_back(&stage);
    program.spec.stage_variants = stage_variants(program.stages);
    program.yardsticks = with_yardsticks;
    return run_program(argc, argv, program);
}
