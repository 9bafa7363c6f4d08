// The command line: defaults, every accepted form, and every kind of bad input, each of
// which must be a UsageError (exit 2, before any CUDA call) with a message naming it.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "options.h"

namespace {

// Labelled variants as a stage declares them (common/variant.h), made up for the parser's
// tests so that they hold in every tree: "reduce8" has a plain variant and one whose
// default and supported choices depend on the element type.
constexpr std::string_view kShapeChoices[] = {"round", "square"};
constexpr std::string_view kWidthChoices[] = {"1", "2", "4"};
constexpr Variant kTestVariants[] = {
    {.name = "shape", .value_name = "S", .choices = kShapeChoices, .help = "round (default) | square"},
    {.name = "width",
     .value_name = "W",
     .choices = kWidthChoices,
     .help = "1 | 2 | 4 elements\n(default: 16 bytes)",
     .default_for = [](ValueType type) -> std::string_view { return type == ValueType::Float64 ? "2" : "4"; },
     .unsupported = [](std::string_view width, ValueType type) -> std::string {
         return width == "4" && type == ValueType::Float64 ? "--width 4 with double is more than 16 bytes" : "";
     },
     .always_labelled = true},
};
constexpr std::string_view kModeChoices[] = {"safe", "racy"};
constexpr Variant kUntimedVariants[] = {
    {.name = "mode", .value_name = "M", .choices = kModeChoices, .help = "safe | racy", .timed_by_variants = false},
};

ProgramSpec stage_spec(int min_block = 32) {
    ProgramSpec spec;
    spec.name = "reduce3";
    spec.summary = "test";
    spec.min_block = min_block;
    spec.max_block = 1024;
    spec.block_owner = "reduce3";
    return spec;
}

ProgramSpec runner_spec() {
    ProgramSpec spec = stage_spec(64);
    spec.name = "reduce_all";
    spec.block_owner = "every stage";
    spec.stage_variants = {{"reduce8", kTestVariants}, {"reduce9", kUntimedVariants}};
    spec.sweep = true;
    return spec;
}

Options parse(std::vector<std::string> args, const ProgramSpec& spec = stage_spec()) {
    return parse_options(args, spec);
}

// The message of the UsageError the arguments raise ("" if they parse).
std::string usage_error(std::vector<std::string> args, const ProgramSpec& spec = stage_spec()) {
    try {
        parse_options(args, spec);
    } catch (const UsageError& e) {
        return e.what();
    }
    return "";
}

TEST(Options, Defaults) {
    const Options o = parse({});
    EXPECT_EQ(o.n, std::size_t{1} << 26);
    EXPECT_EQ(o.type, ValueType::Float32);
    EXPECT_EQ(o.block, 0);  // not given: each stage's default_block
    EXPECT_EQ(o.iters, 20);
    EXPECT_EQ(o.warmup, 3);
    EXPECT_EQ(o.device, 0);
    EXPECT_FALSE(o.peak_gbps.has_value());
    EXPECT_TRUE(o.baseline);
    EXPECT_EQ(o.format, OutputFormat::Table);
    EXPECT_FALSE(o.help);
    EXPECT_TRUE(o.variant_choices.empty());  // every stage's variants at their defaults
    EXPECT_EQ(o.timing, TimingMethod::Flushed);
    EXPECT_EQ(o.batch, 100);
}

TEST(Options, EveryOptionParses) {
    const Options o = parse({"--n", "2^20", "--type", "double", "--block", "1024", "--iters", "7", "--warmup", "0",
                             "--seed", "99", "--device", "1", "--peak-gbps", "3352.5", "--no-baseline", "--json"});
    EXPECT_EQ(o.n, std::size_t{1} << 20);
    EXPECT_EQ(o.type, ValueType::Float64);
    EXPECT_EQ(o.block, 1024);
    EXPECT_EQ(o.iters, 7);
    EXPECT_EQ(o.warmup, 0);
    EXPECT_EQ(o.seed, 99u);
    EXPECT_EQ(o.device, 1);
    EXPECT_DOUBLE_EQ(*o.peak_gbps, 3352.5);
    EXPECT_FALSE(o.baseline);
    EXPECT_EQ(o.format, OutputFormat::Json);
    EXPECT_EQ(parse({"--csv"}).format, OutputFormat::Csv);
    EXPECT_TRUE(parse({"--help"}).help);
    EXPECT_EQ(parse({"--type", "int"}).type, ValueType::Int32);
    const Options b = parse({"--timing", "back-to-back", "--batch", "50"});
    EXPECT_EQ(b.timing, TimingMethod::BackToBack);
    EXPECT_EQ(b.batch, 50);
    EXPECT_EQ(parse({"--timing", "flushed"}).timing, TimingMethod::Flushed);
}

TEST(Options, CountsArePlainOr2ToTheK) {
    EXPECT_EQ(parse({"--n", "0"}).n, 0u);
    EXPECT_EQ(parse({"--n", "1025"}).n, 1025u);
    EXPECT_EQ(parse({"--n", "2^0"}).n, 1u);
    EXPECT_EQ(parse({"--n", "2^30"}).n, std::size_t{1} << 30);
    EXPECT_EQ(parse({"--n", "2147483647"}).n, 2147483647u);
    // 64-bit counts: past 2^31 and 2^32, up to the parser's bound; the GPU's memory decides the rest.
    EXPECT_EQ(parse({"--n", "2147483651"}).n, std::size_t{2147483651});
    EXPECT_EQ(parse({"--n", "4294967301"}).n, (std::size_t{1} << 32) + 5);
    EXPECT_EQ(parse({"--n", "2^33"}).n, std::size_t{1} << 33);
    EXPECT_EQ(parse({"--n", "2^40"}).n, kMaxElements);
    EXPECT_EQ(parse({"--n", "1099511627776"}).n, kMaxElements);
    EXPECT_EQ(parse_count("2^62"), std::size_t{1} << 62);
    for (const char* bad : {"", "-1", "+5", "1e6", "12abc", "3^4", "2^", "^5", "2^-1", "2^63", "0x10", " 5",
                            "99999999999999999999999"}) {
        EXPECT_FALSE(parse_count(bad).has_value()) << bad;
    }
}

TEST(Options, BadInputIsAUsageErrorNamingTheProblem) {
    struct Case {
        std::vector<std::string> args;
        std::string expected_in_message;
    };
    const std::vector<Case> cases = {
        {{"--bogus"}, "unknown option '--bogus'"},
        {{"-n", "5"}, "unknown option '-n'"},
        {{"--n"}, "--n needs a value"},
        {{"--n", "-5"}, "--n takes a count"},
        {{"--n", "abc"}, "--n takes a count"},
        {{"--n", "2^41"}, "--n takes a count from 0 to 2^40"},
        {{"--n", "1099511627777"}, "--n takes a count from 0 to 2^40"},
        {{"--n", "18446744073709551616"}, "--n takes a count"},
        {{"--type", "half"}, "--type takes int, float or double, not 'half'"},
        {{"--type"}, "--type needs a value"},
        {{"--block", "100"}, "--block 100 is not supported by reduce3"},
        {{"--block", "16"}, "power of two from 32 to 1024"},
        {{"--block", "2048"}, "--block 2048 is not supported"},
        {{"--block", "0"}, "--block 0 is not supported"},
        {{"--block", "-256"}, "--block -256 is not supported"},
        {{"--block", "256x"}, "--block 256x is not supported"},
        {{"--iters", "0"}, "--iters takes a whole number from 1"},
        {{"--iters", "ten"}, "--iters takes a whole number"},
        {{"--warmup", "-1"}, "--warmup takes a whole number from 0"},
        {{"--seed", "-3"}, "--seed takes a non-negative whole number"},
        {{"--device", "-1"}, "--device takes a whole number"},
        {{"--peak-gbps", "0"}, "--peak-gbps takes a positive number"},
        {{"--peak-gbps", "fast"}, "--peak-gbps takes a positive number"},
        {{"--peak-gbps", "inf"}, "--peak-gbps takes a positive number"},
        {{"--csv", "--json"}, "choose one of --csv and --json"},
        {{"--timing", "fast"}, "--timing takes flushed or back-to-back, not 'fast'"},
        {{"--batch", "0"}, "--batch takes a whole number from 1"},
        {{"--shape", "round"}, "unknown option '--shape'"},  // a variant of a stage this program does not time
        {{"--sweep", "2^10:2^20"}, "--sweep applies to reduce_all"},
        {{"--explain"}, "--explain applies to reduce0 ... reduce3"},
    };
    for (const Case& c : cases) {
        const std::string message = usage_error(c.args);
        EXPECT_NE(message.find(c.expected_in_message), std::string::npos)
            << "args: " << testing::PrintToString(c.args) << "\nmessage: '" << message << "'";
        EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
    }
}

// reduce7 and reduce_all with ops/: a type of --op's program, given without --op, is an error
// that names --op; a type nobody takes keeps the plain message.
TEST(Options, ATypeOfTheOperatorProgramNamesOp) {
    ProgramSpec spec = stage_spec();
    spec.op_types = {"int", "int64", "float", "double", "half", "bfloat16"};
    const std::string message = usage_error({"--type", "half"}, spec);
    EXPECT_NE(message.find("--type half needs --op: --op sum --type half"), std::string::npos) << message;
    EXPECT_NE(message.find("docs/10-your-own-reduction.md"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_NE(usage_error({"--type", "bfloat16"}, spec).find("--type bfloat16 needs --op"), std::string::npos);
    EXPECT_NE(usage_error({"--type", "quad"}, spec).find("--type takes int, float or double, not 'quad'"),
              std::string::npos);
    EXPECT_EQ(parse({"--type", "double"}, spec).type, ValueType::Float64);
}

TEST(Options, BlockRangeComesFromTheProgram) {
    EXPECT_EQ(parse({"--block", "32"}).block, 32);
    EXPECT_NE(usage_error({"--block", "32"}, stage_spec(64)).find("power of two from 64 to 1024"), std::string::npos);
    EXPECT_EQ(parse({"--block", "64"}, stage_spec(64)).block, 64);
}

TEST(Options, StageVariantsParseFromTheirDeclarations) {
    const ProgramSpec spec = runner_spec();
    const Options o = parse({"--width", "2", "--shape", "square", "--mode", "racy"}, spec);
    EXPECT_EQ(o.variant_choices, (VariantChoices{{"width", "2"}, {"shape", "square"}, {"mode", "racy"}}));
    EXPECT_EQ(parse({"--width", "2", "--type", "double"}, spec).variant_choices.at("width"), "2");
    EXPECT_NE(usage_error({"--width", "3"}, spec).find("--width takes 1, 2 or 4, not '3'"), std::string::npos);
    EXPECT_NE(usage_error({"--width"}, spec).find("--width needs a value"), std::string::npos);
    EXPECT_NE(usage_error({"--width", "4", "--type", "double"}, spec).find("more than 16 bytes"), std::string::npos);
    EXPECT_NE(usage_error({"--type", "double", "--width", "4"}, spec).find("more than 16 bytes"), std::string::npos);
    EXPECT_NE(usage_error({"--shape", "oval"}, spec).find("--shape takes round or square"), std::string::npos);
    // --variants times the timed variants itself; an untimed one may be given with it.
    EXPECT_NE(usage_error({"--variants", "--shape", "round"}, spec).find("give no --shape or --width with it"),
              std::string::npos);
    EXPECT_TRUE(parse({"--variants", "--mode", "racy"}, spec).variants);
    EXPECT_NE(usage_error({"--n", "2^20", "--sweep", "2^10:2^12"}, spec).find("choose one of --n and --sweep"),
              std::string::npos);
}

TEST(Variants, DefaultsLabelsAndRuns) {
    const Variant& shape = kTestVariants[0];
    const Variant& width = kTestVariants[1];
    EXPECT_EQ(default_choice(shape, ValueType::Int32), "round");
    EXPECT_EQ(default_choice(width, ValueType::Float32), "4");
    EXPECT_EQ(default_choice(width, ValueType::Float64), "2");
    EXPECT_EQ(chosen(width, {}, ValueType::Float64), "2");
    EXPECT_EQ(chosen_index(width, {{"width", "1"}}, ValueType::Float64), 0u);
    EXPECT_THROW(chosen(shape, {{"shape", "oval"}}, ValueType::Int32), std::invalid_argument);
    // Labels: an always-labelled variant at its default too, another only when not at its default.
    EXPECT_EQ(variant_label(kTestVariants, {}, ValueType::Float32), "width=4");
    EXPECT_EQ(variant_label(kTestVariants, {{"shape", "square"}}, ValueType::Float64), "shape=square width=2");
    EXPECT_EQ(variant_label(kUntimedVariants, {}, ValueType::Int32), "");
    EXPECT_EQ(variant_label(kUntimedVariants, {{"mode", "racy"}}, ValueType::Int32), "mode=racy");
    // --variants: every combination the type supports, the first variant outermost, on top of the given choices.
    std::vector<std::string> labels;
    for (const VariantChoices& run : variant_runs(kTestVariants, {{"mode", "racy"}}, ValueType::Float64)) {
        EXPECT_EQ(run.at("mode"), "racy");
        labels.push_back(variant_label(kTestVariants, run, ValueType::Float64));
    }
    EXPECT_EQ(labels, (std::vector<std::string>{"width=1", "width=2", "shape=square width=1", "shape=square width=2"}));
    EXPECT_EQ(variant_runs(kUntimedVariants, {}, ValueType::Int32).size(), 1u);  // untimed: the given choice only
}

// --variants leaves out a choice that the GPU's compute capability cannot run (reduce7's
// --finish pdl below 9.0), and keeps it where the capability is enough or unknown (0).
TEST(Variants, ChoicesTheGpuCannotRunAreLeftOut) {
    static constexpr std::string_view kLaunchChoices[] = {"plain", "programmatic"};
    static constexpr Variant kLaunch[] = {
        {.name = "launch",
         .value_name = "L",
         .choices = kLaunchChoices,
         .help = "plain | programmatic",
         .needs_compute_capability = [](std::string_view launch) { return launch == "programmatic" ? 90 : 0; }},
    };
    const auto count = [&](int capability) { return variant_runs(kLaunch, {}, ValueType::Int32, capability).size(); };
    EXPECT_EQ(count(75), 1u);
    EXPECT_EQ(count(89), 1u);
    EXPECT_EQ(count(90), 2u);
    EXPECT_EQ(count(100), 2u);
    EXPECT_EQ(count(0), 2u);
}

TEST(Options, Sweep) {
    const SizeSweep sweep = parse_sweep("2^10:2^28");
    EXPECT_EQ(sweep.from_log2, 10);
    EXPECT_EQ(sweep.to_log2, 28);
    const SizeSweep plain = parse_sweep("1024:4096");
    EXPECT_EQ(plain.from_log2, 10);
    EXPECT_EQ(plain.to_log2, 12);
    EXPECT_EQ(parse_sweep("2^5:2^5").to_log2, 5);
    const auto sweep_error = [](const char* text) {
        try {
            parse_sweep(text);
        } catch (const UsageError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_NE(sweep_error("2^10").find("FROM:TO"), std::string::npos);
    EXPECT_NE(sweep_error("2^20:2^10").find("FROM <= TO"), std::string::npos);
    EXPECT_NE(sweep_error("1000:2^10").find("powers of two"), std::string::npos);
    EXPECT_NE(sweep_error("2^10:x").find("powers of two"), std::string::npos);
    EXPECT_NE(sweep_error("2^10:2^41").find("goes up to 2^40"), std::string::npos);
    EXPECT_EQ(parse_sweep("2^30:2^34").to_log2, 34);
    EXPECT_NE(sweep_error("0:2^4").find("powers of two"), std::string::npos);
}

TEST(Options, UsageTextListsWhatTheProgramTakes) {
    const std::string stage = usage_text(stage_spec());
    EXPECT_NE(stage.find("--n N"), std::string::npos);
    EXPECT_NE(stage.find("exit status"), std::string::npos);
    EXPECT_EQ(stage.find("--sweep"), std::string::npos);
    const std::string runner = usage_text(runner_spec());
    EXPECT_NE(runner.find("--sweep"), std::string::npos);
    EXPECT_NE(runner.find("  --width W         reduce8: 1 | 2 | 4 elements\n                    (default: 16 bytes)\n"),
              std::string::npos)
        << runner;
    EXPECT_NE(runner.find("time every labelled variant: reduce8's --shape x --width\n"), std::string::npos) << runner;
    EXPECT_NE(runner.find("from 64 to 1024"), std::string::npos);
}

TEST(Options, Names) {
    EXPECT_EQ(type_name(ValueType::Int32), "int");
    EXPECT_EQ(type_size(ValueType::Float64), 8u);
}

}  // namespace
