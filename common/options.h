// The command line every stage executable (reduce0 ... reduce7) and the runner (reduce_all)
// share. Parsing is pure host code: a bad option is reported before any CUDA call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

enum class ValueType { Int32, Float32, Float64 };

// How reduce7 turns per-block sums into one value.
enum class Finish {
    TwoPass,    // a second launch of one block sums the partials (deterministic)
    Atomic,     // every block atomically adds its sum into the result (order varies run to run)
    LastBlock,  // the last block to finish sums the partials, in order (deterministic)
};

// How reduce4 sums the last 32 values of a block (see docs/04-sync-removal.md).
enum class LastWarp {
    SyncWarp,        // correct on every GPU: __syncwarp() orders each step
    LegacyVolatile,  // pre-Volta code: volatile, no __syncwarp(); a data race since Volta
    LegacyPlain,     // pre-Volta code without even volatile: the compiler caches values
};

// How reduce0 picks the threads that add at step s (docs/01-divergence.md). Both pick the
// same threads; the bit mask measures what the run-time % costs on its own.
enum class Select {
    Modulo,   // tid % (2s) == 0: the classic code
    Bitmask,  // (tid & (2s - 1)) == 0: the same test without a division
};

// Where reduce3 keeps a thread's running sum while the tree runs (docs/03-first-add.md).
enum class RunningSum {
    Register,  // the sum stays in a register; a step reads only shared[tid + s] (default)
    Shared,    // every step reads shared[tid] again, as reduce2's tree does
};

// The values summed (common/input.h).
enum class InputData {
    Integers,  // nonzero integers with random signs, stored as T: every sum is exact (default)
    Uniform,   // real values uniform in [0, 1), float or double: measures rounding error
};

enum class OutputFormat { Table, Csv, Json };

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
    int block = 256;
    int iters = 20;
    int warmup = 3;
    std::uint64_t seed = 2026;
    int device = 0;
    std::optional<double> peak_gbps;  // overrides the device's theoretical peak
    bool baseline = true;             // also time reduce0, for the speedup column
    OutputFormat format = OutputFormat::Table;
    bool help = false;
    // reduce7 (and the runner)
    int vec = 0;  // elements per vector load; 0 = the widest 16-byte load for the type
    std::optional<Finish> finish;  // unset: default_finish(type)
    bool variants = false;  // time every labelled variant: --select, --running-sum, --vec x --finish
    // reduce4 (and the runner)
    LastWarp last_warp = LastWarp::SyncWarp;
    // reduce0, which every program times as its baseline
    Select select = Select::Modulo;
    // reduce3 (and the runner)
    RunningSum running_sum = RunningSum::Register;
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
    bool vector_and_finish = false;  // --vec, --finish, --variants
    bool last_warp = false;          // --last-warp
    bool running_sum = false;        // --running-sum
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

// "1000", "2^20" -> the count; nullopt for anything else (negative, junk, overflow).
std::optional<std::size_t> parse_count(std::string_view text);
// "2^10:2^28" -> the exponents; throws UsageError with the reason.
SizeSweep parse_sweep(std::string_view text);

std::string_view type_name(ValueType type);       // "int", "float", "double"
std::size_t type_size(ValueType type);            // 4, 4, 8
std::string_view finish_name(Finish finish);      // "two-pass", "atomic", "last-block"
std::string_view last_warp_name(LastWarp mode);   // "syncwarp", "legacy-volatile", "legacy-plain"
std::string_view select_name(Select select);      // "modulo", "bitmask"
std::string_view running_sum_name(RunningSum where);  // "shared", "register"
std::string_view data_name(InputData data);       // "integers", "uniform"
int effective_vec(const Options& options);        // --vec, or the 16-byte width when it is 0
// reduce7's default finish: the fastest that gives the same bits on every run. Integer
// addition is associative, so atomics are deterministic for int; for float and double the
// order of atomic adds varies from run to run, and so would the rounding.
Finish default_finish(ValueType type);
Finish effective_finish(const Options& options);  // --finish, or default_finish(type)
