// reduce7's --grid auto (reduce7/variants.cuh) decides with has_large_tile and
// large_tile_pays. Reduce7AutoGrid (tests/gpu) runs sizes on both sides of that decision,
// but it can only see exact sums, which either kernel gives; so the two predicates of the
// decision are checked here, at their edges: which shapes may take the large tile, which
// finishes, and the count of tiles at which it starts (eight waves; 528 resident blocks, as
// on 132 SMs at 4 a SM). The launcher counts tiles as ceil_div(n, tile_elements<...>()),
// which the last test below repeats with the same tile_elements.
#include <gtest/gtest.h>

#include <cstddef>

#include "../../reduce7/variants.cuh"

namespace {

TEST(Reduce7AutoGridChoice, OnlyIntAndFloatAtBlock512WithSixteenByteLoads) {
    EXPECT_TRUE((has_large_tile<int, 512, 4>()));
    EXPECT_TRUE((has_large_tile<float, 512, 4>()));
    EXPECT_FALSE((has_large_tile<double, 512, 2>()));  // not timed on it
    EXPECT_FALSE((has_large_tile<float, 256, 4>()));
    EXPECT_FALSE((has_large_tile<int, 256, 4>()));
    EXPECT_FALSE((has_large_tile<int, 1024, 4>()));
    EXPECT_FALSE((has_large_tile<int, 512, 2>()));
    EXPECT_FALSE((has_large_tile<int, 512, 4, 8>()));  // a --loads kernel is never swapped
}

TEST(Reduce7AutoGridChoice, FromEightWavesWithAnOrderFreeFinishOnly) {
    int asked = 0;
    const auto resident = [&] { return ++asked, 528u; };
    for (Finish finish : {Finish::Packed, Finish::Atomic}) {
        EXPECT_FALSE(large_tile_pays(finish, 8 * 528 - 1, resident));
        EXPECT_TRUE(large_tile_pays(finish, 8 * 528, resident));
    }
    asked = 0;
    for (Finish finish : {Finish::LastBlock, Finish::TwoPass, Finish::Pdl}) {
        EXPECT_FALSE(large_tile_pays(finish, std::size_t{1} << 20, resident));
    }
    EXPECT_FALSE(large_tile_pays(Finish::Packed, 7, resident));
    EXPECT_EQ(asked, 0) << "the occupancy query runs only when the finish and the size allow the large tile";
    // The launcher counts the large tiles with ceil_div(n, tile_elements<512, 4, 8>()), 512 x 8
    // x 4 ints: the last may be partial, so eight waves of 528 start one element past 4,223
    // whole tiles.
    constexpr std::size_t kTileInts = tile_elements<512, 4, kLargeTileLoads>();
    static_assert(kTileInts == 512 * 8 * 4);
    static_assert(tile_elements<512, 4>() == 512 * 4 * 4, "the default tile: 4 loads a thread");
    EXPECT_TRUE(large_tile_pays(Finish::Packed, ceil_div(std::size_t{4223} * kTileInts + 1, kTileInts), resident));
    EXPECT_FALSE(large_tile_pays(Finish::Packed, ceil_div(std::size_t{4223} * kTileInts, kTileInts), resident));
}

}  // namespace
