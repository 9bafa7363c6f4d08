// What a launcher did to the GPU in one request, as the worker recorded it: every kernel
// launch (the kernel's name, its grid, block, dynamic shared memory, launch attributes and
// the bytes of its parameters), every memset, the worker's own copies and buffers. The
// worker (worker.cu, recorder.cu) writes one per request and sends it after the sums; the
// replay (judge/replay.cu) repeats it, in order, under compute-sanitizer. gpu_window.h says
// why the addresses inside need no translation.
//
// The bytes come from a process that runs the submission's code: the reader trusts no
// length in them. Host C++ only.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace launch_record {

enum class OpKind : std::uint32_t { Launch = 1, Memset = 2, Copy = 3, FuncAttribute = 4, Ensure = 5 };

constexpr std::size_t kAttributeBytes = 72;  // cudaLaunchAttribute, CUlaunchAttribute (asserted where used)
constexpr std::uint32_t kMostAttributes = 8;
constexpr std::size_t kMostParameterBytes = 32764;  // CUDA's limit on a kernel's parameters
constexpr std::size_t kMostNameBytes = 4096;
constexpr std::size_t kMostRecordBytes = std::size_t{16} << 20;

struct Launch {
    std::uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
    std::uint32_t shared_bytes = 0;
    std::int32_t status = 0;  // what the call returned in the worker (0: success)
    std::uint32_t attribute_count = 0;
    unsigned char attributes[kMostAttributes][kAttributeBytes] = {};
    std::string name;                          // the kernel's mangled name
    std::vector<std::vector<char>> parameters;  // each parameter's bytes, in order
};
struct Memset {
    std::uint64_t dst = 0, bytes = 0;
    std::int32_t value = 0;
    std::int32_t status = 0;  // what the call returned in the worker (0: success)
};
struct Copy {
    std::uint64_t dst = 0, src = 0, bytes = 0;
};
struct FuncAttribute {
    std::string name;
    std::int32_t attribute = 0, value = 0;
    std::int32_t status = 0;  // what the call returned in the worker (0: success)
};
struct Ensure {  // the worker's buffer in gpu_window.h's slot, as Window::ensure made it
    std::uint32_t slot = 0, guard = 0;
    std::uint64_t bytes = 0;
};

// ---------------------------------------------------------------- writing
class Writer {
public:
    void launch(const Launch& l) {
        std::vector<char> op;
        put(op, l.grid, sizeof l.grid);
        put(op, l.block, sizeof l.block);
        put_u32(op, l.shared_bytes);
        put(op, &l.status, 4);
        put_u32(op, l.attribute_count);
        put(op, l.attributes, l.attribute_count * kAttributeBytes);
        put_text(op, l.name);
        put_u32(op, static_cast<std::uint32_t>(l.parameters.size()));
        for (const std::vector<char>& p : l.parameters) {
            put_u32(op, static_cast<std::uint32_t>(p.size()));
            put(op, p.data(), p.size());
        }
        add(OpKind::Launch, op);
    }
    void memset(const Memset& m) { add_plain(OpKind::Memset, m); }
    void copy(const Copy& c) { add_plain(OpKind::Copy, c); }
    void ensure(const Ensure& e) { add_plain(OpKind::Ensure, e); }
    void func_attribute(const FuncAttribute& f) {
        std::vector<char> op;
        put_text(op, f.name);
        put(op, &f.attribute, 4);
        put(op, &f.value, 4);
        put(op, &f.status, 4);
        add(OpKind::FuncAttribute, op);
    }
    void clear() {
        bytes_.clear();
        truncated_ = false;
    }
    // The record as sent: a flag (1: the request made more than fits, and cannot be
    // replayed), then the operations.
    std::vector<char> finish() const {
        std::vector<char> out(4 + bytes_.size(), 0);
        out[0] = truncated_ ? 1 : 0;
        if (!bytes_.empty()) std::memcpy(out.data() + 4, bytes_.data(), bytes_.size());
        return out;
    }

private:
    template <typename T>
    void add_plain(OpKind kind, const T& value) {
        std::vector<char> op;
        put(op, &value, sizeof value);
        add(kind, op);
    }
    static void put(std::vector<char>& to, const void* data, std::size_t n) {
        const char* p = static_cast<const char*>(data);
        to.insert(to.end(), p, p + n);
    }
    static void put_u32(std::vector<char>& to, std::uint32_t v) { put(to, &v, 4); }
    static void put_text(std::vector<char>& to, const std::string& s) {
        put_u32(to, static_cast<std::uint32_t>(s.size()));
        put(to, s.data(), s.size());
    }
    void add(OpKind kind, const std::vector<char>& op) {
        if (truncated_ || bytes_.size() + op.size() + 8 > kMostRecordBytes - 4) {
            truncated_ = true;
            return;
        }
        put_u32(bytes_, static_cast<std::uint32_t>(kind));
        put_u32(bytes_, static_cast<std::uint32_t>(op.size()));
        put(bytes_, op.data(), op.size());
    }
    std::vector<char> bytes_;
    bool truncated_ = false;
};

// ---------------------------------------------------------------- reading
// Calls visit(kind, op) for each operation, op one of the structs above; throws
// std::runtime_error on bytes that are not a whole record or on a truncated one.
template <typename Visit>
void read(const std::vector<char>& record, Visit&& visit) {
    if (record.size() < 4) throw std::runtime_error("an empty record");
    if (record[0] != 0) {
        throw std::runtime_error("the launcher's operations in one request passed the " +
                                 std::to_string(kMostRecordBytes >> 20) + " MiB a record holds");
    }
    std::size_t at = 4;
    auto take = [&](void* to, std::size_t n, std::size_t end) {
        if (n > end - at) throw std::runtime_error("a malformed record");
        std::memcpy(to, record.data() + at, n);
        at += n;
    };
    auto take_u32 = [&](std::size_t end) {
        std::uint32_t v = 0;
        take(&v, 4, end);
        return v;
    };
    auto take_text = [&](std::size_t end) {
        const std::uint32_t n = take_u32(end);
        if (n > kMostNameBytes) throw std::runtime_error("a malformed record (a name too long)");
        std::string s(n, '\0');
        take(&s[0], n, end);
        return s;
    };
    while (at < record.size()) {
        const std::uint32_t kind = take_u32(record.size());
        const std::uint32_t bytes = take_u32(record.size());
        if (bytes > record.size() - at) throw std::runtime_error("a malformed record");
        const std::size_t end = at + bytes;
        switch (static_cast<OpKind>(kind)) {
            case OpKind::Launch: {
                Launch l;
                take(l.grid, sizeof l.grid, end);
                take(l.block, sizeof l.block, end);
                l.shared_bytes = take_u32(end);
                take(&l.status, 4, end);
                l.attribute_count = take_u32(end);
                if (l.attribute_count > kMostAttributes) throw std::runtime_error("a malformed record (attributes)");
                take(l.attributes, l.attribute_count * kAttributeBytes, end);
                l.name = take_text(end);
                const std::uint32_t count = take_u32(end);
                std::size_t total = 0;
                for (std::uint32_t i = 0; i < count; ++i) {
                    const std::uint32_t n = take_u32(end);
                    total += n;
                    if (total > kMostParameterBytes) throw std::runtime_error("a malformed record (parameters)");
                    l.parameters.emplace_back(n);
                    take(l.parameters.back().data(), n, end);
                }
                visit(OpKind::Launch, &l);
                break;
            }
            case OpKind::Memset: { Memset m; take(&m, sizeof m, end); visit(OpKind::Memset, &m); break; }
            case OpKind::Copy: { Copy c; take(&c, sizeof c, end); visit(OpKind::Copy, &c); break; }
            case OpKind::Ensure: { Ensure e; take(&e, sizeof e, end); visit(OpKind::Ensure, &e); break; }
            case OpKind::FuncAttribute: {
                FuncAttribute f;
                f.name = take_text(end);
                take(&f.attribute, 4, end);
                take(&f.value, 4, end);
                take(&f.status, 4, end);
                visit(OpKind::FuncAttribute, &f);
                break;
            }
            default: throw std::runtime_error("a malformed record (an unknown operation)");
        }
        if (at != end) throw std::runtime_error("a malformed record (an operation's length)");
    }
}

}  // namespace launch_record
