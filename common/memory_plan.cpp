#include "memory_plan.h"

#include <limits>

#include "report.h"

std::size_t MemoryPlan::total() const {
    std::size_t sum = 0;
    for (const auto& item : items) {
        if (item.second > std::numeric_limits<std::size_t>::max() - sum) return std::numeric_limits<std::size_t>::max();
        sum += item.second;
    }
    return sum;
}

std::optional<std::string> memory_shortfall(const MemoryPlan& plan, const std::string& what, std::size_t free_bytes,
                                            std::size_t total_bytes) {
    const std::size_t needed = plan.total();
    if (needed <= free_bytes && free_bytes - needed >= kAllocationHeadroom) return std::nullopt;
    std::string parts;
    for (const auto& [name, bytes] : plan.items) {
        parts += (parts.empty() ? "" : ", ") + name + " " + bytes_text(static_cast<double>(bytes));
    }
    return what + " need " + bytes_text(static_cast<double>(needed)) + " on the GPU (" + parts + ", plus " +
           bytes_text(static_cast<double>(kAllocationHeadroom)) + " headroom); it has " +
           bytes_text(static_cast<double>(free_bytes)) + " free of " + bytes_text(static_cast<double>(total_bytes));
}
