#include "report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace {

std::string optional_text(const std::optional<double>& value, int decimals, const char* suffix) {
    return value ? fixed(*value, decimals) + suffix : "-";
}

std::string kernel_label(const Record& r) {
    return r.variant.empty() ? r.kernel : r.kernel + " [" + r.variant + "]";
}

std::string check_label(const Record& r) {
    if (r.verified) return r.check;
    return "FAIL " + std::to_string(r.failed_runs) + "/" + std::to_string(r.checked_runs) + " runs: " + r.check;
}

std::string json_string(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char escaped[8];
                    std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
                    out += escaped;
                } else {
                    out += c;
                }
        }
    }
    return out + "\"";
}

std::string number(double value) {
    char text[64];
    std::snprintf(text, sizeof text, "%.6g", value);
    return text;
}

std::string optional_number(const std::optional<double>& value) { return value ? number(*value) : ""; }

// Every digit a double needs to come back bit for bit.
std::string full_number(double value) {
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", value);
    return text;
}

// The fields of one record, in csv_columns() order, as CSV text (empty for a missing value).
std::vector<std::string> fields(const Record& r) {
    return {r.stage,
            r.kernel,
            r.variant,
            r.type,
            std::to_string(r.n),
            std::to_string(r.bytes),
            std::to_string(r.block),
            std::to_string(r.runs),
            number(r.median_ms),
            number(r.min_ms),
            number(r.max_ms),
            number(r.gbps),
            optional_number(r.pct_peak),
            optional_number(r.pct_copy),
            optional_number(r.vs_cub),
            optional_number(r.vs_reduce0),
            r.verified ? "true" : "false",
            std::to_string(r.checked_runs),
            std::to_string(r.failed_runs),
            r.check,
            r.device,
            optional_number(r.peak_gbps),
            r.data,
            full_number(r.result),
            full_number(r.reference),
            optional_number(r.error_ulps),
            std::to_string(r.distinct_results)};
}

}  // namespace

std::string fixed(double value, int decimals) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals, value);
    return text;
}

std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\n") == std::string::npos) return text;
    std::string quoted = "\"";
    for (char c : text) {
        if (c == '"') quoted += '"';
        quoted += c;
    }
    return quoted + "\"";
}

const std::vector<std::string>& csv_columns() {
    static const std::vector<std::string> columns = {
        "stage",   "kernel", "variant",  "type",       "n",           "bytes",    "block",
        "runs",    "median_ms", "min_ms", "max_ms",    "gbps",        "pct_peak", "pct_copy",
        "vs_cub",  "vs_reduce0", "verified", "checked_runs", "failed_runs", "check",   "device",   "peak_gbps",
        "data",    "result", "reference", "error_ulps", "distinct_results"};
    return columns;
}

std::string with_thousands(std::size_t value) {
    std::string digits = std::to_string(value);
    for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<std::size_t>(i), ",");
    return digits;
}

std::string count_text(std::size_t value) {
    if (value != 0 && (value & (value - 1)) == 0) {
        int log2 = 0;
        while ((std::size_t{1} << log2) < value) ++log2;
        return "2^" + std::to_string(log2);
    }
    return std::to_string(value);
}

std::string bytes_text(double bytes) {
    const char* units[] = {"B", "kB", "MB", "GB", "TB"};
    int unit = 0;
    while (bytes >= 1000 && unit < 4) {
        bytes /= 1000;
        ++unit;
    }
    return fixed(bytes, unit == 0 ? 0 : 1) + " " + units[unit];
}

void print_header(std::ostream& out, const RunHeader& h) {
    out << h.program << "\n"
        << "  device   " << h.device << "\n"
        << "  peak     " << h.peak << "\n"
        << "  software " << h.software << "\n"
        << "  problem  " << h.problem << "\n"
        << "  timing   " << h.method << "\n";
}

void print_table(std::ostream& out, const std::vector<Record>& records) {
    const auto any = [&](auto member) {
        return std::any_of(records.begin(), records.end(), [&](const Record& r) { return (r.*member).has_value(); });
    };
    const bool show_copy = any(&Record::pct_copy);
    const bool show_cub = any(&Record::vs_cub);
    const bool show_reduce0 = any(&Record::vs_reduce0);
    // Rounding columns: how far from the correctly rounded sum, and how many different
    // results the runs gave (1: the same bits every run).
    const bool show_error = any(&Record::error_ulps);
    const bool show_distinct =
        show_error || std::any_of(records.begin(), records.end(), [](const Record& r) { return r.distinct_results > 1; });

    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> head = {"stage", "kernel", "median ms", "GB/s", "% peak"};
    if (show_copy) head.push_back("% copy");
    if (show_cub) head.push_back("x CUB");
    if (show_reduce0) head.push_back("x reduce0");
    if (show_error) head.push_back("ulp error");
    if (show_distinct) head.push_back("distinct");
    head.push_back("check");
    rows.push_back(head);
    for (const Record& r : records) {
        std::vector<std::string> row = {r.stage, kernel_label(r), fixed(r.median_ms, 4), fixed(r.gbps, 0),
                                        optional_text(r.pct_peak, 1, "%")};
        if (show_copy) row.push_back(optional_text(r.pct_copy, 1, "%"));
        if (show_cub) row.push_back(optional_text(r.vs_cub, 2, ""));
        if (show_reduce0) row.push_back(optional_text(r.vs_reduce0, 2, ""));
        if (show_error) row.push_back(optional_text(r.error_ulps, 1, ""));
        if (show_distinct) row.push_back(std::to_string(r.distinct_results));
        row.push_back(check_label(r));
        rows.push_back(row);
    }
    print_aligned(out, rows, 2);  // stage and kernel read left to right
}

void print_aligned(std::ostream& out, const std::vector<std::vector<std::string>>& rows, std::size_t left_columns) {
    std::vector<std::size_t> width;
    for (const auto& row : rows) {
        width.resize(std::max(width.size(), row.size()), 0);
        for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
    }
    for (const auto& row : rows) {
        std::string line;
        for (std::size_t c = 0; c < row.size(); ++c) {
            const bool last = c + 1 == row.size();
            const bool left = c < left_columns || last;
            const std::string pad(width[c] - row[c].size(), ' ');
            line += (c ? "  " : "") + (left ? row[c] + (last ? "" : pad) : pad + row[c]);
        }
        out << line << "\n";
    }
}

void write_csv(std::ostream& out, const std::vector<Record>& records, bool with_header) {
    const auto write_row = [&](const std::vector<std::string>& row) {
        for (std::size_t c = 0; c < row.size(); ++c) out << (c ? "," : "") << csv_field(row[c]);
        out << "\n";
    };
    if (with_header) write_row(csv_columns());
    for (const Record& r : records) write_row(fields(r));
}

void write_json(std::ostream& out, const std::vector<Record>& records) {
    const auto& columns = csv_columns();
    // Which columns hold text, numbers or a truth value; empty optional numbers become null.
    const auto is_text = [](const std::string& c) {
        return c == "stage" || c == "kernel" || c == "variant" || c == "type" || c == "check" || c == "device" ||
               c == "data";
    };
    out << "[";
    for (std::size_t i = 0; i < records.size(); ++i) {
        const std::vector<std::string> values = fields(records[i]);
        out << (i ? ",\n " : "\n ") << "{";
        for (std::size_t c = 0; c < columns.size(); ++c) {
            out << (c ? ", " : "") << json_string(columns[c]) << ": ";
            if (is_text(columns[c])) {
                out << json_string(values[c]);
            } else if (values[c].empty()) {
                out << "null";
            } else {
                out << values[c];  // numbers and true/false are already JSON
            }
        }
        out << "}";
    }
    out << (records.empty() ? "]\n" : "\n]\n");
}
