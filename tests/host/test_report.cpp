// Output: CSV and JSON are parsed back and must give the records' values; the table shows
// the relative columns only when some record has them.
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "figures.h"
#include "report.h"

namespace {

std::vector<Record> sample_records() {
    Record a;
    a.stage = "reduce0";
    a.kernel = "interleaved_divergent";
    a.type = "float";
    a.n = 1 << 20;
    a.bytes = 4u << 20;
    a.block = 256;
    a.runs = 20;
    a.median_ms = 0.0125;
    a.min_ms = 0.012;
    a.max_ms = 0.02;
    a.gbps = 335.5443;
    a.pct_peak = 10.0;
    a.vs_reduce0 = 1.0;
    a.verified = true;
    a.checked_runs = 24;
    a.check = "exact";
    a.device = "NVIDIA H100 80GB HBM3";
    a.peak_gbps = 3352.3;
    a.data = "uniform";
    a.result = 524288.123456789;
    a.reference = 524288.1234567891;
    a.error_ulps = 2.0;
    a.distinct_results = 3;
    Record b = a;
    b.data = "integers";
    b.error_ulps.reset();
    b.distinct_results = 1;
    b.stage = "copy";
    b.kernel = "cudaMemcpyAsync";
    b.variant = "device to device, read + write";
    b.bytes = 8u << 20;
    b.block = 0;
    b.vs_reduce0.reset();
    b.pct_copy = 100.0;
    b.verified = false;
    b.failed_runs = 3;
    b.check = "got 1, expected \"2\", off by -1\n";  // quotes, comma, newline: escaping is exercised
    return {a, b};
}

// The CSV reader the figures check uses (tools/figures.h).
std::vector<std::vector<std::string>> parse_csv(const std::string& text) { return figures::csv_rows(text); }

// A small JSON reader for what write_json emits: an array of flat objects whose values
// are strings, numbers, true, false or null. Values come back as text; null as "null".
struct JsonReader {
    const std::string& s;
    std::size_t i = 0;
    void space() {
        while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    }
    void expect(char c) {
        space();
        if (i >= s.size() || s[i] != c) throw std::runtime_error(std::string("expected ") + c + " at " + std::to_string(i));
        ++i;
    }
    bool peek(char c) {
        space();
        return i < s.size() && s[i] == c;
    }
    std::string string_value() {
        expect('"');
        std::string out;
        while (s.at(i) != '"') {
            if (s[i] == '\\') {
                const char e = s.at(++i);
                if (e == 'n') out += '\n';
                else if (e == 't') out += '\t';
                else if (e == 'u') {
                    out += static_cast<char>(std::stoi(s.substr(i + 1, 4), nullptr, 16));
                    i += 4;
                } else out += e;
            } else {
                out += s[i];
            }
            ++i;
        }
        ++i;
        return out;
    }
    std::string bare_value() {
        space();
        const std::size_t start = i;
        while (i < s.size() && s[i] != ',' && s[i] != '}' && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
        const std::string v = s.substr(start, i - start);
        if (v != "true" && v != "false" && v != "null") std::stod(v);  // throws if not a number
        return v;
    }
    std::vector<std::map<std::string, std::string>> records() {
        std::vector<std::map<std::string, std::string>> out;
        expect('[');
        while (!peek(']')) {
            if (!out.empty()) expect(',');
            expect('{');
            std::map<std::string, std::string> object;
            while (!peek('}')) {
                if (!object.empty()) expect(',');
                const std::string key = string_value();
                expect(':');
                object[key] = peek('"') ? string_value() : bare_value();
            }
            expect('}');
            out.push_back(object);
        }
        expect(']');
        space();
        if (i != s.size()) throw std::runtime_error("trailing text");
        return out;
    }
};

TEST(Report, CsvParsesBackToTheRecords) {
    const auto records = sample_records();
    std::ostringstream out;
    write_csv(out, records);
    const auto rows = parse_csv(out.str());
    ASSERT_EQ(rows.size(), 3u);
    ASSERT_EQ(rows[0], csv_columns());
    std::map<std::string, std::size_t> col;
    for (std::size_t c = 0; c < rows[0].size(); ++c) col[rows[0][c]] = c;
    for (std::size_t r = 1; r < rows.size(); ++r) ASSERT_EQ(rows[r].size(), csv_columns().size());
    EXPECT_EQ(rows[1][col["stage"]], "reduce0");
    EXPECT_EQ(rows[1][col["n"]], "1048576");
    EXPECT_DOUBLE_EQ(std::stod(rows[1][col["median_ms"]]), 0.0125);
    EXPECT_NEAR(std::stod(rows[1][col["gbps"]]), 335.5443, 1e-3);
    EXPECT_EQ(rows[1][col["pct_copy"]], "");  // missing value: empty field
    EXPECT_EQ(rows[1][col["verified"]], "true");
    EXPECT_EQ(rows[2][col["variant"]], "device to device, read + write");
    EXPECT_EQ(rows[2][col["check"]], records[1].check);
    EXPECT_EQ(rows[2][col["failed_runs"]], "3");
    EXPECT_EQ(rows[2][col["verified"]], "false");
    EXPECT_EQ(rows[1][col["data"]], "uniform");
    EXPECT_EQ(std::stod(rows[1][col["result"]]), records[0].result);  // every digit: the same double back
    EXPECT_EQ(std::stod(rows[1][col["reference"]]), records[0].reference);
    EXPECT_DOUBLE_EQ(std::stod(rows[1][col["error_ulps"]]), 2.0);
    EXPECT_EQ(rows[1][col["distinct_results"]], "3");
    EXPECT_EQ(rows[2][col["error_ulps"]], "");
    std::ostringstream no_header;
    write_csv(no_header, records, false);
    EXPECT_EQ(parse_csv(no_header.str()).size(), 2u);
}

TEST(Report, JsonParsesBackToTheRecords) {
    const auto records = sample_records();
    std::ostringstream out;
    write_json(out, records);
    const std::string text = out.str();
    JsonReader reader{text};
    const auto parsed = reader.records();
    ASSERT_EQ(parsed.size(), 2u);
    for (const auto& object : parsed) EXPECT_EQ(object.size(), csv_columns().size());
    EXPECT_EQ(parsed[0].at("kernel"), "interleaved_divergent");
    EXPECT_EQ(parsed[0].at("block"), "256");
    EXPECT_EQ(parsed[0].at("pct_copy"), "null");
    EXPECT_DOUBLE_EQ(std::stod(parsed[0].at("vs_reduce0")), 1.0);
    EXPECT_EQ(parsed[0].at("verified"), "true");
    EXPECT_EQ(parsed[1].at("check"), records[1].check);
    EXPECT_EQ(parsed[1].at("verified"), "false");
    EXPECT_DOUBLE_EQ(std::stod(parsed[1].at("peak_gbps")), 3352.3);

    std::ostringstream empty;
    write_json(empty, {});
    const std::string empty_text = empty.str();
    JsonReader empty_reader{empty_text};
    EXPECT_TRUE(empty_reader.records().empty());
}

TEST(Report, TableShowsRelativeColumnsOnlyWhenMeasured) {
    auto records = sample_records();
    std::ostringstream with;
    print_table(with, records);
    EXPECT_NE(with.str().find("% copy"), std::string::npos);
    EXPECT_NE(with.str().find("x reduce0"), std::string::npos);
    EXPECT_EQ(with.str().find("x CUB"), std::string::npos);
    EXPECT_NE(with.str().find("FAIL 3/24 runs"), std::string::npos);
    EXPECT_NE(with.str().find("cudaMemcpyAsync [device to device, read + write]"), std::string::npos);
    EXPECT_NE(with.str().find("ulp error"), std::string::npos);
    EXPECT_NE(with.str().find("distinct"), std::string::npos);
    records.pop_back();
    records[0].vs_reduce0.reset();
    records[0].error_ulps.reset();
    records[0].distinct_results = 1;
    std::ostringstream without;
    print_table(without, records);
    EXPECT_EQ(without.str().find("% copy"), std::string::npos);
    EXPECT_EQ(without.str().find("x reduce0"), std::string::npos);
    EXPECT_EQ(without.str().find("ulp error"), std::string::npos);
    EXPECT_EQ(without.str().find("distinct"), std::string::npos);
    EXPECT_NE(without.str().find(" 336 "), std::string::npos) << without.str();  // GB/s, rounded
}

TEST(Report, NumberFormatting) {
    EXPECT_EQ(with_thousands(67108864), "67,108,864");
    EXPECT_EQ(with_thousands(999), "999");
    EXPECT_EQ(with_thousands(1000), "1,000");
    EXPECT_EQ(count_text(std::size_t{1} << 26), "2^26");
    EXPECT_EQ(count_text(1000), "1000");
    EXPECT_EQ(count_text(0), "0");
    EXPECT_EQ(bytes_text(268435456), "268.4 MB");
    EXPECT_EQ(bytes_text(512), "512 B");
}

}  // namespace
