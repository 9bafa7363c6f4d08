#include "ops_options.h"

#include <algorithm>
#include <charconv>
#include <sstream>
#include <string_view>

namespace ops {

namespace {

// "sum | max | ... | meanvar | all": every item's name, then "all".
template <typename Item, std::size_t N>
std::string choices_text(const Item (&all_items)[N], std::string_view (*name_of)(Item)) {
    std::string names;
    for (const Item item : all_items) names += std::string(name_of(item)) + " | ";
    return names + "all";
}

// "sum", "sum,max" or "all" -> the named items, in the order of `all_items`.
template <typename Item, std::size_t N>
std::vector<Item> parse_list(const std::string& option, const std::string& text, const Item (&all_items)[N],
                             std::string_view (*name_of)(Item)) {
    std::vector<bool> chosen(N, false);
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = text.find(',', start);
        const std::string word = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        bool known = false;
        for (std::size_t k = 0; k < N; ++k) {
            if (word == "all" || word == name_of(all_items[k])) chosen[k] = known = true;
        }
        if (!known) throw UsageError(option + " takes " + choices_text(all_items, name_of) +
                                     " (or a comma-separated list), not '" + text + "'");
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    std::vector<Item> items;
    for (std::size_t k = 0; k < N; ++k) {
        if (chosen[k]) items.push_back(all_items[k]);
    }
    return items;
}

std::size_t parse_n(const std::string& text) {
    const auto n = parse_count(text);
    if (!n || *n > kMaxElements) {
        throw UsageError("--n takes a count from 0 to 2^" + std::to_string(kMaxLog2Elements) +
                         " (a whole number or 2^K), not '" + text + "'");
    }
    return *n;
}

// "2^20:2^28" -> 2^20, 2^22, ..., 2^28: every other power of two, and TO itself.
std::vector<std::size_t> parse_sizes(const std::string& text) {
    const std::string why = "--sizes takes FROM:TO, powers of two with FROM <= TO <= 2^" +
                            std::to_string(kMaxLog2Elements) + " (e.g. 2^20:2^28), not '" + text + "'";
    const auto colon = text.find(':');
    if (colon == std::string::npos) throw UsageError(why);
    auto exponent_of = [&](const std::string& part) {
        const auto count = parse_count(part);
        if (!count || *count == 0 || (*count & (*count - 1)) != 0 || *count > kMaxElements) throw UsageError(why);
        int log2 = 0;
        while ((std::size_t{1} << log2) < *count) ++log2;
        return log2;
    };
    const int from = exponent_of(text.substr(0, colon)), to = exponent_of(text.substr(colon + 1));
    if (from > to) throw UsageError(why);
    std::vector<std::size_t> sizes;
    for (int k = from; k <= to; k += 2) sizes.push_back(std::size_t{1} << k);
    if (sizes.back() != std::size_t{1} << to) sizes.push_back(std::size_t{1} << to);
    return sizes;
}

}  // namespace

std::string op_choices() { return choices_text(kAllOps, op_name); }

std::string ops_usage_text() {
    std::ostringstream out;
    out << "usage: reduce_ops [options]\n"
        << "reduce7's kernel for other operators and element types, timed beside CUB's DeviceReduce\n"
        << "computing the same result, on the same input, in the same run\n\n"
        << "  --op OP           " << op_choices() << ", or a\n"
        << "                    comma-separated list (default all)\n"
        << "  --type T          " << choices_text(kAllTypes, op_type_name) << ", or a list (default all)\n"
        << "  --n N             elements (default 2^26); a whole number or 2^K, at most 2^"
        << kMaxLog2Elements << "\n"
        << "  --sizes FROM:TO   a sweep: every other power of two from FROM to TO, e.g. 2^20:2^28\n"
        << "  --block B         threads per block: 128, 256, 512 or 1024 (default 256); the operator\n"
        << "                    kernels are compiled for these four only, to keep the build short\n"
        << "  --iters K         timed runs, the median is reported (default 20)\n"
        << "  --warmup W        untimed runs before timing (default 3)\n"
        << "  --seed S          input seed (default 2026)\n"
        << "  --csv             one CSV record per timed reduction\n"
        << "  --nan-table       what max and argmax return for NaN, infinities and signed zeros: ours,\n"
        << "                    a host fmaxf fold, a host std::max fold and CUB, computed now; then exit\n"
        << "  --help            this text\n\n"
        << "sumsq is also timed unfused (a kernel writes every x*x, a sum reads them back).\n"
        << "exit status: 0 all results verified, 1 a result failed verification, 2 usage error,\n"
        << "3 no GPU, CUDA error, or too large for the GPU\n";
    return out.str();
}

OpsOptions parse_ops_options(const std::vector<std::string>& args) {
    OpsOptions options;
    options.ops.assign(std::begin(kAllOps), std::end(kAllOps));
    options.types.assign(std::begin(kAllTypes), std::end(kAllTypes));
    bool n_given = false, sizes_given = false, other_given = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& option = args[i];
        auto value = [&]() -> const std::string& { return option_value(args, i); };
        if (read_common_option(option, value, options)) continue;
        if (option == "--nan-table") {
            options.nan_table = true;
            continue;
        }
        other_given = true;
        if (option == "--op") {
            options.ops = parse_list(option, value(), kAllOps, op_name);
        } else if (option == "--type") {
            options.types = parse_list(option, value(), kAllTypes, op_type_name);
        } else if (option == "--n") {
            options.sizes = {parse_n(value())};
            n_given = true;
        } else if (option == "--sizes") {
            options.sizes = parse_sizes(value());
            sizes_given = true;
        } else if (option == "--block") {
            const std::string& text = value();
            const auto block = parse_integer<int>(text);
            if (!block || std::find(std::begin(kOpBlocks), std::end(kOpBlocks), *block) == std::end(kOpBlocks)) {
                throw UsageError("--block " + text +
                                 " is not supported by reduce_ops: use 128, 256, 512 or 1024 (the operator kernels are "
                                 "compiled for these only)");
            }
            options.block = *block;
        } else if (option == "--csv") {
            options.csv = true;
        } else {
            throw UsageError("unknown option '" + option + "' (see --help)");
        }
    }
    if (n_given && sizes_given) throw UsageError("choose one of --n and --sizes");
    if (options.nan_table && other_given) {
        throw UsageError("--nan-table prints one fixed table: give no other options with it");
    }
    return options;
}

}  // namespace ops
