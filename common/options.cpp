#include "options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <sstream>

namespace {

bool is_power_of_two(long long x) { return x > 0 && (x & (x - 1)) == 0; }

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


// "a", "a or b", "a, b or c" (with `last` "and" instead of "or" where asked).
template <typename Names>
std::string join_names(const Names& names, std::string_view last = "or") {
    std::string text;
    std::size_t i = 0;
    for (const auto& name : names) {
        if (i > 0 && i + 1 == std::size(names)) {
            text.append(" ").append(last).append(" ");
        } else if (i > 0) {
            text.append(", ");
        }
        text.append(name);
        ++i;
    }
    return text;
}

// One of a fixed set of names, e.g. "--data takes integers or uniform".
template <typename Choice>
Choice parse_choice(const std::string& option, const std::string& text, std::initializer_list<Choice> choices,
                    std::string_view (*name_of)(Choice)) {
    std::vector<std::string_view> names;
    for (Choice choice : choices) {
        if (text == name_of(choice)) return choice;
        names.push_back(name_of(choice));
    }
    throw UsageError(option + " takes " + join_names(names) + ", not '" + text + "'");
}

// The variants of the program's stages that go by this name (usually one; two stages
// may declare the same option, each with its own help line).
std::vector<const Variant*> variants_named(const ProgramSpec& spec, std::string_view name) {
    std::vector<const Variant*> found;
    for (const StageVariants& stage : spec.stage_variants) {
        for (const Variant& variant : stage.variants) {
            if (variant.name == name) found.push_back(&variant);
        }
    }
    return found;
}

// "--A, --B or --C": the options --variants times itself (each timed_by_variants variant).
std::string timed_variant_options(const ProgramSpec& spec) {
    std::vector<std::string> options;
    for (const StageVariants& stage : spec.stage_variants) {
        for (const Variant& variant : stage.variants) {
            const std::string option = "--" + std::string(variant.name);
            if (variant.timed_by_variants && std::find(options.begin(), options.end(), option) == options.end()) {
                options.push_back(option);
            }
        }
    }
    return join_names(options);
}

// "  --NAME V          reduceN: the stage's help text,\n"
// with every further line of the stage's help indented under the first.
std::string variant_help(const StageVariants& stage, const Variant& variant) {
    std::string option = "--" + std::string(variant.name) + " " + std::string(variant.value_name);
    option.resize(std::max<std::size_t>(option.size() + 1, 18), ' ');
    std::string text = "  " + option + stage.stage + ": ";
    for (char c : variant.help) {
        text += c;
        if (c == '\n') text.append(20, ' ');
    }
    return text + "\n";
}

// "reduceK's --A, reduceM's --B and reduceN's --C x --D": what --variants times, stage by stage
std::string variants_timed_by_stage(const ProgramSpec& spec) {
    std::vector<std::string> stages;
    for (const StageVariants& stage : spec.stage_variants) {
        std::vector<std::string> options;
        for (const Variant& variant : stage.variants) {
            if (variant.timed_by_variants) options.push_back("--" + std::string(variant.name));
        }
        if (options.empty()) continue;
        std::string text = stage.stage + "'s ";
        for (std::size_t i = 0; i < options.size(); ++i) text.append(i ? " x " : "").append(options[i]);
        stages.push_back(text);
    }
    return stages.empty() ? "(the stages here have none)" : join_names(stages, "and");
}

}  // namespace

const std::string& option_value(const std::vector<std::string>& args, std::size_t& i) {
    if (i + 1 >= args.size()) throw UsageError(args[i] + " needs a value (see --help)");
    return args[++i];
}

std::uint64_t parse_seed(std::string_view text) {
    const auto seed = parse_integer<std::uint64_t>(text);
    if (!seed) throw UsageError("--seed takes a non-negative whole number, not '" + std::string(text) + "'");
    return *seed;
}

int parse_int_in_range(std::string_view option, std::string_view text, int lo, int hi) {
    const auto value = parse_integer<long long>(text);
    if (!value || *value < lo || *value > hi) {
        throw UsageError(std::string(option) + " takes a whole number from " + std::to_string(lo) + " to " +
                         std::to_string(hi) + ", not '" + std::string(text) + "'");
    }
    return static_cast<int>(*value);
}

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

std::string_view data_name(InputData data) { return data == InputData::Integers ? "integers" : "uniform"; }
std::string_view timing_name(TimingMethod timing) { return timing == TimingMethod::Flushed ? "flushed" : "back-to-back"; }

std::string usage_text(const ProgramSpec& spec) {
    std::ostringstream out;
    out << "usage: " << spec.name << " [options]\n"
        << spec.summary << "\n\n"
        << "  --n N             elements to sum (default 2^26); a whole number or 2^K, up to 2^40\n"
        << "                    (as far as the GPU's memory allows)\n"
        << "  --type T          int | float | double (default float)\n"
        << "  --block B         threads per block, a power of two from " << spec.min_block << " to "
        << spec.max_block << " (default: the stage's default_block, in its record)\n"
        << "  --iters K         timed runs, the median is reported (default 20)\n"
        << "  --warmup W        untimed runs before timing (default 3)\n"
        << "  --timing M        flushed (default: the L2 flushed before each run, one event pair each) |\n"
        << "                    back-to-back (--iters batches of --batch launches, one event pair a batch)\n"
        << "  --batch R         back-to-back: launches per batch (default 100)\n"
        << "  --seed S          input seed (default 2026)\n"
        << "  --device D        CUDA device index (default 0)\n"
        << "  --peak-gbps X     peak bandwidth to report percentages against (default: from the device)\n"
        << "  --no-baseline     do not time reduce0 in the same run (no speedup column)\n"
        << "  --data D          integers (default: exact sums) | uniform (real values in [0, 1), float\n"
        << "                    and double: the error against a correctly rounded sum)\n"
        << "  --csv | --json    machine-readable output, one record per timed kernel\n";
    out << "  --variants        time every labelled variant: " << variants_timed_by_stage(spec) << "\n";
    for (const StageVariants& stage : spec.stage_variants) {
        for (const Variant& variant : stage.variants) out << variant_help(stage, variant);
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
    bool n_given = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& option = args[i];
        auto value = [&]() -> const std::string& { return option_value(args, i); };
        if (read_common_option(option, value, options)) continue;
        auto reject_unless = [&](bool accepted, std::string_view who) {
            if (!accepted) {
                throw UsageError(option + " applies to " + std::string(who) + ", not to " + spec.name);
            }
        };
        if (option == "--n") {
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
        } else if (option == "--timing") {
            options.timing = parse_choice(option, value(), {TimingMethod::Flushed, TimingMethod::BackToBack}, timing_name);
        } else if (option == "--batch") {
            options.batch = parse_int_in_range(option, value(), 1, 100000);
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
        } else if (option == "--variants") {
            options.variants = true;
        } else if (option == "--explain") {
            reject_unless(spec.explain, "reduce0 ... reduce3");
            options.explain = true;
        } else if (option == "--sweep") {
            reject_unless(spec.sweep, "reduce_all");
            options.sweep = parse_sweep(value());
        } else if (const auto variants = variants_named(spec, option.substr(std::min<std::size_t>(2, option.size())));
                   option.starts_with("--") && !variants.empty()) {
            // A stage's labelled variant (variant.h): one of the choices its stage lists.
            const std::string& text = value();
            for (const Variant* variant : variants) {
                if (std::find(variant->choices.begin(), variant->choices.end(), text) == variant->choices.end()) {
                    throw UsageError(option + " takes " + join_names(variant->choices) + ", not '" + text + "'");
                }
            }
            options.variant_choices[option.substr(2)] = text;
        } else {
            throw UsageError("unknown option '" + option + "' (see --help)");
        }
    }
    if (csv && json) throw UsageError("choose one of --csv and --json");
    if (n_given && options.sweep) throw UsageError("choose one of --n and --sweep");
    for (const auto& [name, choice] : options.variant_choices) {
        for (const Variant* variant : variants_named(spec, name)) {
            if (options.variants && variant->timed_by_variants) {
                throw UsageError("--variants times every variant: give no " + timed_variant_options(spec) +
                                 " with it");
            }
        }
    }
    if (options.data == InputData::Uniform && options.type == ValueType::Int32) {
        throw UsageError("--data uniform needs --type float or double: uniform values in [0, 1) are not integers");
    }
    options.format = csv ? OutputFormat::Csv : json ? OutputFormat::Json : OutputFormat::Table;
    for (const auto& [name, choice] : options.variant_choices) {
        for (const Variant* variant : variants_named(spec, name)) {
            if (!variant->unsupported) continue;
            if (const std::string why = variant->unsupported(choice, options.type); !why.empty()) throw UsageError(why);
        }
    }
    return options;
}
