// The CSV side of the figures checker: reading a results file, and evaluating a query on it.
#include "figures_query.h"

#include "figures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

namespace figures {

namespace fs = std::filesystem;

std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw QueryError("cannot read " + path.generic_string());
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string trim(const std::string& s) {
    const auto a = s.find_first_not_of(" \t\r\n");
    if (a == std::string::npos) return "";
    return s.substr(a, s.find_last_not_of(" \t\r\n") - a + 1);
}

// ---------------------------------------------------------------- CSV

std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
    std::vector<std::vector<std::string>> rows(1);
    std::string field;
    bool quoted = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                field += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                field += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            rows.back().push_back(field);
            field.clear();
        } else if (c == '\n') {
            rows.back().push_back(field);
            field.clear();
            rows.emplace_back();
        } else if (c != '\r') {
            field += c;
        }
    }
    if (!field.empty() || !rows.back().empty()) rows.back().push_back(field);
    if (rows.back().empty()) rows.pop_back();
    return rows;
}

namespace {

// A row whose first field starts with '#' is a comment (a file's provenance lines, before
// its header or after its rows), never the header or data.
Table parse_csv(const std::string& text) {
    std::vector<std::vector<std::string>> rows = csv_rows(text);
    std::erase_if(rows, [](const std::vector<std::string>& row) { return !row.empty() && row[0].rfind('#', 0) == 0; });
    Table table;
    if (rows.empty()) return table;
    table.header = rows[0];
    for (std::size_t r = 1; r < rows.size(); ++r) {
        if (rows[r] == table.header) continue;  // a header repeated by an append
        table.rows.push_back(rows[r]);
    }
    return table;
}

std::map<std::string, Table>& table_cache() {
    static std::map<std::string, Table> cache;
    return cache;
}

}  // namespace

const Table& table_of(const fs::path& path) {
    auto& cache = table_cache();
    const std::string key = path.generic_string();
    auto it = cache.find(key);
    if (it == cache.end()) it = cache.emplace(key, parse_csv(read(path))).first;
    return it->second;
}

namespace {

// "2^22" -> "4194304"; anything else unchanged.
std::string expand_power(const std::string& value) {
    static const std::regex power(R"(^2\^(\d+)$)");
    std::smatch m;
    if (std::regex_match(value, m, power)) return std::to_string(1ULL << std::stoi(m[1]));
    return value;
}

}  // namespace

double number_of(const std::string& text) {
    std::string digits;
    for (char c : text) {
        if (c != ',') digits += c;
    }
    std::size_t used = 0;
    const double value = std::stod(digits, &used);
    if (used != digits.size()) throw QueryError("not a number: '" + text + "'");
    return value;
}

// The unit a column's values are in, where the figure's unit may differ: "ms" for a _ms
// column, "us" for a _us column, "GB/s" for a gbps column; "" for any other.
std::string unit_of(const std::string& column) {
    const auto ends = [&](const char* tail) {
        const std::string t = tail;
        return column.size() >= t.size() && column.compare(column.size() - t.size(), t.size(), t) == 0;
    };
    if (ends("_ms")) return "ms";
    if (ends("_us")) return "us";
    if (column == "gbps" || ends("_gbps")) return "GB/s";
    return "";
}

namespace {

// The column whose unit `a OP b` is in. A sum or difference keeps its terms' unit (they
// must agree); a product or quotient with a plain number keeps the column's; a quotient
// of two columns (a ratio) or a product of two has none of them, and is shown as computed.
std::string unit_column(const Value& a, char op, const Value& b) {
    if (op == '+' || op == '-') {
        if (!a.column.empty() && !b.column.empty() && unit_of(a.column) != unit_of(b.column)) {
            throw QueryError("the terms of a sum or difference are in different units ('" + a.column + "', '" +
                             b.column + "')");
        }
        return a.column.empty() ? b.column : a.column;
    }
    if (b.column.empty()) return a.column;                // a * 2, a / 8192
    if (op == '*' && a.column.empty()) return b.column;   // 2 * a
    return "";                                             // a / b, a * b, 1 / a
}

// The columns that say which thing a row measured; repetitions agree on all of them.
const char* kIdentity[] = {"stage", "kernel", "variant", "type", "n", "block", "data", "lesson", "column", "metric"};

Value lookup(const Table& table, const std::string& term) {
    const auto arrow = term.find(" -> ");
    if (arrow == std::string::npos) throw QueryError("a CSV query is FILTERS -> COLUMN[:AGGREGATE], not '" + term + "'");
    std::vector<std::pair<int, std::string>> filters;
    std::istringstream parts(term.substr(0, arrow));
    for (std::string filter; std::getline(parts, filter, ';');) {
        filter = trim(filter);
        if (filter.empty()) continue;
        const auto eq = filter.find('=');
        if (eq == std::string::npos) throw QueryError("a filter is COLUMN=VALUE, not '" + filter + "'");
        filters.emplace_back(table.column(trim(filter.substr(0, eq))), expand_power(filter.substr(eq + 1)));
    }
    std::string target = trim(term.substr(arrow + 4)), aggregate;
    if (const auto colon = target.find(':'); colon != std::string::npos) {
        aggregate = target.substr(colon + 1);
        target = target.substr(0, colon);
    }
    const int col = table.column(target);
    std::vector<const std::vector<std::string>*> rows;
    for (const auto& row : table.rows) {
        bool match = row.size() == table.header.size();
        for (const auto& [c, v] : filters) match = match && (row[c] == v || expand_power(row[c]) == v);
        if (match) rows.push_back(&row);
    }
    if (rows.empty()) throw QueryError("no row matches '" + term.substr(0, arrow) + "'");
    for (const char* name : kIdentity) {
        const auto it = std::find(table.header.begin(), table.header.end(), name);
        if (it == table.header.end()) continue;
        const auto c = it - table.header.begin();
        for (const auto* row : rows) {
            if ((*row)[c] != (*rows[0])[c]) {
                throw QueryError("the rows matched differ in '" + std::string(name) + "' ('" + (*rows[0])[c] + "', '" +
                                 (*row)[c] + "'): add a filter");
            }
        }
    }
    if (rows.size() > 1 && aggregate.empty()) {
        throw QueryError(std::to_string(rows.size()) + " rows match: say :median, :min, :max or :spread");
    }
    std::vector<double> values;
    for (const auto* row : rows) values.push_back(number_of((*row)[col]));
    std::sort(values.begin(), values.end());
    const std::size_t k = values.size();
    const double median = k % 2 ? values[k / 2] : (values[k / 2 - 1] + values[k / 2]) / 2;
    Value v{median, values.front(), values.back(), table.header[col]};
    if (aggregate == "min") v.median = v.min;
    if (aggregate == "max") v.median = v.max;
    if (!aggregate.empty() && aggregate != "median" && aggregate != "min" && aggregate != "max" && aggregate != "spread") {
        throw QueryError("unknown aggregate ':" + aggregate + "'");
    }
    if (aggregate != "spread") v.min = v.max = v.median;
    return v;
}

}  // namespace

// A whole query: terms joined by " / ", " * ", " + ", " - ", left to right.
Value evaluate(const Table& table, const std::string& query) {
    static const std::regex op(R"( ([/*+-]) )");
    std::vector<std::string> terms;
    std::vector<char> ops;
    std::size_t start = 0;
    for (auto it = std::sregex_iterator(query.begin(), query.end(), op); it != std::sregex_iterator(); ++it) {
        terms.push_back(query.substr(start, it->position(0) - start));
        ops.push_back((*it)[1].str()[0]);
        start = it->position(0) + it->length(0);
    }
    terms.push_back(query.substr(start));
    auto term_value = [&](const std::string& t) {
        static const std::regex literal(R"(^\s*-?[0-9][0-9,]*(\.[0-9]+)?\s*$)");
        if (std::regex_match(t, literal)) {
            const double x = number_of(trim(t));
            return Value{x, x, x, ""};
        }
        return lookup(table, t);
    };
    Value v = term_value(terms[0]);
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const Value w = term_value(terms[i + 1]);
        if (v.min != v.max || w.min != w.max) throw QueryError(":spread cannot be combined with other terms");
        v.column = unit_column(v, ops[i], w);
        switch (ops[i]) {
            case '/': v.median /= w.median; break;
            case '*': v.median *= w.median; break;
            case '+': v.median += w.median; break;
            default: v.median -= w.median; break;
        }
        v.min = v.max = v.median;
    }
    return v;
}

}  // namespace figures
