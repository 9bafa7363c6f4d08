// A small JSON reader: the tests check that results.json parses and has the right fields,
// and classroom batch and selftest read the scores a child grader wrote.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace classroom {

struct Json {
    enum class Kind { Null, Bool, Number, String, Array, Object } kind = Kind::Null;
    bool boolean = false;
    double number = 0;
    std::string string;
    std::vector<Json> array;
    std::vector<std::pair<std::string, Json>> object;  // in the file's order; keys unique
    const Json& at(const std::string& key) const;       // throws std::out_of_range
    bool has(const std::string& key) const;
};

Json parse_json(const std::string& text);  // throws std::runtime_error with the position

}  // namespace classroom
