// Timing statistics and the theoretical peak bandwidth.
#include <gtest/gtest.h>

#include "peak_bandwidth.h"
#include "stats.h"

namespace {

TEST(Stats, MedianMinMax) {
    const TimingStats odd = summarize({5, 1, 3});
    EXPECT_DOUBLE_EQ(odd.median, 3);
    EXPECT_DOUBLE_EQ(odd.min, 1);
    EXPECT_DOUBLE_EQ(odd.max, 5);
    EXPECT_EQ(odd.runs, 3);
    const TimingStats even = summarize({4, 1, 2, 100});
    EXPECT_DOUBLE_EQ(even.median, 3);  // the mean of the middle two: one outlier moves nothing
    EXPECT_DOUBLE_EQ(even.max, 100);
    EXPECT_DOUBLE_EQ(summarize({2.5}).median, 2.5);
    const TimingStats none = summarize({});
    EXPECT_EQ(none.runs, 0);
    EXPECT_DOUBLE_EQ(none.median, 0);
}

TEST(Peak, FromMemoryClockAndBusWidth) {
    // H100 SXM: HBM3 at 2619 MHz on a 5120-bit bus: 2.619e9 x 2 x 640 bytes = 3352 GB/s.
    EXPECT_NEAR(*peak_from_memory_clock(2619000, 5120), 3352.3, 0.1);
    // A100 80GB SXM: 1593 MHz, 5120 bits.
    EXPECT_NEAR(*peak_from_memory_clock(1593000, 5120), 2039.0, 0.1);
    EXPECT_FALSE(peak_from_memory_clock(0, 5120).has_value());
    EXPECT_FALSE(peak_from_memory_clock(2619000, 0).has_value());
}

TEST(Peak, KnownGpusMatchTheMostSpecificName) {
    EXPECT_DOUBLE_EQ(*peak_from_known_gpus("NVIDIA H100 80GB HBM3"), 3352);
    EXPECT_DOUBLE_EQ(*peak_from_known_gpus("NVIDIA H100 PCIe"), 2039);
    EXPECT_DOUBLE_EQ(*peak_from_known_gpus("NVIDIA H200"), 4800);
    EXPECT_DOUBLE_EQ(*peak_from_known_gpus("NVIDIA A100-SXM4-40GB"), 1555);
    EXPECT_DOUBLE_EQ(*peak_from_known_gpus("NVIDIA L40S"), 864);
    EXPECT_DOUBLE_EQ(*peak_from_known_gpus("NVIDIA L4"), 300);
    EXPECT_DOUBLE_EQ(*peak_from_known_gpus("NVIDIA GeForce RTX 4090"), 1008);
    EXPECT_FALSE(peak_from_known_gpus("Some Future GPU").has_value());
}

TEST(Peak, OverrideThenAttributesThenTable) {
    const PeakBandwidth given = choose_peak(1000.0, 2619000, 5120, "NVIDIA H100 80GB HBM3");
    EXPECT_DOUBLE_EQ(*given.gbps, 1000.0);
    EXPECT_NE(given.source.find("--peak-gbps"), std::string::npos);
    const PeakBandwidth measured = choose_peak(std::nullopt, 2619000, 5120, "NVIDIA H100 80GB HBM3");
    EXPECT_NEAR(*measured.gbps, 3352.3, 0.1);
    EXPECT_NE(measured.source.find("2619 MHz"), std::string::npos);
    EXPECT_NE(measured.source.find("5120-bit"), std::string::npos);
    const PeakBandwidth table = choose_peak(std::nullopt, 0, 0, "NVIDIA H100 80GB HBM3");
    EXPECT_DOUBLE_EQ(*table.gbps, 3352);
    EXPECT_NE(table.source.find("datasheet"), std::string::npos);
    const PeakBandwidth unknown = choose_peak(std::nullopt, 0, 0, "Mystery");
    EXPECT_FALSE(unknown.gbps.has_value());
    EXPECT_NE(unknown.source.find("--peak-gbps"), std::string::npos);
}

}  // namespace
