#include "stats.h"

#include <algorithm>

TimingStats summarize(std::vector<double> samples) {
    TimingStats stats;
    stats.runs = static_cast<int>(samples.size());
    if (samples.empty()) return stats;
    std::sort(samples.begin(), samples.end());
    const std::size_t mid = samples.size() / 2;
    stats.median = samples.size() % 2 ? samples[mid] : (samples[mid - 1] + samples[mid]) / 2;
    stats.min = samples.front();
    stats.max = samples.back();
    return stats;
}
