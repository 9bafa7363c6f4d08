#include "fixed_costs.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_record.h"
#include "cuda_graph.h"

using namespace bench_detail;

namespace {

// The launch floor: a grid of one thread that reads nothing and stores one value, the
// sum it is handed, so that its result can be checked like a reduction's.
template <typename T>
__global__ void store_given_sum(T* out, T sum) {
    *out = sum;
}

// What the launch floor stores: the input's expected sum, so that its result passes the
// same check as a reduction's.
template <typename T>
T given_sum(const DeviceInput<T>& input) {
    return static_cast<T>(input.expected.data == InputData::Integers ? input.expected.exact : input.expected.reference);
}

// The read floor: every thread adds up its share of the input, 16 bytes per load, and
// stores its own partial; nothing is combined on the GPU.
constexpr unsigned kReadBlock = 256;
constexpr std::size_t kVectorsPerThread = 4;  // at least: the stores stay <= 1/16 of the bytes read

template <typename T>
__global__ void read_only(const T* in, std::size_t n, T* per_thread) {
    constexpr std::size_t kPerVector = sizeof(uint4) / sizeof(T);
    const std::size_t vectors = n / kPerVector;
    const auto* body = reinterpret_cast<const uint4*>(in);  // cudaMalloc'd: 256-byte aligned
    const std::size_t thread = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    const std::size_t threads = std::size_t(gridDim.x) * blockDim.x;
    T sum = T(0);
#pragma unroll 4
    for (std::size_t i = thread; i < vectors; i += threads) {
        const uint4 loaded = body[i];
        const T* lanes = reinterpret_cast<const T*>(&loaded);
        for (std::size_t k = 0; k < kPerVector; ++k) sum += lanes[k];
    }
    for (std::size_t i = vectors * kPerVector + thread; i < n; i += threads) sum += in[i];
    per_thread[thread] = sum;
}

// The one-tile reduction: a whole reduction by one block, for an input of at most one tile
// (kReadBlock threads x kVectorsPerThread 16-byte vectors: 4,096 ints or floats, 2,048
// doubles), as CUB runs one (its single-tile kernel). Each thread adds its vectors, loaded
// before any is added, and the block adds its threads' sums with warp shuffles; one store.
// No tile loop, no head for a misaligned input, no finish to choose, 32-bit indices: a
// one-block reduction with nothing more, beside which a stage's one-block launch shows
// what its generality costs (docs/11-fixed-costs.md, n = 2^12).
template <typename T>
__device__ T one_tile_warp_sum(T value) {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
    return value;
}

template <typename T>
__global__ void __launch_bounds__(kReadBlock) one_tile_sum(const T* in, unsigned n, T* out) {
    constexpr unsigned kPerVector = sizeof(uint4) / sizeof(T);
    const unsigned vectors = n / kPerVector;
    const auto* body = reinterpret_cast<const uint4*>(in);  // cudaMalloc'd: 256-byte aligned
    uint4 loaded[kVectorsPerThread];
#pragma unroll
    for (unsigned k = 0; k < kVectorsPerThread; ++k) {
        const unsigned i = threadIdx.x + k * kReadBlock;
        loaded[k] = i < vectors ? body[i] : uint4{0, 0, 0, 0};  // all-zero bits: 0 for every T here
    }
    T sum = threadIdx.x < n - vectors * kPerVector ? in[vectors * kPerVector + threadIdx.x] : T(0);
#pragma unroll
    for (unsigned k = 0; k < kVectorsPerThread; ++k) {
        const T* lanes = reinterpret_cast<const T*>(&loaded[k]);
        for (unsigned j = 0; j < kPerVector; ++j) sum += lanes[j];
    }
    __shared__ T warp_sums[kReadBlock / 32];
    sum = one_tile_warp_sum(sum);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
    __syncthreads();
    if (threadIdx.x < 32) {
        sum = one_tile_warp_sum(threadIdx.x < kReadBlock / 32 ? warp_sums[threadIdx.x] : T(0));
        if (threadIdx.x == 0) *out = sum;
    }
}

template <typename T>
unsigned read_floor_blocks(std::size_t n) {
    const std::size_t vectors = ceil_div(n, sizeof(uint4) / sizeof(T));
    const std::size_t wanted = std::max<std::size_t>(1, ceil_div(vectors, kVectorsPerThread * kReadBlock));
    return static_cast<unsigned>(std::min<std::size_t>(wanted, resident_blocks(read_only<T>, kReadBlock, 0)));
}

// What the host makes of a launch's outputs: their sum, in order. One output (a
// reduction's result, a launch floor's) comes back as it is.
template <typename T>
T host_sum(const T* outputs, std::size_t count) {
    if (count == 1) return outputs[0];
    T sum = T(0);
    for (std::size_t i = 0; i < count; ++i) sum += outputs[i];
    return sum;
}

// The first failed check of these, or the first check when all passed.
SumCheck first_failure(const std::vector<SumCheck>& checks) {
    for (const SumCheck& check : checks) {
        if (!check.ok) return check;
    }
    return checks.front();
}

// Times K calls of enqueue(input, outputs) as one batch: K launches into the stream, or
// one replay of the same K captured into a graph. Each call writes its own
// `outputs_per_reduction` values (1 for a reduction, one per thread for the read floor),
// which the host adds after the timed region; all are poisoned before and checked after
// every run.
template <typename T, typename Enqueue>
Record time_batch(Record r, const BatchInputs<T>& batch, Submission how, std::size_t outputs_per_reduction,
                  BenchContext& context, Enqueue&& enqueue) {
    const DeviceInput<T>& input = *batch.input;
    DeviceBuffer<T> outputs(static_cast<std::size_t>(batch.size) * outputs_per_reduction);
    const auto enqueue_all = [&] {
        for (int k = 0; k < batch.size; ++k) enqueue(batch.of(k), outputs.get() + k * outputs_per_reduction);
    };
    std::unique_ptr<CudaGraph> graph;
    if (how == Submission::Graph) graph = std::make_unique<CudaGraph>(context.stream, enqueue_all);
    std::vector<T> got(outputs.size());
    const TimedRuns runs = time_runs(
        label_of(r), context.options.warmup, context.options.iters, context.flusher, context.stream,
        [&] { CUDA_CHECK(cudaMemsetAsync(outputs.get(), kPoisonByte, outputs.bytes(), context.stream)); },
        [&] {
            if (graph) {
                graph->launch(context.stream);
            } else {
                enqueue_all();
            }
        },
        [&] {
            CUDA_CHECK(cudaMemcpyAsync(got.data(), outputs.get(), outputs.bytes(), cudaMemcpyDeviceToHost,
                                       context.stream));
            CUDA_CHECK(cudaStreamSynchronize(context.stream));
            std::vector<SumCheck> checks;
            for (std::size_t k = 0; k < got.size(); k += outputs_per_reduction) {
                checks.push_back(check_sum(host_sum(got.data() + k, outputs_per_reduction), input.expected));
            }
            return first_failure(checks);
        });
    finish_record(r, runs, input);
    return r;
}

std::string batch_label(int size, Submission how) {
    return std::to_string(size) + " in a " + std::string(submission_name(how));
}

}  // namespace

std::string_view submission_name(Submission how) { return how == Submission::Graph ? "graph" : "stream"; }

// One launch per timed run, enqueued by launch(out), that leaves one value at `out`: poisoned
// before every run and checked after it, as a reduction's result.
template <typename T, typename Launch>
Record time_one_result(Record r, const DeviceInput<T>& input, BenchContext& context, Launch&& launch) {
    DeviceBuffer<T> result(1);
    const TimedRuns runs = time_runs(
        label_of(r), context.options.warmup, context.options.iters, context.flusher, context.stream,
        [&] { CUDA_CHECK(cudaMemsetAsync(result.get(), kPoisonByte, sizeof(T), context.stream)); },
        [&] { launch(result.get()); },
        [&] { return read_and_check(result.get(), input.expected, context.stream); });
    finish_record(r, runs, input);
    return r;
}

template <typename T>
Record bench_launch_floor(const DeviceInput<T>& input, BenchContext& context) {
    const T sum = given_sum(input);
    return time_one_result(
        new_record("floor", std::string(kLaunchFloorKernel), "launch: 1 thread, no reads", input, 0, 1, context), input,
        context, [&](T* out) {
            store_given_sum<<<1, 1, 0, context.stream>>>(out, sum);
            CUDA_CHECK_LAUNCH();
        });
}

// The launch floor preceded, in the timed region, by the three queries a launcher makes to
// size a one-wave grid (stage.h), asked afresh: host work between the start event and the
// launch, which the GPU waits through.
template <typename T>
Record bench_launch_after_query(const DeviceInput<T>& input, BenchContext& context) {
    const T sum = given_sum(input);
    return time_one_result(
        new_record("floor", std::string(kLaunchFloorKernel), std::string(kAfterQueryVariant), input, 0, 1, context),
        input, context, [&](T* out) {
            (void)query_resident_blocks(read_only<T>, kReadBlock, 0);
            store_given_sum<<<1, 1, 0, context.stream>>>(out, sum);
            CUDA_CHECK_LAUNCH();
        });
}

template <typename T>
Record bench_read_floor(const DeviceInput<T>& input, BenchContext& context) {
    Record r = new_record("floor", "read_only", "read: 16-byte loads, 1 partial per thread", input,
                          input.n * sizeof(T), kReadBlock, context);
    const unsigned blocks = read_floor_blocks<T>(input.n);
    DeviceBuffer<T> partials(std::size_t(blocks) * kReadBlock);
    std::vector<T> got(partials.size());
    const TimedRuns runs = time_runs(
        label_of(r), context.options.warmup, context.options.iters, context.flusher, context.stream,
        [&] { CUDA_CHECK(cudaMemsetAsync(partials.get(), kPoisonByte, partials.bytes(), context.stream)); },
        [&] {
            read_only<<<blocks, kReadBlock, 0, context.stream>>>(input.values.get(), input.n, partials.get());
            CUDA_CHECK_LAUNCH();
        },
        [&] {
            // The host adds the partials (after the timed region): a value not read, or read
            // twice, spoils the exact sum, as in a reduction.
            CUDA_CHECK(cudaMemcpyAsync(got.data(), partials.get(), partials.bytes(), cudaMemcpyDeviceToHost,
                                       context.stream));
            CUDA_CHECK(cudaStreamSynchronize(context.stream));
            return check_sum(host_sum(got.data(), got.size()), input.expected);
        });
    finish_record(r, runs, input);
    return r;
}

template <typename T>
std::size_t one_tile_capacity() {
    return kReadBlock * kVectorsPerThread * (sizeof(uint4) / sizeof(T));
}

template <typename T>
Record bench_one_tile(const DeviceInput<T>& input, BenchContext& context) {
    if (input.n > one_tile_capacity<T>()) {
        throw std::invalid_argument("the one-tile reduction takes at most " + std::to_string(one_tile_capacity<T>()) +
                                    " values, not " + std::to_string(input.n));
    }
    return time_one_result(
        new_record("floor", "one_tile_sum", "reduce: 1 block, no tile loop", input, input.n * sizeof(T), kReadBlock,
                   context),
        input, context, [&](T* out) {
            one_tile_sum<<<1, kReadBlock, 0, context.stream>>>(input.values.get(), static_cast<unsigned>(input.n), out);
            CUDA_CHECK_LAUNCH();
        });
}

std::size_t batch_copies(std::size_t input_bytes, int size, std::size_t l2_bytes) {
    const std::size_t to_evict = ceil_div(2 * l2_bytes, std::max<std::size_t>(input_bytes, 1)) + 1;
    return std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(size), to_evict));
}

std::size_t batch_stride(std::size_t n, std::size_t value_size) {
    return ceil_div(n * value_size, kBatchCopyAlignment) * kBatchCopyAlignment / value_size;
}

template <typename T>
BatchInputs<T> make_batch_inputs(const DeviceInput<T>& input, int size, std::size_t l2_bytes, cudaStream_t stream) {
    BatchInputs<T> batch;
    batch.input = &input;
    batch.size = size;
    batch.copies = batch_copies(input.n * sizeof(T), size, l2_bytes);
    batch.stride = batch_stride(input.n, sizeof(T));
    batch.values = DeviceBuffer<T>(batch.copies * batch.stride);
    for (std::size_t c = 0; c < batch.copies && input.n; ++c) {
        CUDA_CHECK(cudaMemcpyAsync(batch.values.get() + c * batch.stride, input.values.get(), input.n * sizeof(T),
                                   cudaMemcpyDeviceToDevice, stream));
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return batch;
}

template <typename T>
Record bench_stage_batch(const Stage& stage, const RunConfig& config, const BatchInputs<T>& batch, Submission how,
                         BenchContext& context) {
    const DeviceInput<T>& input = *batch.input;
    const std::string variant = variant_label(stage.variants, config.variants, value_type_of<T>());
    Record r = new_record(stage.name, stage.kernel, (variant.empty() ? "" : variant + ", ") + batch_label(batch.size, how),
                          input, batch.size * input.n * sizeof(T), config.block, context);
    // One workspace for the batch: its reductions run one after another (a stream, or a
    // graph whose nodes form one chain), and each leaves the workspace ready for the next.
    DeviceBuffer<unsigned char> workspace(stage.workspace_bytes(input.n, sizeof(T), config));
    if (workspace.bytes()) CUDA_CHECK(cudaMemsetAsync(workspace.get(), 0, workspace.bytes(), context.stream));
    CUDA_CHECK(cudaStreamSynchronize(context.stream));  // a capture may not follow unfinished work it depends on
    const SumFn<T> sum = stage.sum<T>();
    return time_batch(r, batch, how, 1, context, [&](const T* in, T* out) {
        sum(in, input.n, out, workspace.get(), config, context.stream);
    });
}

template <typename T>
Record bench_floor_batch(const BatchInputs<T>& batch, Submission how, BenchContext& context) {
    const DeviceInput<T>& input = *batch.input;
    Record r = new_record("floor", std::string(kLaunchFloorKernel), "launch, " + batch_label(batch.size, how), input, 0, 1, context);
    const T sum = given_sum(input);
    return time_batch(r, batch, how, 1, context, [&](const T*, T* out) {
        store_given_sum<<<1, 1, 0, context.stream>>>(out, sum);
        CUDA_CHECK_LAUNCH();
    });
}

template <typename T>
Record bench_read_floor_batch(const BatchInputs<T>& batch, Submission how, BenchContext& context) {
    const DeviceInput<T>& input = *batch.input;
    Record r = new_record("floor", "read_only", "read, " + batch_label(batch.size, how), input,
                          batch.size * input.n * sizeof(T), kReadBlock, context);
    const unsigned blocks = read_floor_blocks<T>(input.n);
    return time_batch(r, batch, how, std::size_t(blocks) * kReadBlock, context, [&](const T* in, T* partials) {
        read_only<<<blocks, kReadBlock, 0, context.stream>>>(in, input.n, partials);
        CUDA_CHECK_LAUNCH();
    });
}

#define INSTANTIATE(T)                                                                                          \
    template Record bench_launch_floor<T>(const DeviceInput<T>&, BenchContext&);                                \
    template Record bench_read_floor<T>(const DeviceInput<T>&, BenchContext&);                                  \
    template std::size_t one_tile_capacity<T>();                                                                \
    template Record bench_one_tile<T>(const DeviceInput<T>&, BenchContext&);                                    \
    template Record bench_launch_after_query<T>(const DeviceInput<T>&, BenchContext&);                          \
    template Record bench_read_floor_batch<T>(const BatchInputs<T>&, Submission, BenchContext&);                \
    template BatchInputs<T> make_batch_inputs<T>(const DeviceInput<T>&, int, std::size_t, cudaStream_t);        \
    template Record bench_stage_batch<T>(const Stage&, const RunConfig&, const BatchInputs<T>&, Submission,     \
                                         BenchContext&);                                                        \
    template Record bench_floor_batch<T>(const BatchInputs<T>&, Submission, BenchContext&);
INSTANTIATE(int)
INSTANTIATE(float)
INSTANTIATE(double)
