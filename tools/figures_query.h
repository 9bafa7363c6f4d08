// What the figures checker's two halves share (figures.cpp, figures_query.cpp): reading a
// results file, its CSV table, and a query's value (the query language: figures.h).
#pragma once

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace figures {

struct QueryError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The file's text; QueryError where it cannot be read.
std::string read(const std::filesystem::path& path);
std::string trim(const std::string& s);

struct Table {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
    int column(const std::string& name) const {
        const auto it = std::find(header.begin(), header.end(), name);
        if (it == header.end()) throw QueryError("no column '" + name + "'");
        return static_cast<int>(it - header.begin());
    }
};

// The CSV file's table, read once ('#' rows are comments).
const Table& table_of(const std::filesystem::path& path);

// A number as written, thousands separators allowed; QueryError otherwise.
double number_of(const std::string& text);

struct Value {
    double median = 0, min = 0, max = 0;
    // The CSV column whose unit the value is in, for the unit shown (a _ms column shown in
    // us is x1000); empty for a plain number and for a value with no one column's unit.
    std::string column;
};

// The unit a column's values are in ("ms" for a _ms column, ...; figures_query.cpp).
std::string unit_of(const std::string& column);

// A whole query's value: terms joined by " / ", " * ", " + ", " - ", left to right.
Value evaluate(const Table& table, const std::string& query);

}  // namespace figures
