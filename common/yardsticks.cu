// The yardsticks every table ends with: CUB's DeviceReduce::Sum and a device-to-device copy
// (the bandwidth a reduction can at best approach). In a file of their own because CUB's
// device reduction is the harness's longest compile: apart, it builds beside the rest.
//
// Which CUB: the one this build compiled against, the CUDA toolkit's or, with
// -DREDUCTION_CCCL_INCLUDE_DIR, a newer CCCL's (scripts/cccl_wheel_build.sh). Every CUB row
// names its CCCL version and its determinism mode. CCCL 3.1 and newer also reduce in a
// single pass with atomics when asked for no determinism; that row appears only then.
#include <cub/device/device_reduce.cuh>
#include <cub/version.cuh>

#if CCCL_VERSION >= 3001000
#include <cuda/execution>
#include <cuda/memory_resource>
#include <cuda/std/execution>
#include <cuda/stream_ref>
#endif

#include <stdexcept>
#include <string>

#include "bench_record.h"
#include "benchmark.h"

using namespace bench_detail;

std::string cub_version() {
    return "CCCL " + std::to_string(CCCL_VERSION / 1000000) + "." + std::to_string(CCCL_VERSION / 1000 % 1000) + "." +
           std::to_string(CCCL_VERSION % 1000);
}

bool cub_has_not_guaranteed() { return CCCL_VERSION >= 3001000; }

template <typename T>
Record bench_cub(const DeviceInput<T>& input, BenchContext& context) {
    // The two-phase API takes no determinism requirement: CUB's default, run_to_run (the
    // same bits every run on one GPU), in one launch or two depending on n.
    Record r = new_record("cub", "DeviceReduce::Sum", cub_version() + " run_to_run", input, input.n * sizeof(T), 0,
                          context);
    DeviceBuffer<T> result(1);
    // CUB's two-phase API: ask for the temporary storage size, allocate it outside the
    // timed region, then time only the reduction itself.
    std::size_t temp_bytes = 0;
    CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, input.values.get(), result.get(),
                                      static_cast<long long>(input.n), context.stream));
    DeviceBuffer<unsigned char> temp(temp_bytes);
    const TimedRuns runs = time_by_method(
        r, context,
        [&] { CUDA_CHECK(cudaMemsetAsync(result.get(), kPoisonByte, sizeof(T), context.stream)); },
        [&] {
            CUDA_CHECK(cub::DeviceReduce::Sum(temp.get(), temp_bytes, input.values.get(), result.get(),
                                              static_cast<long long>(input.n), context.stream));
        },
        [&] { return read_and_check(result.get(), input.expected, context.stream); });
    finish_record(r, runs, input);
    return r;
}

#if CCCL_VERSION >= 3001000
namespace {

// A memory resource for CUB's environment API that hands out one buffer of ours, grown on
// the first call (the untimed checked run) and reused after: the environment overload
// allocates its temporary storage inside every call, and the default resource
// (cudaMallocAsync) would put an allocation and a free inside every timed run.
class ReusedTempStorage {
public:
    explicit ReusedTempStorage(DeviceBuffer<unsigned char>* buffer) : buffer_(buffer) {}
    void* allocate(cuda::stream_ref, std::size_t bytes, std::size_t alignment) { return allocate_sync(bytes, alignment); }
    void deallocate(cuda::stream_ref, void*, std::size_t, std::size_t) noexcept {}
    void* allocate_sync(std::size_t bytes, std::size_t) {
        if (bytes > buffer_->bytes()) *buffer_ = DeviceBuffer<unsigned char>(bytes);  // 256-byte aligned
        return buffer_->get();
    }
    void deallocate_sync(void*, std::size_t, std::size_t) noexcept {}
    bool operator==(const ReusedTempStorage& other) const { return buffer_ == other.buffer_; }
    bool operator!=(const ReusedTempStorage& other) const { return buffer_ != other.buffer_; }

private:
    DeviceBuffer<unsigned char>* buffer_;
};

}  // namespace

template <typename T>
Record bench_cub_not_guaranteed(const DeviceInput<T>& input, BenchContext& context) {
    Record r = new_record("cub_not_guaranteed", "DeviceReduce::Sum", cub_version() + " not_guaranteed", input,
                          input.n * sizeof(T), 0, context);
    DeviceBuffer<T> result(1);
    DeviceBuffer<unsigned char> temp;
    // The environment: no determinism required (CUB may then add the tiles' sums with
    // atomics, in one pass), our stream, and our memory resource.
    namespace exec = cuda::std::execution;
    const auto env = exec::env{cuda::execution::require(cuda::execution::determinism::not_guaranteed),
                               exec::prop{cuda::get_stream, cuda::stream_ref{context.stream}},
                               exec::prop{cuda::mr::get_memory_resource, ReusedTempStorage{&temp}}};
    const TimedRuns runs = time_by_method(
        r, context,
        [&] { CUDA_CHECK(cudaMemsetAsync(result.get(), kPoisonByte, sizeof(T), context.stream)); },
        [&] {
            CUDA_CHECK(cub::DeviceReduce::Sum(input.values.get(), result.get(), static_cast<long long>(input.n), env));
        },
        [&] { return read_and_check(result.get(), input.expected, context.stream); });
    finish_record(r, runs, input);
    return r;
}
#else
template <typename T>
Record bench_cub_not_guaranteed(const DeviceInput<T>&, BenchContext&) {
    throw std::runtime_error("CUB's not_guaranteed reduction needs CCCL 3.1 or newer; this build has " + cub_version() +
                             " (scripts/cccl_wheel_build.sh builds with a newer one)");
}
#endif

template <typename T>
Record bench_copy(const DeviceInput<T>& input, BenchContext& context) {
    Record r = new_record("copy", "cudaMemcpyAsync", "device to device, read + write", input,
                          2 * input.n * sizeof(T), 0, context);
    DeviceBuffer<T> copy(input.n);
    DeviceBuffer<T> copy_sum(1);
    std::size_t temp_bytes = 0;
    CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, copy.get(), copy_sum.get(),
                                      static_cast<long long>(input.n), context.stream));
    DeviceBuffer<unsigned char> temp(temp_bytes);
    const std::size_t bytes = input.n * sizeof(T);
    const TimedRuns runs = time_by_method(
        r, context,
        [&] {
            if (bytes) CUDA_CHECK(cudaMemsetAsync(copy.get(), kPoisonByte, bytes, context.stream));
        },
        [&] {
            if (bytes) {
                CUDA_CHECK(cudaMemcpyAsync(copy.get(), input.values.get(), bytes, cudaMemcpyDeviceToDevice,
                                           context.stream));
            }
        },
        [&] {
            // The copy is checked by summing it (after the timed region): every element
            // that was not copied still holds poison and spoils the exact sum.
            CUDA_CHECK(cub::DeviceReduce::Sum(temp.get(), temp_bytes, copy.get(), copy_sum.get(),
                                              static_cast<long long>(input.n), context.stream));
            return read_and_check(copy_sum.get(), input.expected, context.stream);
        });
    finish_record(r, runs, input);
    r.error_ulps.reset();  // that would be CUB's error in summing the copy, not the copy's
    return r;
}

#define INSTANTIATE(T)                                                                 \
    template Record bench_cub<T>(const DeviceInput<T>&, BenchContext&);                \
    template Record bench_cub_not_guaranteed<T>(const DeviceInput<T>&, BenchContext&); \
    template Record bench_copy<T>(const DeviceInput<T>&, BenchContext&);
INSTANTIATE(int)
INSTANTIATE(float)
INSTANTIATE(double)
