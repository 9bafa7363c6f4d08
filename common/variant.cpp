#include "variant.h"

#include <algorithm>
#include <stdexcept>

std::string_view default_choice(const Variant& variant, ValueType type) {
    if (variant.default_for) return variant.default_for(type);
    if (!variant.default_choice.empty()) return variant.default_choice;
    return variant.choices.front();
}

std::size_t chosen_index(const Variant& variant, const VariantChoices& choices, ValueType type) {
    const auto named = choices.find(variant.name);
    const std::string_view choice = named != choices.end() ? std::string_view(named->second)
                                                           : default_choice(variant, type);
    const auto found = std::find(variant.choices.begin(), variant.choices.end(), choice);
    if (found == variant.choices.end()) {
        throw std::invalid_argument("--" + std::string(variant.name) + " has no choice '" + std::string(choice) + "'");
    }
    return static_cast<std::size_t>(found - variant.choices.begin());
}

std::string_view chosen(const Variant& variant, const VariantChoices& choices, ValueType type) {
    return variant.choices[chosen_index(variant, choices, type)];
}

std::string variant_label(std::span<const Variant> variants, const VariantChoices& choices, ValueType type) {
    std::string label;
    for (const Variant& variant : variants) {
        const std::string_view choice = chosen(variant, choices, type);
        if (!variant.always_labelled && choice == default_choice(variant, type)) continue;
        label.append(label.empty() ? "" : " ").append(variant.name).append("=").append(choice);
    }
    return label;
}

std::vector<VariantChoices> variant_runs(std::span<const Variant> variants, const VariantChoices& given,
                                         ValueType type, int compute_capability) {
    std::vector<VariantChoices> runs = {given};
    for (const Variant& variant : variants) {
        if (!variant.timed_by_variants) continue;
        std::vector<VariantChoices> longer;
        for (const VariantChoices& run : runs) {
            for (std::string_view choice : variant.choices) {
                if (variant.unsupported && !variant.unsupported(choice, type).empty()) continue;
                if (variant.needs_compute_capability && compute_capability > 0 &&
                    variant.needs_compute_capability(choice) > compute_capability) {
                    continue;
                }
                longer.push_back(run);
                longer.back()[std::string(variant.name)] = std::string(choice);
            }
        }
        runs = std::move(longer);
    }
    return runs;
}
