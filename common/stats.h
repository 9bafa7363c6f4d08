// Summary statistics of repeated timings.
#pragma once

#include <vector>

struct TimingStats {
    double median = 0;
    double min = 0;
    double max = 0;
    int runs = 0;
};

// Median (the mean of the middle two for an even count), min and max. Empty input: all zero.
TimingStats summarize(std::vector<double> samples);
