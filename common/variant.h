// A stage's labelled variants: the options that change how one stage's kernel works, each
// declared by that stage in its own kernel.cu; common/ and runner/ name none of them
// (tests/host/test_harness_knows_no_stage.cu checks it).
//
// The harness knows no variant by name. From a stage's table it builds the option (--NAME
// CHOICE), its --help line, the label of every result ("NAME=CHOICE"), and the runs of
// --variants; the stage's launcher reads the choice back from its RunConfig. Adding a
// variant to a stage therefore changes that stage's folder and nothing in common/.
#pragma once

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "value_type.h"

struct Variant {
    // NAME: the option --NAME, and "NAME=CHOICE" in a result's label.
    std::string_view name;
    // "V": how --help shows the option's value ("--NAME V").
    std::string_view value_name;
    // Every value the option takes, as typed on the command line; --variants times them in
    // this order. A launcher that maps them to an enum lists the enum in the same order.
    std::span<const std::string_view> choices;
    // --help's text after "reduceN: "; each "\n" starts an indented continuation line.
    std::string_view help;
    // The choice a run takes when the command line names none: default_for(type) where
    // the best choice depends on the element type, else default_choice, else the first.
    std::string_view default_choice = {};
    std::string_view (*default_for)(ValueType type) = nullptr;
    // Why `choice` cannot run on `type` (one line), or "" if it can; nullptr: every choice can.
    std::string (*unsupported)(std::string_view choice, ValueType type) = nullptr;
    // The compute capability (major * 10 + minor) a choice needs, or 0 for any; nullptr: every
    // choice runs everywhere. --variants leaves out a choice the GPU cannot run (named on the
    // command line, it still runs and fails with the reason).
    int (*needs_compute_capability)(std::string_view choice) = nullptr;
    // --variants times every choice of this variant; false: it holds the choice given (or
    // the default), e.g. for choices that are known to give wrong sums.
    bool timed_by_variants = true;
    // Label every result with this variant's choice, the default too (else only others).
    bool always_labelled = false;
};

// The choices of one run, by variant name (NAME -> CHOICE). A variant that is not
// named runs its default, so a default-constructed RunConfig runs every stage as it ships.
using VariantChoices = std::map<std::string, std::string, std::less<>>;

// The variants of one stage, for the option parser: which stage declares them.
struct StageVariants {
    std::string stage;  // "reduce7"
    std::span<const Variant> variants;
};

// The choice a run takes: the one named in `choices`, or the variant's default for `type`.
// Throws std::invalid_argument for a name that is not one of the variant's choices.
std::string_view chosen(const Variant& variant, const VariantChoices& choices, ValueType type);
// Its position in variant.choices.
std::size_t chosen_index(const Variant& variant, const VariantChoices& choices, ValueType type);
// The default choice for `type`.
std::string_view default_choice(const Variant& variant, ValueType type);

// "NAME=CHOICE NAME2=CHOICE2": the label of a run of a stage with these variants; "" for
// a run at the defaults of variants that are not always_labelled.
std::string variant_label(std::span<const Variant> variants, const VariantChoices& choices, ValueType type);

// What --variants times for one stage: every combination of the choices of its
// timed_by_variants variants that `type` and a GPU of `compute_capability` (major * 10 +
// minor; 0: unknown, every choice) support (the first variant outermost), each on top of
// `given` (the choices of the command line). A stage with none: just `given`.
std::vector<VariantChoices> variant_runs(std::span<const Variant> variants, const VariantChoices& given,
                                         ValueType type, int compute_capability = 0);
