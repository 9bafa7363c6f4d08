// How one n-element sum is split across G GPUs. Pure host arithmetic, tested without a GPU.
//
// GPU g sums the contiguous shard [n*g/G, n*(g+1)/G). Contiguous, so that each GPU reads
// one dense range at full bandwidth and generates it with the same formula the whole
// input uses (element i is the same value whichever GPU holds it); balanced, so that the
// shards differ by at most one element and no GPU waits long for another in the collective.
// n < G leaves some shards empty and n = 0 leaves all of them empty: an empty shard sums
// to 0, which changes nothing.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

// Elements [begin, begin + count) of the n-element input.
struct Shard {
    std::size_t begin = 0;
    std::size_t count = 0;
};

// floor(n * g / G), computed without forming n * g: with n = q G + r, n g / G = q g + r g / G,
// and r g < G^2 never overflows (n * g would, for n near 2^64).
inline std::size_t shard_boundary(std::size_t n, int g, int gpus) {
    const auto G = static_cast<std::size_t>(gpus), k = static_cast<std::size_t>(g);
    return n / G * k + n % G * k / G;
}

// Shard g of G.
inline Shard shard_of(std::size_t n, int g, int gpus) {
    if (gpus < 1 || g < 0 || g >= gpus) {
        throw std::invalid_argument("shard " + std::to_string(g) + " of " + std::to_string(gpus) + " does not exist");
    }
    const std::size_t begin = shard_boundary(n, g, gpus);
    return {begin, shard_boundary(n, g + 1, gpus) - begin};
}

// All G shards, in rank order.
inline std::vector<Shard> shards_of(std::size_t n, int gpus) {
    std::vector<Shard> shards;
    for (int g = 0; g < gpus; ++g) shards.push_back(shard_of(n, g, gpus));
    return shards;
}
