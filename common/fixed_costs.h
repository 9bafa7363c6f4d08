// The fixed costs of a reduction (docs/11-fixed-costs.md), measured as the harness measures
// the stages: warm-ups, many timed runs, the L2 flushed before each, every result checked.
//
//  - The launch floor: one launch of a kernel that reads nothing (one thread stores the
//    sum it is handed). No reduction launched this way can take less time.
//  - The launch floor after an occupancy query: the same launch, preceded in the timed
//    region by the queries a launcher makes to size a one-wave grid, asked afresh. What it
//    adds to the floor is what asking on every call would cost a reduction.
//  - The read floor: one launch that reads all n values, 16 bytes per load, and leaves one
//    partial sum per thread for the host to add (no combining on the GPU). What a
//    reduction costs beyond it is its combining and its finish.
//  - The one-tile reduction: for n of at most one tile, a whole reduction by one block with
//    nothing but the loads, a warp-shuffle block sum and one store (no tile loop, no
//    misaligned head, no finish): what a one-block launch of a stage is measured against.
//  - Batches: K reductions (or K launch floors) one after another, submitted as K launches
//    into a stream or replayed as one captured CUDA Graph (cuda_graph.h), per reduction.
#pragma once

#include <string_view>

#include "benchmark.h"

// How a batch reaches the GPU.
enum class Submission { Stream, Graph };
std::string_view submission_name(Submission how);  // "stream", "graph"

// The launch floor's kernel name, as its records carry it, and the variant label of the
// launch floor after an occupancy query.
inline constexpr std::string_view kLaunchFloorKernel = "store_given_sum";
inline constexpr std::string_view kAfterQueryVariant = "launch after an occupancy query";

template <typename T>
Record bench_launch_floor(const DeviceInput<T>& input, BenchContext& context);
template <typename T>
Record bench_launch_after_query(const DeviceInput<T>& input, BenchContext& context);
template <typename T>
Record bench_read_floor(const DeviceInput<T>& input, BenchContext& context);
// The largest n the one-tile reduction takes (4,096 for 4-byte T, 2,048 for double); it
// throws std::invalid_argument for more.
template <typename T>
std::size_t one_tile_capacity();
template <typename T>
Record bench_one_tile(const DeviceInput<T>& input, BenchContext& context);

// The inputs of a batch: copies of one input, as many as it takes for none to be still in
// L2 when its turn comes (more than twice L2 in all, or one per reduction), so that every
// reduction of a batch reads DRAM, as the single runs do after the flush.
// Each copy starts on a 256-byte boundary, as a cudaMalloc'd input does: the 16-byte loads
// of the read floor (and a stage's vector loads) see the alignment the single runs see.
inline constexpr std::size_t kBatchCopyAlignment = 256;
template <typename T>
struct BatchInputs {
    const DeviceInput<T>* input = nullptr;
    int size = 0;             // K: reductions per batch
    std::size_t copies = 0;   // distinct input arrays, used in turn
    std::size_t stride = 0;   // values from one copy's start to the next's: n, rounded up to the alignment
    DeviceBuffer<T> values;   // copies x stride values
    const T* of(int k) const { return values.get() + (static_cast<std::size_t>(k) % copies) * stride; }
};
// Values from one copy's start to the next's, for n values of `value_size` bytes.
std::size_t batch_stride(std::size_t n, std::size_t value_size);
template <typename T>
BatchInputs<T> make_batch_inputs(const DeviceInput<T>& input, int size, std::size_t l2_bytes, cudaStream_t stream);
// How many copies make_batch_inputs makes (it allocates copies x stride values).
std::size_t batch_copies(std::size_t input_bytes, int size, std::size_t l2_bytes);

// K reductions by the stage, each into its own result, each checked. The record's times
// are the whole batch's; its bytes are K x n x sizeof(T), so its GB/s is the batch's.
template <typename T>
Record bench_stage_batch(const Stage& stage, const RunConfig& config, const BatchInputs<T>& batch, Submission how,
                         BenchContext& context);
// K launch floors, the same way.
template <typename T>
Record bench_floor_batch(const BatchInputs<T>& batch, Submission how, BenchContext& context);
// K read floors, the same way; the host adds each one's partials after the timed region.
template <typename T>
Record bench_read_floor_batch(const BatchInputs<T>& batch, Submission how, BenchContext& context);
