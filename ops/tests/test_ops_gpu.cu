// The operators on the GPU: every operator x type x size x block against the host's
// reference (exact where the data allow, within the derived bound where not), misaligned
// pointers, NaN / infinities / ties / zeros planted first, in the middle and last, the
// unfused sum of squares, CUB on the same inputs, that wrong results are caught, the input
// generator, and reduce7_cg / reduce7_cub at every stage test size and block.
//
// Every test name starts with its operator ("argmax_half_..."), so that CTest runs one group
// per operator (ops/CMakeLists.txt: --gtest_filter=*/argmax_*). Without a GPU every test
// skips with the reason.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "argmax.cuh"  // ValueIndex, ArgMax
#include "gpu_test.h"
#include "library_stages.h"
#include "operators.cuh"  // op_type_of
#include "ops_bench.h"
#include "reduce_op.cuh"  // warp_reduce

namespace {

using namespace ops;

int device_sms() {
    static const int sms = [] {
        int device = 0, count = 0;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
        return count;
    }();
    return sms;
}

std::string case_prefix(OpKind op, OpType type) {
    return std::string(op_name(op)) + "_" + std::string(op_type_name(type));
}

// An input and its expected result; the last one is kept, since consecutive tests (the
// same operator, type and size at other block sizes) share it.
struct Prepared {
    OpKind op;
    OpType type;
    std::size_t n, offset;
    std::uint64_t magnitude;
    DeviceOpInput input;
    OpExpected expected;
};

const Prepared& prepared(OpKind op, OpType type, std::size_t n, std::size_t offset = 0) {
    static std::unique_ptr<Prepared> last;
    const OpData data = op_data(op, type, n, /*seed=*/n * 7 + offset + 1);
    if (!last || last->op != op || last->type != type || last->n != n || last->offset != offset) {
        last.reset();  // free the previous input first: the largest are 128 MB
        last = std::make_unique<Prepared>(Prepared{op, type, n, offset, data.magnitude,
                                                   make_op_input(type, n, data, offset),
                                                   host_reference(op, type, n, data, device_sms())});
    }
    return *last;
}

void expect_ok(OpKind op, const std::optional<OpValue>& got, const OpExpected& expected, const std::string& what) {
    ASSERT_TRUE(got.has_value()) << what << ": the result was never written";
    const SumCheck check = check_op(op, *got, expected);
    EXPECT_TRUE(check.ok) << what << ": " << check.detail;
}

// argmax's "every lane" variant (ArgMaxEveryLane) behind the same OpImpl, for run_ours.
std::optional<OpImpl> every_lane_impl(const OpImpl& impl) {
    if (!impl.reduce_every_lane) return std::nullopt;
    OpImpl variant = impl;
    variant.reduce = impl.reduce_every_lane;
    return variant;
}

// argmax's every-lane variant on the same input, where the operator has one.
void expect_every_lane_ok(const OpImpl& impl, const void* values, std::size_t n, int block,
                          const OpExpected& expected, const std::string& what) {
    if (const auto variant = every_lane_impl(impl)) {
        expect_ok(impl.op, run_ours(*variant, values, n, block).front(), expected, "every lane" + what);
    }
}

// Ours once, and the every-lane variant where there is one.
void expect_ours_ok(const OpImpl& impl, const void* values, std::size_t n, int block, const OpExpected& expected,
                    const std::string& what = "") {
    expect_ok(impl.op, run_ours(impl, values, n, block).front(), expected, "ours" + what);
    expect_every_lane_ok(impl, values, n, block, expected, what);
}

// ---------------------------------------------------------------- every op x type x size x block
struct ExactCase {
    OpKind op;
    OpType type;
    std::size_t n;
    int block;  // 0: CUB's DeviceReduce instead of ours
};

const std::vector<std::size_t>& op_test_sizes() {
    static const std::vector<std::size_t> sizes = {0,    1,     31, 33, 1025, 65537, (std::size_t{1} << 20) + 1,
                                                   (std::size_t{1} << 24) + 3};
    return sizes;
}

std::vector<ExactCase> exact_cases() {
    std::vector<ExactCase> cases;
    for (OpKind op : kAllOps) {
        for (OpType type : kAllTypes) {
            for (std::size_t n : op_test_sizes()) {
                for (int block : {128, 256, 1024}) cases.push_back({op, type, n, block});
                // CUB on the same data, as a second opinion. Not for no elements: there CUB's
                // Max returns its initial value lowest() (-FLT_MAX, not -inf) and ArgMax writes nothing.
                if (n > 0) cases.push_back({op, type, n, 0});
            }
        }
    }
    return cases;
}

class OpExact : public testing::TestWithParam<ExactCase> {};

TEST_P(OpExact, MatchesTheHostReference) {
    SKIP_WITHOUT_GPU();
    const ExactCase& c = GetParam();
    const Prepared& p = prepared(c.op, c.type, c.n);
    const OpImpl& impl = op_impl(c.op, c.type);
    if (c.block == 0) {
        expect_ok(c.op, run_cub(impl, p.input.values, c.n), p.expected, "CUB");
        return;
    }
    // Twice on one workspace: the first launch must leave its counter ready for the second.
    const auto results = run_ours(impl, p.input.values, c.n, c.block, 2);
    for (std::size_t run = 0; run < results.size(); ++run) {
        expect_ok(c.op, results[run], p.expected, "run " + std::to_string(run + 1));
    }
    if (results[0] && results[1]) {  // a fixed order of operations: the same bits every run
        EXPECT_EQ(check_op(c.op, *results[0], p.expected).bits, check_op(c.op, *results[1], p.expected).bits);
    }
    expect_every_lane_ok(impl, p.input.values, c.n, c.block, p.expected, "");
}

INSTANTIATE_TEST_SUITE_P(Ops, OpExact, testing::ValuesIn(exact_cases()), [](const auto& info) {
    const ExactCase& c = info.param;
    return case_prefix(c.op, c.type) + "_n" + std::to_string(c.n) +
           (c.block ? "_block" + std::to_string(c.block) : std::string("_cub"));
});

// ---------------------------------------------------------------- misaligned pointers
// 1, 2 and 3 elements past a 256-byte boundary: a head of scalar loads before the first
// 16-byte aligned vector (for 8-byte types, offset 2 is aligned again).
struct MisalignedCase {
    OpKind op;
    OpType type;
    std::size_t n, offset;
};

std::vector<MisalignedCase> misaligned_cases() {
    std::vector<MisalignedCase> cases;
    for (OpKind op : kAllOps) {
        for (OpType type : kAllTypes) {
            for (std::size_t offset : {1, 2, 3}) {
                for (std::size_t n : {std::size_t{1}, std::size_t{31}, std::size_t{33}, std::size_t{1025},
                                      std::size_t{65537}, (std::size_t{1} << 20) + 1}) {
                    cases.push_back({op, type, n, offset});
                }
            }
        }
    }
    return cases;
}

class OpMisaligned : public testing::TestWithParam<MisalignedCase> {};

TEST_P(OpMisaligned, MatchesTheHostReference) {
    SKIP_WITHOUT_GPU();
    const MisalignedCase& c = GetParam();
    const Prepared& p = prepared(c.op, c.type, c.n, c.offset);
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(p.input.values) % 256, c.offset * op_type_size(c.type));
    expect_ours_ok(op_impl(c.op, c.type), p.input.values, c.n, 256, p.expected);
}

INSTANTIATE_TEST_SUITE_P(Ops, OpMisaligned, testing::ValuesIn(misaligned_cases()), [](const auto& info) {
    const MisalignedCase& c = info.param;
    return case_prefix(c.op, c.type) + "_offset" + std::to_string(c.offset) + "_n" + std::to_string(c.n);
});

// ---------------------------------------------------------------- planted values
enum class Plant { NaN, Inf, NegInf, Tie, Smallest, AllNegative, Zeros };
enum class Where { First, Middle, Last };

struct SpecialCase {
    OpKind op;
    OpType type;
    Plant plant;
    Where where;
    std::size_t n;
};

const char* plant_name(Plant p) {
    switch (p) {
        case Plant::NaN: return "nan";
        case Plant::Inf: return "inf";
        case Plant::NegInf: return "neginf";
        case Plant::Tie: return "tie";
        case Plant::Smallest: return "smallest";
        case Plant::AllNegative: return "allnegative";
        case Plant::Zeros: return "zeros";
    }
    return "?";
}

const char* where_name(Where w) { return w == Where::First ? "first" : w == Where::Middle ? "middle" : "last"; }

std::vector<SpecialCase> special_cases() {
    std::vector<SpecialCase> cases;
    for (OpKind op : kAllOps) {
        for (OpType type : kAllTypes) {
            for (Plant plant : {Plant::NaN, Plant::Inf, Plant::NegInf, Plant::Tie, Plant::Smallest, Plant::AllNegative,
                                Plant::Zeros}) {
                const bool nonfinite = plant == Plant::NaN || plant == Plant::Inf || plant == Plant::NegInf;
                if (nonfinite && (!is_floating(type) || op == OpKind::MeanVar)) continue;
                if (plant == Plant::Zeros && !is_floating(type)) continue;  // -0 is floating point's
                for (Where where : {Where::First, Where::Middle, Where::Last}) {
                    for (std::size_t n : {std::size_t{33}, std::size_t{65537}, (std::size_t{1} << 20) + 1}) {
                        cases.push_back({op, type, plant, where, n});
                    }
                }
            }
        }
    }
    return cases;
}

// The data of a special case: the operator's usual data, with values planted at `where`
// and, for NaN and ties, a second one further on (argmax must name the first).
OpData special_data(const SpecialCase& c) {
    OpData data = op_data(c.op, c.type, c.n, /*seed=*/c.n * 13 + 5);
    const std::size_t at = c.where == Where::First ? 0 : c.where == Where::Middle ? c.n / 2 : c.n - 1;
    const std::size_t later = at + 1 < c.n ? c.n - 1 : at;  // the last element, unless that is `at`
    switch (c.plant) {
        case Plant::NaN:
            plant(data, c.type, at, Special::NaN);
            if (later != at) plant(data, c.type, later, Special::NaN);
            break;
        case Plant::Inf: plant(data, c.type, at, Special::PlusInf); break;
        case Plant::NegInf: plant(data, c.type, at, Special::MinusInf); break;
        case Plant::Tie:
            plant(data, c.type, at, Special::Largest);
            if (later != at) plant(data, c.type, later, Special::Largest);
            break;
        case Plant::Smallest: plant(data, c.type, at, Special::Smallest); break;
        case Plant::AllNegative: data.all_negative = true; break;  // max must not be max's identity, nor 0
        case Plant::Zeros:  // among negative values: max is +0 whichever zero comes first
            data.all_negative = true;
            plant(data, c.type, at, Special::MinusZero);
            if (later != at) plant(data, c.type, later, Special::PlusZero);
            break;
    }
    return data;
}

class OpSpecial : public testing::TestWithParam<SpecialCase> {};

TEST_P(OpSpecial, MatchesTheHostReference) {
    SKIP_WITHOUT_GPU();
    const SpecialCase& c = GetParam();
    const OpData data = special_data(c);
    const DeviceOpInput input = make_op_input(c.type, c.n, data);
    const OpExpected expected = host_reference(c.op, c.type, c.n, data, device_sms());
    expect_ours_ok(op_impl(c.op, c.type), input.values, c.n, 256, expected);
}

INSTANTIATE_TEST_SUITE_P(Ops, OpSpecial, testing::ValuesIn(special_cases()), [](const auto& info) {
    const SpecialCase& c = info.param;
    return case_prefix(c.op, c.type) + "_" + plant_name(c.plant) + "_" + where_name(c.where) + "_n" +
           std::to_string(c.n);
});

// ---------------------------------------------------------------- argmax among dense ties
// Values in {-2, -1, 1, 2}: nearly every vector holds its top more than once, and the
// maximum 2 a quarter of all elements, so the index depends on finding the first equal lane
// in each vector (the pairwise masks for half and bfloat16) and on the tree's tie rule.
// Floating point also with zeros planted: the vectors that take the lane-by-lane path.
struct DenseTieCase {
    OpType type;
    std::size_t n;
    bool zeros;
};

std::vector<DenseTieCase> dense_tie_cases() {
    std::vector<DenseTieCase> cases;
    for (OpType type : kAllTypes) {
        for (std::size_t n : {std::size_t{67}, std::size_t{65537}, (std::size_t{1} << 20) + 1}) {
            cases.push_back({type, n, false});
            if (is_floating(type)) cases.push_back({type, n, true});
        }
    }
    return cases;
}

class ArgMaxDenseTies : public testing::TestWithParam<DenseTieCase> {};

TEST_P(ArgMaxDenseTies, NamesTheFirst) {
    SKIP_WITHOUT_GPU();
    const DenseTieCase& c = GetParam();
    OpData data = op_data(OpKind::ArgMax, c.type, c.n, /*seed=*/c.n + 17);
    data.magnitude = 2;
    if (c.zeros) {  // every value negative, then zeros: -0 first, +0 (the maximum) after it
        data.all_negative = true;
        plant(data, c.type, 5, Special::MinusZero);
        plant(data, c.type, 6, Special::MinusZero);
        plant(data, c.type, c.n / 2, Special::PlusZero);
        plant(data, c.type, c.n - 1, Special::PlusZero);
    }
    const DeviceOpInput input = make_op_input(c.type, c.n, data);
    const OpExpected expected = host_reference(OpKind::ArgMax, c.type, c.n, data, device_sms());
    for (int block : {128, 1024}) {
        expect_ours_ok(op_impl(OpKind::ArgMax, c.type), input.values, c.n, block, expected,
                       ", block " + std::to_string(block));
    }
}

INSTANTIATE_TEST_SUITE_P(Ops, ArgMaxDenseTies, testing::ValuesIn(dense_tie_cases()), [](const auto& info) {
    const DenseTieCase& c = info.param;
    return case_prefix(OpKind::ArgMax, c.type) + "_dense_ties" + (c.zeros ? "_zeros" : "") + "_n" +
           std::to_string(c.n);
});

// ---------------------------------------------------------------- argmax of the lowest value only
// Every element -inf (or INT_MIN): the identity has that value too, and the answer is 0, not
// "none". Sizes with whole vectors (the vector fold), a tail, and a misaligned start.
template <typename In>
void expect_lowest_everywhere_gives_zero(In lowest) {
    const OpImpl& impl = op_impl(OpKind::ArgMax, op_type_of<In>());
    for (std::size_t n : {std::size_t{8}, std::size_t{64}, std::size_t{1025}, std::size_t{65537}}) {
        for (std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
            DeviceBuffer<In> buffer(n + offset);
            const std::vector<In> values(n + offset, lowest);
            CUDA_CHECK(cudaMemcpy(buffer.get(), values.data(), values.size() * sizeof(In), cudaMemcpyHostToDevice));
            for (const OpImpl& variant : {impl, *every_lane_impl(impl)}) {
                const std::optional<OpValue> got = run_ours(variant, buffer.get() + offset, n, 256).front();
                ASSERT_TRUE(got.has_value()) << "n " << n;
                EXPECT_EQ(got->index, 0u) << "n " << n << ", offset " << offset;
            }
        }
    }
}

class ArgMaxAllLowest : public testing::TestWithParam<OpType> {};

TEST_P(ArgMaxAllLowest, GivesIndexZero) {
    SKIP_WITHOUT_GPU();
    const float inf = std::numeric_limits<float>::infinity();
    switch (GetParam()) {
        case OpType::Float32: return expect_lowest_everywhere_gives_zero<float>(-inf);
        case OpType::Float64: return expect_lowest_everywhere_gives_zero<double>(-static_cast<double>(inf));
        case OpType::Half: return expect_lowest_everywhere_gives_zero<__half>(__float2half(-inf));
        case OpType::BFloat16: return expect_lowest_everywhere_gives_zero<__nv_bfloat16>(__float2bfloat16(-inf));
        case OpType::Int32: return expect_lowest_everywhere_gives_zero<int>(std::numeric_limits<int>::lowest());
        case OpType::Int64:
            return expect_lowest_everywhere_gives_zero<long long>(std::numeric_limits<long long>::lowest());
    }
}

INSTANTIATE_TEST_SUITE_P(Ops, ArgMaxAllLowest, testing::ValuesIn(kAllTypes), [](const auto& info) {
    return case_prefix(OpKind::ArgMax, info.param) + "_all_lowest";
});

// ---------------------------------------------------------------- argmax's warp reduction
// ArgMax::warp_reduce (redux.sync: the largest order_key, then the smallest index in two
// 32-bit halves, then the winner's value) on 32 crafted lanes, against combine folded over
// the same lanes on the host, bit for bit. The lanes hold what a whole input rarely puts in
// one warp: ties whose indices differ only above bit 31 (inputs past 2^32 elements), NaNs
// of both signs and with payloads, both zeros, the lowest value, and identity lanes.
template <typename Op>
__global__ void reduce_one_warp(const typename Op::Acc* lanes, typename Op::Acc* out) {
    const typename Op::Acc acc = warp_reduce<Op>(lanes[threadIdx.x]);
    if (threadIdx.x == 0) *out = acc;
}

template <typename V>
std::vector<V> warp_test_values() {
    using L = std::numeric_limits<V>;
    if constexpr (std::is_floating_point_v<V>) {
        using Bits = std::conditional_t<sizeof(V) == 4, std::uint32_t, std::uint64_t>;
        V payload_nan = L::quiet_NaN();
        Bits bits;
        std::memcpy(&bits, &payload_nan, sizeof bits);
        bits |= 5;
        std::memcpy(&payload_nan, &bits, sizeof bits);
        return {L::quiet_NaN(), -L::quiet_NaN(), payload_nan, -payload_nan, V(0), -V(0), V(1), V(-1), V(2),
                L::infinity(), -L::infinity(), L::denorm_min(), -L::denorm_min(), L::lowest(), L::max()};
    } else {
        return {L::lowest(), L::max(), V(0), V(1), V(-1), V(2)};
    }
}

template <typename V>
bool same_bits(const ValueIndex<V>& a, const ValueIndex<V>& b) {
    return std::memcmp(&a.value, &b.value, sizeof(V)) == 0 && a.index == b.index;
}

template <typename V>
void expect_warp_reduce_matches_combine() {
    using Op = ArgMax<V>;
    using Acc = typename Op::Acc;
    const std::vector<V> values = warp_test_values<V>();
    DeviceBuffer<Acc> lanes(32), out(1);
    std::mt19937_64 rng(2026);
    for (int trial = 0; trial < 2000; ++trial) {
        // A few values per trial, so that lanes tie; unique indices (as elements have),
        // from a few high and low halves, so that ties are decided in either half.
        std::vector<V> pool;
        for (int k = 0; k < 3; ++k) pool.push_back(values[rng() % values.size()]);
        std::vector<Acc> host(32);
        std::vector<unsigned long long> used;
        for (Acc& lane : host) {
            if (rng() % 8 == 0) {
                lane = Op::identity();
                continue;
            }
            unsigned long long index;
            do {
                const unsigned long long high = std::array<unsigned long long, 3>{0, 1, 255}[rng() % 3];
                const unsigned long long low = std::array<unsigned long long, 4>{0, 7, 0xFFFFFFFFull, rng() & 0xFFFFFFFFull}[rng() % 4];
                index = high << 32 | low;
            } while (std::find(used.begin(), used.end(), index) != used.end());
            used.push_back(index);
            lane = {pool[rng() % pool.size()], index};
        }
        Acc expected = Op::identity();
        for (const Acc& lane : host) expected = Op::combine(expected, lane);
        CUDA_CHECK(cudaMemcpy(lanes.get(), host.data(), 32 * sizeof(Acc), cudaMemcpyHostToDevice));
        reduce_one_warp<Op><<<1, 32>>>(lanes.get(), out.get());
        CUDA_CHECK_LAUNCH();
        Acc got;
        CUDA_CHECK(cudaMemcpy(&got, out.get(), sizeof got, cudaMemcpyDeviceToHost));
        ASSERT_TRUE(same_bits(got, expected)) << "trial " << trial << ": got index " << got.index << ", expected "
                                              << expected.index;
    }
}

class ArgMaxWarpReduce : public testing::TestWithParam<OpType> {};

TEST_P(ArgMaxWarpReduce, MatchesTheCombine) {
    SKIP_WITHOUT_GPU();
    switch (GetParam()) {
        case OpType::Int32: return expect_warp_reduce_matches_combine<int>();
        case OpType::Int64: return expect_warp_reduce_matches_combine<long long>();
        case OpType::Float32: return expect_warp_reduce_matches_combine<float>();
        case OpType::Float64: return expect_warp_reduce_matches_combine<double>();
        default: FAIL() << "half and bfloat16 reduce their pairs as float";
    }
}

INSTANTIATE_TEST_SUITE_P(Ops, ArgMaxWarpReduce,
                         testing::Values(OpType::Int32, OpType::Int64, OpType::Float32, OpType::Float64),
                         [](const auto& info) { return case_prefix(OpKind::ArgMax, info.param) + "_warp_reduce"; });

// ---------------------------------------------------------------- wrong results are caught
// The checks must fail on a wrong answer: one element dropped from a sum (n - 1 elements
// reduced, compared with the sum of n) or from a meanvar (its count), and argmax run on the
// input one element further on (every index off by one).
struct CatchCase {
    OpKind op;
    OpType type;
    std::size_t n;
};

std::vector<CatchCase> catch_cases() {
    std::vector<CatchCase> cases;
    for (OpKind op : {OpKind::Sum, OpKind::ArgMax, OpKind::MeanVar}) {
        for (OpType type : kAllTypes) {
            for (std::size_t n : {std::size_t{33}, std::size_t{1025}, (std::size_t{1} << 20) + 1}) {
                cases.push_back({op, type, n});
            }
        }
    }
    return cases;
}

class OpCatches : public testing::TestWithParam<CatchCase> {};

TEST_P(OpCatches, AWrongResult) {
    SKIP_WITHOUT_GPU();
    const CatchCase& c = GetParam();
    const Prepared& p = prepared(c.op, c.type, c.n);
    const OpImpl& impl = op_impl(c.op, c.type);
    if (c.op == OpKind::ArgMax) {
        // in + 1 sees element i at index i - 1: the same maximum, one index too small. (Not
        // when the maximum is element 0: then the shift drops it instead.)
        if (p.expected.value.index != 0) {
            const void* shifted = static_cast<const unsigned char*>(p.input.values) + op_type_size(c.type);
            const std::optional<OpValue> wrong = run_ours(impl, shifted, c.n - 1, 256).front();
            ASSERT_TRUE(wrong.has_value());
            EXPECT_FALSE(check_op(c.op, *wrong, p.expected).ok) << describe(c.op, *wrong);
        }
        // The right answer with only its index changed fails too.
        OpValue off_by_one = p.expected.value;
        off_by_one.index += 1;
        EXPECT_FALSE(check_op(c.op, off_by_one, p.expected).ok);
    } else {
        const std::optional<OpValue> wrong = run_ours(impl, p.input.values, c.n - 1, 256).front();  // the last dropped
        ASSERT_TRUE(wrong.has_value());
        EXPECT_FALSE(check_op(c.op, *wrong, p.expected).ok) << describe(c.op, *wrong);
    }
}

INSTANTIATE_TEST_SUITE_P(Ops, OpCatches, testing::ValuesIn(catch_cases()), [](const auto& info) {
    const CatchCase& c = info.param;
    return case_prefix(c.op, c.type) + "_caught_n" + std::to_string(c.n);
});

// ---------------------------------------------------------------- unfused sum of squares
struct UnfusedCase {
    OpType type;
    std::size_t n;
};

std::vector<UnfusedCase> unfused_cases() {
    std::vector<UnfusedCase> cases;
    for (OpType type : kAllTypes) {
        for (std::size_t n : op_test_sizes()) cases.push_back({type, n});
    }
    return cases;
}

class SumSqUnfused : public testing::TestWithParam<UnfusedCase> {};

TEST_P(SumSqUnfused, MatchesTheHostReference) {
    SKIP_WITHOUT_GPU();
    const UnfusedCase& c = GetParam();
    const Prepared& p = prepared(OpKind::SumSq, c.type, c.n);
    expect_ok(OpKind::SumSq, run_unfused(op_impl(OpKind::SumSq, c.type), p.input.values, c.n, 256), p.expected,
              "unfused");
}

INSTANTIATE_TEST_SUITE_P(Ops, SumSqUnfused, testing::ValuesIn(unfused_cases()), [](const auto& info) {
    return case_prefix(OpKind::SumSq, info.param.type) + "_unfused_n" + std::to_string(info.param.n);
});

// ---------------------------------------------------------------- the generator
// The GPU writes, element for element, the values the host's reference reads.
class Generator : public testing::TestWithParam<OpType> {};

long double element_as_value(OpType type, const unsigned char* bytes) {
    switch (type) {
        case OpType::Int32: { int v; std::memcpy(&v, bytes, sizeof v); return v; }
        case OpType::Int64: { long long v; std::memcpy(&v, bytes, sizeof v); return static_cast<long double>(v); }
        case OpType::Float32: { float v; std::memcpy(&v, bytes, sizeof v); return v; }
        case OpType::Float64: { double v; std::memcpy(&v, bytes, sizeof v); return v; }
        case OpType::Half: { __half v; std::memcpy(&v, bytes, sizeof v); return __half2float(v); }
        case OpType::BFloat16: { __nv_bfloat16 v; std::memcpy(&v, bytes, sizeof v); return __bfloat162float(v); }
    }
    return 0;
}

TEST_P(Generator, WritesTheHostsValues) {
    SKIP_WITHOUT_GPU();
    const OpType type = GetParam();
    for (OpKind op : kAllOps) {
        const std::size_t n = 4099;
        OpData data = op_data(op, type, n, 77);
        plant(data, type, 0, Special::Largest);
        plant(data, type, n - 1, Special::Smallest);
        if (is_floating(type)) {
            plant(data, type, 5, Special::NaN);
            plant(data, type, 6, Special::MinusZero);
        }
        const DeviceOpInput input = make_op_input(type, n, data);
        std::vector<unsigned char> bytes(n * op_type_size(type));
        CUDA_CHECK(cudaMemcpy(bytes.data(), input.values, bytes.size(), cudaMemcpyDeviceToHost));
        for (std::size_t i = 0; i < n; ++i) {
            const long double got = element_as_value(type, bytes.data() + i * op_type_size(type));
            const long double want = op_element_value(data, i);
            const bool same = (got != got && want != want) || (got == want && std::signbit(got) == std::signbit(want));
            ASSERT_TRUE(same) << op_name(op) << " element " << i << ": " << format_value(got) << ", expected "
                              << format_value(want);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Ops, Generator, testing::ValuesIn(kAllTypes), [](const auto& info) {
    return "generator_" + std::string(op_type_name(info.param));
});

// ---------------------------------------------------------------- reduce7_cg, reduce7_cub
// The stages' own test: exact sums at every stage test size and every block size.
struct LibraryCase {
    const Stage* stage;
    ValueType type;
    std::size_t n;
    int block;
};

std::vector<LibraryCase> library_cases() {
    std::vector<LibraryCase> cases;
    for (const Stage* stage : {&reduce7_cg_stage, &reduce7_cub_stage}) {
        for (ValueType type : {ValueType::Int32, ValueType::Float32, ValueType::Float64}) {
            for (std::size_t n : test_sizes()) {
                for (int block = stage->min_block; block <= stage->max_block; block *= 2) {
                    cases.push_back({stage, type, n, block});
                }
            }
        }
    }
    return cases;
}

class LibraryStage : public testing::TestWithParam<LibraryCase> {};

TEST_P(LibraryStage, SumIsExact) {
    SKIP_WITHOUT_GPU();
    const LibraryCase& c = GetParam();
    RunConfig config;
    config.block = c.block;
    with_value_type(c.type, [&](auto zero) {
        using T = decltype(zero);
        for (const SumCheck& check : run_stage_twice(*c.stage, config, test_input<T>(c.n), c.n)) {
            EXPECT_TRUE(check.ok) << c.stage->name << " " << type_name(c.type) << " n=" << c.n
                                  << " block=" << c.block << ": " << check.detail;
        }
    });
}

INSTANTIATE_TEST_SUITE_P(Stages, LibraryStage, testing::ValuesIn(library_cases()), [](const auto& info) {
    const LibraryCase& c = info.param;
    return std::string(c.stage->name) + "_" + std::string(type_name(c.type)) + "_n" + std::to_string(c.n) +
           "_block" + std::to_string(c.block);
});

}  // namespace
