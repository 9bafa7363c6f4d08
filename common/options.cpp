#include "options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <sstream>

namespace {

bool is_power_of_two(long long x) { return x > 0 && (x & (x - 1)) == 0; }

template <typename Int>
std::optional<Int> parse_integer(std::string_view text) {
    Int value{};
    const char* first = text.data();
    const char* last = text.data() + text.size();
    auto [end, error] = std::from_chars(first, last, value);
    if (text.empty() || error != std::errc{} || end != last) return std::nullopt;
    return value;
}

std::optional<double> parse_double(const std::string& text) {
    if (text.empty()) return std::nullopt;
    std::size_t used = 0;
    try {
        const double value = std::stod(text, &used);
        if (used != text.size() || !std::isfinite(value)) return std::nullopt;
        return value;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

int parse_int_in_range(std::string_view option, const std::string& text, int lo, int hi) {
    const auto value = parse_integer<long long>(text);
    if (!value || *value < lo || *value > hi) {
        throw UsageError(std::string(option) + " takes a whole number from " + std::to_string(lo) + " to " +
                         std::to_string(hi) + ", not '" + text + "'");
    }
    return static_cast<int>(*value);
}

// One of a fixed set of names, e.g. "--finish takes two-pass, atomic or last-block".
template <typename Choice>
Choice parse_choice(const std::string& option, const std::string& text, std::initializer_list<Choice> choices,
                    std::string_view (*name_of)(Choice)) {
    std::string names;
    std::size_t i = 0;
    for (Choice choice : choices) {
        if (text == name_of(choice)) return choice;
        names += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + std::string(name_of(choice));
        ++i;
    }
    throw UsageError(option + " takes " + names + ", not '" + text + "'");
}

}  // namespace

std::optional<std::size_t> parse_count(std::string_view text) {
    const auto caret = text.find('^');
    if (caret == std::string_view::npos) {
        if (!text.empty() && text.front() == '+') return std::nullopt;
        return parse_integer<std::size_t>(text);
    }
    const auto base = parse_integer<int>(text.substr(0, caret));
    const auto exponent = parse_integer<int>(text.substr(caret + 1));
    if (!base || *base != 2 || !exponent || *exponent < 0 || *exponent > 62) return std::nullopt;
    return std::size_t{1} << *exponent;
}

SizeSweep parse_sweep(std::string_view text) {
    const std::string quoted = "'" + std::string(text) + "'";
    const auto colon = text.find(':');
    if (colon == std::string_view::npos) {
        throw UsageError("--sweep takes FROM:TO as powers of two, e.g. 2^10:2^28, not " + quoted);
    }
    auto exponent_of = [&](std::string_view part) {
        const auto count = parse_count(part);
        if (!count || !is_power_of_two(static_cast<long long>(*count))) {
            throw UsageError("--sweep bounds must be powers of two such as 2^10 or 1024, not " + quoted);
        }
        int log2 = 0;
        while ((std::size_t{1} << log2) < *count) ++log2;
        return log2;
    };
    SizeSweep sweep{exponent_of(text.substr(0, colon)), exponent_of(text.substr(colon + 1))};
    if (sweep.from_log2 > sweep.to_log2) {
        throw UsageError("--sweep needs FROM <= TO, not " + quoted);
    }
    if (sweep.to_log2 > kMaxLog2Elements) {
        throw UsageError("--sweep goes up to 2^" + std::to_string(kMaxLog2Elements) + ", not " + quoted);
    }
    return sweep;
}

std::string_view type_name(ValueType type) {
    switch (type) {
        case ValueType::Int32: return "int";
        case ValueType::Float32: return "float";
        case ValueType::Float64: return "double";
    }
    return "?";
}

std::size_t type_size(ValueType type) { return type == ValueType::Float64 ? 8 : 4; }

std::string_view finish_name(Finish finish) {
    switch (finish) {
        case Finish::TwoPass: return "two-pass";
        case Finish::Atomic: return "atomic";
        case Finish::LastBlock: return "last-block";
    }
    return "?";
}

std::string_view last_warp_name(LastWarp mode) {
    switch (mode) {
        case LastWarp::SyncWarp: return "syncwarp";
        case LastWarp::LegacyVolatile: return "legacy-volatile";
        case LastWarp::LegacyPlain: return "legacy-plain";
    }
    return "?";
}

std::string_view select_name(Select select) { return select == Select::Modulo ? "modulo" : "bitmask"; }

std::string_view running_sum_name(RunningSum where) { return where == RunningSum::Shared ? "shared" : "register"; }

std::string_view data_name(InputData data) { return data == InputData::Integers ? "integers" : "uniform"; }

Finish default_finish(ValueType type) { return type == ValueType::Int32 ? Finish::Atomic : Finish::LastBlock; }

Finish effective_finish(const Options& options) { return options.finish.value_or(default_finish(options.type)); }

int effective_vec(const Options& options) {
    return options.vec != 0 ? options.vec : static_cast<int>(16 / type_size(options.type));
}

std::string usage_text(const ProgramSpec& spec) {
    std::ostringstream out;
    out << "usage: " << spec.name << " [options]\n"
        << spec.summary << "\n\n"
        << "  --n N             elements to sum (default 2^26); a whole number or 2^K, at most 2^31 - 1\n"
        << "  --type T          int | float | double (default float)\n"
        << "  --block B         threads per block, a power of two from " << spec.min_block << " to "
        << spec.max_block << " (default 256)\n"
        << "  --iters K         timed runs, the median is reported (default 20)\n"
        << "  --warmup W        untimed runs before timing (default 3)\n"
        << "  --seed S          input seed (default 2026)\n"
        << "  --device D        CUDA device index (default 0)\n"
        << "  --peak-gbps X     peak bandwidth to report percentages against (default: from the device)\n"
        << "  --no-baseline     do not time reduce0 in the same run (no speedup column)\n"
        << "  --data D          integers (default: exact sums) | uniform (real values in [0, 1), float\n"
        << "                    and double: the error against a correctly rounded sum)\n"
        << "  --csv | --json    machine-readable output, one record per timed kernel\n";
    if (spec.vector_and_finish) {
        out << "  --vec V           reduce7: elements per vector load, 1 | 2 | 4 (default: 16 bytes)\n"
            << "  --finish F        reduce7: two-pass | atomic | last-block (default: atomic for int,\n"
            << "                    last-block for float and double: the fastest that gives the same bits every run)\n"
            << "  --variants        time every labelled variant: reduce0's --select"
            << (spec.running_sum ? ", reduce3's --running-sum" : "") << ", reduce7's --vec x --finish\n";
    } else {
        out << "  --variants        time every labelled variant: reduce0's --select"
            << (spec.running_sum ? " and reduce3's --running-sum" : "") << "\n";
    }
    out << "  --select S        reduce0: modulo (default, tid % (2s) == 0) | bitmask ((tid & (2s - 1)) == 0):\n"
        << "                    the same threads add; bitmask measures what the run-time % costs\n";
    if (spec.running_sum) {
        out << "  --running-sum R   reduce3: register (default) | shared (each step reads shared[tid] again,\n"
            << "                    as reduce2's tree does)\n";
    }
    if (spec.last_warp) {
        out << "  --last-warp M     reduce4: syncwarp (default) | legacy-volatile | legacy-plain;\n"
            << "                    the legacy modes are the pre-Volta code, racy on Volta and later\n";
    }
    if (spec.explain) {
        out << "  --explain         print the per-step thread, warp and bank statistics of the tree, then exit\n";
    }
    if (spec.sweep) {
        out << "  --sweep FROM:TO   run every size 2^K from FROM to TO (powers of two, e.g. 2^10:2^28)\n";
    }
    out << spec.more_options << "  --help            this text\n\n"
        << "exit status: 0 all results verified, 1 a result failed verification, 2 usage error,\n"
        << "3 CUDA or runtime error\n";
    return out.str();
}

Options parse_options(const std::vector<std::string>& args, const ProgramSpec& spec) {
    Options options;
    bool csv = false;
    bool json = false;
    bool vec_given = false;
    bool n_given = false;
    bool finish_given = false;
    bool select_given = false;
    bool running_sum_given = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& option = args[i];
        auto value = [&]() -> const std::string& {
            if (i + 1 >= args.size()) throw UsageError(option + " needs a value (see --help)");
            return args[++i];
        };
        auto reject_unless = [&](bool accepted, std::string_view who) {
            if (!accepted) {
                throw UsageError(option + " applies to " + std::string(who) + ", not to " + spec.name);
            }
        };
        if (option == "--help" || option == "-h") {
            options.help = true;
        } else if (option == "--n") {
            const std::string& text = value();
            const auto n = parse_count(text);
            if (!n || *n > kMaxElements) {
                throw UsageError("--n takes a count from 0 to 2^" + std::to_string(kMaxLog2Elements) +
                                 " (a whole number or 2^K), not '" + text + "'");
            }
            options.n = *n;
            n_given = true;
        } else if (option == "--type") {
            const std::string& text = value();
            try {
                options.type = parse_choice(option, text, {ValueType::Int32, ValueType::Float32, ValueType::Float64},
                                            type_name);
            } catch (const UsageError&) {
                // half, bfloat16, int64: a type of --op's program, not of the stages.
                if (std::find(spec.op_types.begin(), spec.op_types.end(), text) == spec.op_types.end()) throw;
                throw UsageError("--type " + text + " needs --op: --op sum --type " + text +
                                 " sums it with reduce7's kernel, beside CUB (docs/10-your-own-reduction.md); the "
                                 "stages take int, float or double");
            }
        } else if (option == "--block") {
            const std::string& text = value();
            const auto block = parse_integer<long long>(text);
            if (!block || !is_power_of_two(*block) || *block < spec.min_block || *block > spec.max_block) {
                throw UsageError("--block " + text + " is not supported by " + spec.block_owner +
                                 ": use a power of two from " + std::to_string(spec.min_block) + " to " +
                                 std::to_string(spec.max_block));
            }
            options.block = static_cast<int>(*block);
        } else if (option == "--iters") {
            options.iters = parse_int_in_range(option, value(), 1, 100000);
        } else if (option == "--warmup") {
            options.warmup = parse_int_in_range(option, value(), 0, 100000);
        } else if (option == "--seed") {
            const std::string& text = value();
            const auto seed = parse_integer<std::uint64_t>(text);
            if (!seed) throw UsageError("--seed takes a non-negative whole number, not '" + text + "'");
            options.seed = *seed;
        } else if (option == "--device") {
            options.device = parse_int_in_range(option, value(), 0, 1023);
        } else if (option == "--peak-gbps") {
            const std::string& text = value();
            const auto peak = parse_double(text);
            if (!peak || *peak <= 0) throw UsageError("--peak-gbps takes a positive number, not '" + text + "'");
            options.peak_gbps = *peak;
        } else if (option == "--no-baseline") {
            options.baseline = false;
        } else if (option == "--data") {
            options.data = parse_choice(option, value(), {InputData::Integers, InputData::Uniform}, data_name);
        } else if (option == "--csv") {
            csv = true;
        } else if (option == "--json") {
            json = true;
        } else if (option == "--vec") {
            reject_unless(spec.vector_and_finish, "reduce7 and reduce_all");
            const std::string& text = value();
            if (text != "1" && text != "2" && text != "4") {
                throw UsageError("--vec takes 1, 2 or 4 elements per load, not '" + text + "'");
            }
            options.vec = std::stoi(text);
            vec_given = true;
        } else if (option == "--finish") {
            reject_unless(spec.vector_and_finish, "reduce7 and reduce_all");
            finish_given = true;
            options.finish = parse_choice(option, value(), {Finish::TwoPass, Finish::Atomic, Finish::LastBlock},
                                          finish_name);
        } else if (option == "--variants") {
            options.variants = true;
        } else if (option == "--select") {  // every program times reduce0
            select_given = true;
            options.select = parse_choice(option, value(), {Select::Modulo, Select::Bitmask}, select_name);
        } else if (option == "--running-sum") {
            reject_unless(spec.running_sum, "reduce3 and reduce_all");
            running_sum_given = true;
            options.running_sum =
                parse_choice(option, value(), {RunningSum::Register, RunningSum::Shared}, running_sum_name);
        } else if (option == "--last-warp") {
            reject_unless(spec.last_warp, "reduce4 and reduce_all");
            options.last_warp = parse_choice(
                option, value(), {LastWarp::SyncWarp, LastWarp::LegacyVolatile, LastWarp::LegacyPlain}, last_warp_name);
        } else if (option == "--explain") {
            reject_unless(spec.explain, "reduce0 ... reduce3");
            options.explain = true;
        } else if (option == "--sweep") {
            reject_unless(spec.sweep, "reduce_all");
            options.sweep = parse_sweep(value());
        } else {
            throw UsageError("unknown option '" + option + "' (see --help)");
        }
    }
    if (csv && json) throw UsageError("choose one of --csv and --json");
    if (n_given && options.sweep) throw UsageError("choose one of --n and --sweep");
    if (options.variants && (vec_given || finish_given || select_given || running_sum_given)) {
        throw UsageError("--variants times every variant: give no --vec, --finish, --select or --running-sum with it");
    }
    if (options.data == InputData::Uniform && options.type == ValueType::Int32) {
        throw UsageError("--data uniform needs --type float or double: uniform values in [0, 1) are not integers");
    }
    options.format = csv ? OutputFormat::Csv : json ? OutputFormat::Json : OutputFormat::Table;
    if (vec_given && options.vec * type_size(options.type) > 16) {
        throw UsageError("--vec " + std::to_string(options.vec) + " with " + std::string(type_name(options.type)) +
                         " would be a " + std::to_string(options.vec * type_size(options.type)) +
                         "-byte load; the widest load is 16 bytes");
    }
    return options;
}
