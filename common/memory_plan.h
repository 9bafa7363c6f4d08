// What a run needs in device memory, checked before anything is allocated: a request too
// large for the GPU ends with one line that names the bytes needed and the bytes free
// (exit status 3), never with a failed allocation halfway through the run.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

struct MemoryPlan {
    std::vector<std::pair<std::string, std::size_t>> items;  // {"input", bytes}, ...
    void add(std::string what, std::size_t bytes) { items.emplace_back(std::move(what), bytes); }
    std::size_t total() const;  // saturates at SIZE_MAX instead of wrapping
};

// Allocations round up to the driver's pages and CUB asks for a little temporary
// storage; a plan must leave this much free beyond its items.
constexpr std::size_t kAllocationHeadroom = std::size_t{256} << 20;

// Empty when the plan (plus the headroom) fits in `free_bytes`; otherwise the one-line
// reason, starting with `what` ("n = 2^36 float values"): "... need 275.1 GB on the GPU
// (input 274.9 GB, workspace 4.3 MB, L2 flush buffer 104.9 MB); it has 84.5 GB free of 85.0 GB".
std::optional<std::string> memory_shortfall(const MemoryPlan& plan, const std::string& what, std::size_t free_bytes,
                                            std::size_t total_bytes);
