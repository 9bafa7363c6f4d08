#include "ops_report.h"

#include <algorithm>
#include <cstdio>

#include "report.h"  // common/: fixed, csv_field, print_aligned

namespace ops {

using ::csv_field;
using ::fixed;
using ::print_aligned;

namespace {

std::string optional_text(const std::optional<double>& value, int decimals, const char* suffix) {
    return value ? fixed(*value, decimals) + suffix : "-";
}

std::string number(double value) {
    char text[64];
    std::snprintf(text, sizeof text, "%.6g", value);
    return text;
}

std::string optional_number(const std::optional<double>& value) { return value ? number(*value) : ""; }

std::string check_label(const OpRecord& r) {
    if (r.verified) return r.check;
    return "FAIL " + std::to_string(r.failed_runs) + "/" + std::to_string(r.checked_runs) + " runs: " + r.check;
}

}  // namespace

const std::vector<std::string>& op_csv_columns() {
    static const std::vector<std::string> columns = {
        "op",     "type",   "impl", "n",        "bytes", "block",  "runs",   "median_ms", "min_ms",
        "max_ms", "gbps", "pct_peak", "vs_cub", "verified", "check", "device", "peak_gbps"};
    return columns;
}

void print_op_table(std::ostream& out, const std::vector<OpRecord>& records) {
    std::vector<std::vector<std::string>> rows = {
        {"op", "type", "impl", "kernel or call", "median ms", "GB/s", "% peak", "x CUB", "check"}};
    for (const OpRecord& r : records) {
        rows.push_back({r.op, r.type, r.impl, r.call, fixed(r.median_ms, 4), fixed(r.gbps, 0),
                        optional_text(r.pct_peak, 1, "%"), optional_text(r.vs_cub, 2, ""), check_label(r)});
    }
    print_aligned(out, rows, 4);  // op, type, impl and kernel read left to right
}

void write_op_csv(std::ostream& out, const std::vector<OpRecord>& records, bool with_header) {
    const auto write_row = [&](const std::vector<std::string>& row) {
        for (std::size_t c = 0; c < row.size(); ++c) out << (c ? "," : "") << csv_field(row[c]);
        out << "\n";
    };
    if (with_header) write_row(op_csv_columns());
    for (const OpRecord& r : records) {
        write_row({r.op, r.type, r.impl, std::to_string(r.n), std::to_string(r.bytes), std::to_string(r.block),
                   std::to_string(r.runs), number(r.median_ms), number(r.min_ms), number(r.max_ms), number(r.gbps),
                   optional_number(r.pct_peak), optional_number(r.vs_cub), r.verified ? "true" : "false", r.check,
                   r.device, optional_number(r.peak_gbps)});
    }
}

}  // namespace ops
