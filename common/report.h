// Output: the human-readable header and table, CSV and JSON. Pure host code.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

// One timed kernel: a stage, CUB's DeviceReduce::Sum or the device-to-device copy.
struct Record {
    std::string stage;    // "reduce3", "cub", "copy"
    bool from_stage = false;  // a stage's (not CUB's or the copy's)
    bool baseline = false;    // the baseline stage's (Stage::baseline)
    std::string kernel;   // "first_add_during_load", "DeviceReduce::Sum", "cudaMemcpyAsync"
    std::string variant;  // options that change the kernel, "NAME=CHOICE ..." (common/variant.h); may be empty
    std::string type;     // "int", "float", "double"
    std::size_t n = 0;
    std::size_t bytes = 0;  // bytes moved per run, the numerator of GB/s (the copy counts read + write)
    int block = 0;          // threads per block; 0 where the library chooses
    int runs = 0;
    double median_ms = 0, min_ms = 0, max_ms = 0;
    double gbps = 0;                    // bytes / median time
    std::optional<double> pct_peak;     // of the theoretical peak
    std::optional<double> pct_copy;     // of the copy's GB/s in the same run
    std::optional<double> vs_cub;       // CUB's median time / this median time (> 1: faster than CUB)
    std::optional<double> vs_reduce0;   // reduce0's median time / this median time
    bool verified = false;
    int checked_runs = 0;   // every run's result is checked: the first, the warm-ups and the timed ones
    int failed_runs = 0;    // runs whose result was not the exact sum
    std::string check;      // "exact", or the first failure
    std::string data = "integers";     // the input: "integers" or "uniform" (--data)
    double result = 0;                 // the first run's sum
    double reference = 0;              // the exact sum, or the correctly rounded one (uniform data)
    std::optional<double> error_ulps;  // uniform data: |result - reference| in units in the last place
    int distinct_results = 0;          // distinct bit patterns among every run's result (1: deterministic)
    std::string device;
    std::optional<double> peak_gbps;
};

struct RunHeader {
    std::string program;        // "reduce3: first add during load"
    std::string device;         // "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 50.0 MB L2, 79.1 GiB)"
    std::string peak;           // "3352 GB/s theoretical: memory clock ..."
    std::string software;       // "CUDA runtime 13.0, driver 13.0"
    std::string problem;        // "n = 67,108,864 (2^26) float = 268.4 MB, block 256"
    std::string method;         // "median of 20 runs after 3 warm-ups; L2 (50 MB) flushed before each run"
};

// "67,108,864"
std::string with_thousands(std::size_t value);
// "2^26" when value is a power of two, else the plain number
std::string count_text(std::size_t value);
// "268.4 MB" (decimal units, as GB/s are)
std::string bytes_text(double bytes);
// "3.14" for (3.14159, 2)
std::string fixed(double value, int decimals);
// A CSV field, quoted (RFC 4180) when it holds a comma, a quote or a newline.
std::string csv_field(const std::string& text);

void print_header(std::ostream& out, const RunHeader& header);
// One row per record; the %copy, xCUB and xreduce0 columns appear when any record has them.
void print_table(std::ostream& out, const std::vector<Record>& records);
// Rows of cells as columns two spaces apart, each as wide as its widest cell: the first
// `left_columns` and the last left-aligned (names, the verdict), the others right-aligned
// (numbers). The first row is the header.
void print_aligned(std::ostream& out, const std::vector<std::vector<std::string>>& rows, std::size_t left_columns);
void write_csv(std::ostream& out, const std::vector<Record>& records, bool with_header = true);
void write_json(std::ostream& out, const std::vector<Record>& records);

// The CSV columns, in order; tests and the plotting script rely on these names.
const std::vector<std::string>& csv_columns();
