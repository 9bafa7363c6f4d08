#include "ops_bench.h"

#include <cub/version.cuh>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <string>

#include "cuda_check.h"
#include "device_input.h"  // require_device_memory, TooLargeError
#include "report.h"        // print_header, count_text, with_thousands, bytes_text

namespace ops {

namespace {

// Before each run the result is overwritten with bytes 0x7F: as an accumulator that is a
// value no reduction here produces (3.4e38 for float, a count or index near 2^63), so a
// kernel that writes nothing cannot pass the check.
constexpr int kPoisonByte = 0x7F;

bool is_poison(const std::vector<unsigned char>& bytes) {
    return std::all_of(bytes.begin(), bytes.end(), [](unsigned char b) { return b == kPoisonByte; });
}

std::optional<OpValue> read_result(const OpImpl& impl, const void* out, cudaStream_t stream) {
    std::vector<unsigned char> bytes(impl.acc_bytes);
    CUDA_CHECK(cudaMemcpyAsync(bytes.data(), out, bytes.size(), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    if (is_poison(bytes)) return std::nullopt;
    return impl.read(bytes.data());
}

SumCheck read_and_check(const OpImpl& impl, const void* out, const OpExpected& expected, cudaStream_t stream) {
    const std::optional<OpValue> got = read_result(impl, out, stream);
    if (!got) return SumCheck{false, "wrote nothing (the poisoned result is intact)"};
    return check_op(impl.op, *got, expected);
}

DeviceBuffer<unsigned char> zeroed(std::size_t bytes, cudaStream_t stream) {
    DeviceBuffer<unsigned char> buffer(bytes);
    if (bytes) CUDA_CHECK(cudaMemsetAsync(buffer.get(), 0, bytes, stream));
    return buffer;
}

void poison(const OpImpl& impl, void* out, cudaStream_t stream) {
    CUDA_CHECK(cudaMemsetAsync(out, kPoisonByte, impl.acc_bytes, stream));
}

}  // namespace

DeviceOpInput make_op_input(OpType type, std::size_t n, const OpData& data, std::size_t offset, cudaStream_t stream) {
    DeviceOpInput input;
    input.type = type;
    input.n = n;
    const std::size_t size = op_type_size(type);
    input.storage = DeviceBuffer<unsigned char>((n + offset + 1) * size);  // cudaMalloc: 256-byte aligned
    input.values = input.storage.get() + offset * size;
    generate_op_input(type, input.values, n, data, stream);
    return input;
}

std::vector<std::optional<OpValue>> run_ours(const OpImpl& impl, const void* values, std::size_t n, int block,
                                             int times) {
    DeviceBuffer<unsigned char> workspace = zeroed(impl.workspace_bytes(n, block), nullptr);
    DeviceBuffer<unsigned char> out(impl.acc_bytes);
    std::vector<std::optional<OpValue>> results;
    for (int run = 0; run < times; ++run) {
        poison(impl, out.get(), nullptr);
        impl.reduce(values, n, out.get(), workspace.get(), block, nullptr);
        results.push_back(read_result(impl, out.get(), nullptr));
    }
    return results;
}

std::optional<OpValue> run_cub(const OpImpl& impl, const void* values, std::size_t n) {
    DeviceBuffer<unsigned char> out(impl.acc_bytes);
    std::size_t temp_bytes = 0;
    impl.cub_reduce(nullptr, temp_bytes, values, n, out.get(), nullptr);
    DeviceBuffer<unsigned char> temp(temp_bytes);
    poison(impl, out.get(), nullptr);
    impl.cub_reduce(temp.get(), temp_bytes, values, n, out.get(), nullptr);
    return read_result(impl, out.get(), nullptr);
}

std::optional<OpValue> run_unfused(const OpImpl& impl, const void* values, std::size_t n, int block) {
    const OpImpl& sum = op_impl(OpKind::Sum, impl.unfused_sum_type);
    DeviceBuffer<unsigned char> squares(n * impl.acc_bytes);
    DeviceBuffer<unsigned char> workspace = zeroed(sum.workspace_bytes(n, block), nullptr);
    DeviceBuffer<unsigned char> out(impl.acc_bytes);
    poison(impl, out.get(), nullptr);
    impl.square(values, n, squares.get(), nullptr);
    sum.reduce(squares.get(), n, out.get(), workspace.get(), block, nullptr);
    return read_result(impl, out.get(), nullptr);
}

MemoryPlan op_memory_plan(OpKind op, OpType type, std::size_t n, int block, std::size_t flush_bytes) {
    const OpImpl& impl = op_impl(op, type);
    MemoryPlan plan;
    plan.add("input", n * op_type_size(type));
    plan.add("workspace", impl.workspace_bytes(n, block));
    if (impl.square) plan.add("squares (unfused sumsq)", n * impl.acc_bytes);
    plan.add("L2 flush buffer", flush_bytes);
    return plan;  // CUB's temporary storage, a few partials, fits in kAllocationHeadroom
}

// ---------------------------------------------------------------- timing
namespace {

OpRecord new_record(const OpImpl& impl, std::string impl_name, std::string call, std::size_t n, int block,
                    const OpsContext& context) {
    OpRecord r;
    r.op = std::string(op_name(impl.op));
    r.type = std::string(op_type_name(impl.type));
    r.impl = std::move(impl_name);
    r.call = std::move(call);
    r.n = n;
    r.bytes = n * op_type_size(impl.type);  // every path reads the input once; GB/s compares like with like
    r.block = block;
    r.device = context.device.name;
    r.peak_gbps = context.device.peak.gbps;
    return r;
}

void finish_record(OpRecord& r, const TimedRuns& runs) {
    set_timing_fields(r, runs);
    r.check = runs.failed == 0 ? runs.first_detail : runs.first_failure;
}

}  // namespace

std::vector<OpRecord> bench_op(OpKind op, OpType type, std::size_t n, std::uint64_t seed, OpsContext& context) {
    const OpImpl& impl = op_impl(op, type);
    const OpData data = op_data(op, type, n, seed);
    // The GPU writes the input while the host computes what the reductions must give.
    const DeviceOpInput input = make_op_input(type, n, data, 0, context.stream);
    const OpExpected expected = host_reference(op, type, n, data, context.device.sms);
    CUDA_CHECK(cudaStreamSynchronize(context.stream));

    DeviceBuffer<unsigned char> out(impl.acc_bytes);
    const auto prepare = [&] { poison(impl, out.get(), context.stream); };
    const auto check = [&] { return read_and_check(impl, out.get(), expected, context.stream); };
    const std::string label = std::string(op_name(op)) + " " + std::string(op_type_name(type)) + " n=" + count_text(n);
    std::vector<OpRecord> records;

    // Ours, or a variant of ours with the same workspace: one launch per run.
    using Reduce = void (*)(const void*, std::size_t, void*, void*, int, cudaStream_t);
    const auto time_ours = [&](const std::string& name, const std::string& call, Reduce reduce) {
        DeviceBuffer<unsigned char> workspace = zeroed(impl.workspace_bytes(n, context.block), context.stream);
        OpRecord r = new_record(impl, name, call, n, context.block, context);
        finish_record(r, time_runs(label + " " + name, context.warmup, context.iters, context.flusher, context.stream,
                                   prepare,
                                   [&] { reduce(input.values, n, out.get(), workspace.get(), context.block, context.stream); },
                                   check));
        records.push_back(r);
    };
    time_ours("ours", impl.kernel, impl.reduce);
    {  // CUB: ask for its temporary storage, allocate it outside the timed region
        std::size_t temp_bytes = 0;
        impl.cub_reduce(nullptr, temp_bytes, input.values, n, out.get(), context.stream);
        DeviceBuffer<unsigned char> temp(temp_bytes);
        OpRecord r = new_record(impl, "cub", impl.cub_call, n, 0, context);
        finish_record(r, time_runs(label + " cub", context.warmup, context.iters, context.flusher, context.stream,
                                   prepare,
                                   [&] {
                                       impl.cub_reduce(temp.get(), temp_bytes, input.values, n, out.get(),
                                                       context.stream);
                                   },
                                   check));
        records.push_back(r);
    }
    if (impl.reduce_every_lane) {  // argmax, every lane compared in turn
        time_ours("every_lane", std::string(impl.kernel) + " [every lane]", impl.reduce_every_lane);
    }
    if (impl.square) {  // sumsq unfused: x*x to memory, then our sum of it
        const OpImpl& sum = op_impl(OpKind::Sum, impl.unfused_sum_type);
        DeviceBuffer<unsigned char> squares(n * impl.acc_bytes);
        DeviceBuffer<unsigned char> workspace = zeroed(sum.workspace_bytes(n, context.block), context.stream);
        OpRecord r = new_record(impl, "unfused", "square_elements + " + std::string(sum.kernel), n, context.block,
                                context);
        finish_record(r, time_runs(label + " unfused", context.warmup, context.iters, context.flusher, context.stream,
                                   prepare,
                                   [&] {
                                       impl.square(input.values, n, squares.get(), context.stream);
                                       sum.reduce(squares.get(), n, out.get(), workspace.get(), context.block,
                                                  context.stream);
                                   },
                                   check));
        records.push_back(r);
    }
    const double cub_ms = records[1].median_ms;
    for (OpRecord& r : records) {
        if (r.median_ms > 0 && cub_ms > 0) r.vs_cub = cub_ms / r.median_ms;
    }
    return records;
}

// ---------------------------------------------------------------- the program
namespace {

template <typename Item>
std::string joined(const std::vector<Item>& items, std::string_view (*name_of)(Item)) {
    std::string text;
    for (const Item& item : items) text += (text.empty() ? "" : ", ") + std::string(name_of(item));
    return text;
}

std::string sizes_text(const std::vector<std::size_t>& sizes) {
    if (sizes.size() == 1) return "n = " + with_thousands(sizes[0]) + " (" + count_text(sizes[0]) + ")";
    std::string text = "n =";
    for (std::size_t n : sizes) text += " " + count_text(n);
    return text;
}

}  // namespace

int run_ops(const OpsOptions& options) {
    const DeviceInfo device = open_device(0, std::nullopt);
    // Everything the largest size needs, for the hungriest operator and type, must fit
    // before anything is allocated: one line and exit status 3, not a failure halfway.
    const std::size_t largest = *std::max_element(options.sizes.begin(), options.sizes.end());
    for (OpKind op : options.ops) {
        for (OpType type : options.types) {
            require_device_memory(op_memory_plan(op, type, largest, options.block, L2Flusher::bytes_for(device.l2_bytes)),
                                  "n = " + count_text(largest) + " " + std::string(op_type_name(type)) + " elements (" +
                                      std::string(op_name(op)) + ")");
        }
    }
    L2Flusher flusher(device.l2_bytes);
    CudaStream stream;
    OpsContext context{device, flusher, stream, options.iters, options.warmup, options.block};

    if (!options.csv) {
        print_header(std::cout,
                     RunHeader{"reduce_ops: reduce7's kernel for other operators and types, beside CUB's DeviceReduce",
                               describe_device(device), describe_peak(device),
                               describe_software(device) + ", CUB " + std::to_string(CUB_MAJOR_VERSION) + "." +
                                   std::to_string(CUB_MINOR_VERSION) + "." + std::to_string(CUB_SUBMINOR_VERSION),
                               joined(options.ops, op_name) + " on " + joined(options.types, op_type_name) + "; " +
                                   sizes_text(options.sizes) + ", block " + std::to_string(options.block) + ", seed " +
                                   std::to_string(options.seed),
                               "median of " + std::to_string(options.iters) + " timed runs after 1 checked run and " +
                                   std::to_string(options.warmup) + " warm-ups; before each run the L2 is flushed (a " +
                                   bytes_text(static_cast<double>(flusher.bytes())) +
                                   " read) and the result poisoned; every run's result is checked"});
    }
    bool all_verified = true;
    bool csv_header = true;
    for (std::size_t n : options.sizes) {
        std::vector<OpRecord> records;
        for (OpKind op : options.ops) {
            for (OpType type : options.types) {
                std::vector<OpRecord> some = bench_op(op, type, n, options.seed, context);
                records.insert(records.end(), some.begin(), some.end());
            }
        }
        for (const OpRecord& r : records) all_verified = all_verified && r.verified;
        if (options.csv) {
            write_op_csv(std::cout, records, csv_header);
            csv_header = false;
        } else {
            std::cout << "\nn = " << with_thousands(n) << " (" << count_text(n) << ") elements, expected results from "
                      << host_threads_for(n) << " host thread" << (host_threads_for(n) == 1 ? "" : "s") << "\n";
            print_op_table(std::cout, records);
        }
        std::cout.flush();
    }
    if (!options.csv) {
        std::cout << "\nGB/s = n x bytes per element / median time: the input, read once (2 bytes per half). x CUB: "
                     "CUB's median time / this median time, same operator and type.\n"
                     "every_lane: argmax with each vector's lanes compared one by one, not by its largest value "
                     "first (ops/operators.cuh).\n"
                     "unfused: sumsq as one kernel writing every x*x to memory (as the accumulator type) and a sum "
                     "reading it back; its GB/s counts the input only, to compare with the fused row.\n"
                     "check: exact, or within bound (sumsq past the accumulator's exact range, meanvar: op_data.cpp "
                     "derives the bounds).\n";
        if (!all_verified) std::cout << "Some results failed verification: see the check column.\n";
    }
    return all_verified ? 0 : 1;
}

// ---------------------------------------------------------------- the NaN table
void print_nan_table(std::ostream& out) {
    const DeviceInfo device = open_device(0, std::nullopt);
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    struct Case {
        const char* label;
        std::vector<float> values;
    };
    const std::vector<Case> cases = {
        {"[1, NaN, 3]", {1.f, nan, 3.f}}, {"[NaN, 1, 3]", {nan, 1.f, 3.f}}, {"[1, 3, NaN]", {1.f, 3.f, nan}},
        {"[-inf, -inf]", {-inf, -inf}},   {"[NaN, NaN]", {nan, nan}},       {"[+0, -0]", {0.f, -0.f}},
        {"[-0, +0]", {-0.f, 0.f}},        {"[] (empty)", {}}};
    const OpImpl& max = op_impl(OpKind::Max, OpType::Float32);
    const OpImpl& argmax = op_impl(OpKind::ArgMax, OpType::Float32);

    const auto value_text = [](const std::optional<OpValue>& v) {
        return v ? format_value(v->value) : std::string("(nothing written)");
    };
    const auto argmax_text = [](const std::optional<OpValue>& v) {
        if (!v) return std::string("(nothing written)");
        return (v->index == ~0ull ? std::string("none") : std::to_string(v->index)) + " (" + format_value(v->value) + ")";
    };
    // A sequential fold from the first element, as a loop over an array would do it.
    const auto fold = [](const std::vector<float>& values, float (*step)(float, float)) {
        if (values.empty()) return std::string("-");
        float acc = values[0];
        for (std::size_t i = 1; i < values.size(); ++i) acc = step(acc, values[i]);
        return format_value(acc);
    };

    std::vector<std::vector<std::string>> rows = {
        {"input", "ours max", "fmaxf fold", "std::max fold", "CUB Max", "ours argmax", "CUB ArgMax"}};
    for (const Case& c : cases) {
        const std::size_t n = c.values.size();
        DeviceBuffer<float> values(std::max<std::size_t>(n, 1));
        if (n) CUDA_CHECK(cudaMemcpy(values.get(), c.values.data(), n * sizeof(float), cudaMemcpyHostToDevice));
        rows.push_back({c.label, value_text(run_ours(max, values.get(), n, 256).front()),
                        fold(c.values, [](float a, float b) { return std::fmax(a, b); }),
                        fold(c.values, [](float a, float b) { return std::max(a, b); }),
                        value_text(run_cub(max, values.get(), n)),
                        argmax_text(run_ours(argmax, values.get(), n, 256).front()),
                        argmax_text(run_cub(argmax, values.get(), n))});
    }
    out << "max and argmax of float inputs with NaN, infinities and signed zeros, on " << describe_device(device)
        << ", CUB " << CUB_MAJOR_VERSION << "." << CUB_MINOR_VERSION << "." << CUB_SUBMINOR_VERSION << "\n\n";
    print_aligned(out, rows, rows.front().size());  // every column left-aligned
    out << "\nours           max: a NaN wins from either side, +0 ranks above -0 (ops/operators.cuh), on the GPU\n"
           "fmaxf fold     on the host: acc = x[0], then acc = fmaxf(acc, x[i]); fmaxf returns the other operand\n"
           "               when one is NaN (IEEE 754-2008 maxNum)\n"
           "std::max fold  on the host: acc = x[0], then acc = std::max(acc, x[i]), which is (acc < x[i]) ? x[i] : acc\n"
           "CUB Max        cub::DeviceReduce::Max on the GPU: cuda::maximum, (a < b) ? b : a, over CUB's tree, with\n"
           "               numeric_limits<float>::lowest() as the initial value\n"
           "argmax         index (value); ours: the first NaN, else the first largest, 'none' for no elements;\n"
           "               CUB: cub::DeviceReduce::ArgMax (value and index to two outputs) on the GPU\n";
}

}  // namespace ops
