// The command line every stage executable (reduce0 ... reduce7) and the runner (reduce_all)
// share. Parsing is pure host code: a bad option is reported before any CUDA call.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "value_type.h"
#include "variant.h"

// The values summed (common/input.h).
enum class InputData {
    Integers,  // nonzero integers with random signs, stored as T: every sum is exact (default)
    Uniform,   // real values uniform in [0, 1), float or double: measures rounding error
};

enum class OutputFormat { Table, Csv, Json };

// How a kernel is timed (common/timing.h). Flushed: one event pair around each run, the L2
// flushed before it, the median of the runs (the default: every run reads from DRAM, as a
// reduction of data that was just written elsewhere would). Back-to-back: batches of
// launches with nothing between them, one event pair over each batch, the median of the
// batches' per-launch times (the method of most published figures: a launch may overlap
// the previous one's tail, and an input that fits the L2 stays there).
enum class TimingMethod { Flushed, BackToBack };

// The largest --n the parser accepts: 2^40 values (4 TiB of float) is more than any GPU
// holds, and every byte count of such a run stays far below 2^64. What actually fits is
// checked against the GPU's free memory before anything is allocated (memory_plan.h).
constexpr int kMaxLog2Elements = 40;
constexpr std::size_t kMaxElements = std::size_t{1} << kMaxLog2Elements;

struct SizeSweep {
    int from_log2 = 10;
    int to_log2 = 28;
};

struct Options {
    std::size_t n = std::size_t{1} << 26;
    ValueType type = ValueType::Float32;
    int block = 0;  // --block; 0 where it is not given: each stage takes its own default_block (stage.h)
    int iters = 20;
    int warmup = 3;
    TimingMethod timing = TimingMethod::Flushed;
    int batch = 100;  // back-to-back: launches per timed batch
    std::uint64_t seed = 2026;
    int device = 0;
    std::optional<double> peak_gbps;  // overrides the device's theoretical peak
    bool baseline = true;             // also time reduce0, for the speedup column
    OutputFormat format = OutputFormat::Table;
    bool help = false;
    // The choices of the stages' labelled variants given on the command line, by name
    // (NAME -> CHOICE); the stages declare them (variant.h), the rest run their defaults.
    VariantChoices variant_choices;
    bool variants = false;  // time every labelled variant of every stage (each stage's own list)
    InputData data = InputData::Integers;
    // reduce0 ... reduce3
    bool explain = false;
    // the runner
    std::optional<SizeSweep> sweep;
};

// What one executable accepts, so that each rejects options that do not apply to it.
struct ProgramSpec {
    std::string name;              // "reduce3", "reduce_all"
    std::string summary;           // one line for --help
    int min_block = 32;            // supported block sizes: powers of two in [min_block, max_block]
    int max_block = 1024;
    std::string block_owner;       // who imposes the block range, for the error message
    // The labelled variants of the stages the program times, in order: their options,
    // their --help lines and the check of their values.
    std::vector<StageVariants> stage_variants;
    bool explain = false;            // --explain
    bool sweep = false;              // --sweep
    std::string more_options;        // --help lines for options the program handles itself
    std::vector<std::string> op_types;  // the --type values that --op takes (operator_program.h), for the hint
};

// Thrown for any bad command line; the message is one line, ready for stderr.
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

Options parse_options(const std::vector<std::string>& args, const ProgramSpec& spec);
std::string usage_text(const ProgramSpec& spec);

// The one integer parser of every program (the stages, reduce_all, ops, multi_gpu):
// "1000" -> 1000; nullopt for anything else (a sign where Int has none, junk, overflow).
template <typename Int>
std::optional<Int> parse_integer(std::string_view text) {
    Int value{};
    const char* last = text.data() + text.size();
    const auto [end, error] = std::from_chars(text.data(), last, value);
    if (text.empty() || error != std::errc{} || end != last) return std::nullopt;
    return value;
}
// A whole number from lo to hi, or a UsageError: "OPTION takes a whole number from LO to HI, not 'TEXT'".
int parse_int_in_range(std::string_view option, std::string_view text, int lo, int hi);
// The value after the option args[i], with i moved onto it; a UsageError where there is none.
const std::string& option_value(const std::vector<std::string>& args, std::size_t& i);
// --seed's value: a non-negative whole number, or a UsageError that says so.
std::uint64_t parse_seed(std::string_view text);
// The options every program takes, with one set of limits: --iters (1 to 100000), --warmup
// (0 to 100000), --seed and --help (-h). Reads OPTION's value (value() moves onto it) where
// it takes one, and returns true where OPTION is one of them; false, reading nothing, for
// any other. ProgramOptions: any options struct with iters, warmup, seed and help.
template <typename ProgramOptions, typename Value>
bool read_common_option(std::string_view option, Value&& value, ProgramOptions& options) {
    if (option == "--iters") options.iters = parse_int_in_range(option, value(), 1, 100000);
    else if (option == "--warmup") options.warmup = parse_int_in_range(option, value(), 0, 100000);
    else if (option == "--seed") options.seed = parse_seed(value());
    else if (option == "--help" || option == "-h") options.help = true;
    else return false;
    return true;
}
// "1000", "2^20" -> the count; nullopt for anything else (negative, junk, overflow).
std::optional<std::size_t> parse_count(std::string_view text);
// "2^10:2^28" -> the exponents; throws UsageError with the reason.
SizeSweep parse_sweep(std::string_view text);

std::string_view data_name(InputData data);  // "integers", "uniform"
std::string_view timing_name(TimingMethod timing);  // "flushed", "back-to-back"
