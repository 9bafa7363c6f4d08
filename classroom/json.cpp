#include "json.h"

#include <cctype>
#include <stdexcept>

namespace classroom {

namespace {

struct Reader {
    const std::string& s;
    std::size_t i = 0;

    [[noreturn]] void fail(const std::string& what) const {
        throw std::runtime_error("JSON: " + what + " at offset " + std::to_string(i));
    }
    void space() {
        while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    }
    char peek() {
        space();
        return i < s.size() ? s[i] : '\0';
    }
    void expect(char c) {
        if (peek() != c) fail(std::string("expected '") + c + "'");
        ++i;
    }
    std::string string_value() {
        expect('"');
        std::string out;
        while (true) {
            if (i >= s.size()) fail("unterminated string");
            const char c = s[i++];
            if (c == '"') return out;
            if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (i >= s.size()) fail("unterminated escape");
            const char e = s[i++];
            switch (e) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'n': out += '\n'; break;
                case 't': out += '\t'; break;
                case 'r': out += '\r'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'u':
                    if (i + 4 > s.size()) fail("short \\u escape");
                    out += static_cast<char>(std::stoi(s.substr(i, 4), nullptr, 16));
                    i += 4;
                    break;
                default: fail("bad escape");
            }
        }
    }
    Json value() {
        Json v;
        const char c = peek();
        if (c == '{') {
            v.kind = Json::Kind::Object;
            ++i;
            if (peek() == '}') {
                ++i;
                return v;
            }
            while (true) {
                const std::string key = string_value();
                if (v.has(key)) fail("duplicate key " + key);
                expect(':');
                v.object.emplace_back(key, value());
                if (peek() == ',') {
                    ++i;
                    continue;
                }
                expect('}');
                return v;
            }
        }
        if (c == '[') {
            v.kind = Json::Kind::Array;
            ++i;
            if (peek() == ']') {
                ++i;
                return v;
            }
            while (true) {
                v.array.push_back(value());
                if (peek() == ',') {
                    ++i;
                    continue;
                }
                expect(']');
                return v;
            }
        }
        if (c == '"') {
            v.kind = Json::Kind::String;
            v.string = string_value();
            return v;
        }
        for (const char* word : {"true", "false", "null"}) {
            if (s.compare(i, std::string(word).size(), word) == 0) {
                i += std::string(word).size();
                v.kind = word[0] == 'n' ? Json::Kind::Null : Json::Kind::Bool;
                v.boolean = word[0] == 't';
                return v;
            }
        }
        std::size_t used = 0;
        try {
            v.number = std::stod(s.substr(i), &used);
        } catch (const std::exception&) {
            fail("expected a value");
        }
        i += used;
        v.kind = Json::Kind::Number;
        return v;
    }
};

}  // namespace

bool Json::has(const std::string& key) const {
    for (const auto& [k, v] : object) {
        if (k == key) return true;
    }
    return false;
}

const Json& Json::at(const std::string& key) const {
    for (const auto& [k, v] : object) {
        if (k == key) return v;
    }
    throw std::out_of_range("no key " + key);
}

Json parse_json(const std::string& text) {
    Reader reader{text};
    Json v = reader.value();
    reader.space();
    if (reader.i != text.size()) reader.fail("trailing text");
    return v;
}

}  // namespace classroom
