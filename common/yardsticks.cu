// The yardsticks every table ends with: CUB's DeviceReduce::Sum and a device-to-device copy
// (the bandwidth a reduction can at best approach). In a file of their own because CUB's
// device reduction is the harness's longest compile: apart, it builds beside the rest.
#include <cub/device/device_reduce.cuh>

#include "bench_record.h"
#include "benchmark.h"

using namespace bench_detail;

template <typename T>
Record bench_cub(const DeviceInput<T>& input, BenchContext& context) {
    Record r = new_record("cub", "DeviceReduce::Sum", "", input, input.n * sizeof(T), 0, context);
    DeviceBuffer<T> result(1);
    // CUB's two-phase API: ask for the temporary storage size, allocate it outside the
    // timed region, then time only the reduction itself.
    std::size_t temp_bytes = 0;
    CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, input.values.get(), result.get(),
                                      static_cast<long long>(input.n), context.stream));
    DeviceBuffer<unsigned char> temp(temp_bytes);
    const TimedRuns runs = time_runs(
        label_of(r), context.options.warmup, context.options.iters, context.flusher, context.stream,
        [&] { CUDA_CHECK(cudaMemsetAsync(result.get(), kPoisonByte, sizeof(T), context.stream)); },
        [&] {
            CUDA_CHECK(cub::DeviceReduce::Sum(temp.get(), temp_bytes, input.values.get(), result.get(),
                                              static_cast<long long>(input.n), context.stream));
        },
        [&] { return read_and_check(result.get(), input.expected, context.stream); });
    finish_record(r, runs, input);
    return r;
}

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
    const TimedRuns runs = time_runs(
        label_of(r), context.options.warmup, context.options.iters, context.flusher, context.stream,
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

#define INSTANTIATE(T)                                                  \
    template Record bench_cub<T>(const DeviceInput<T>&, BenchContext&); \
    template Record bench_copy<T>(const DeviceInput<T>&, BenchContext&);
INSTANTIATE(int)
INSTANTIATE(float)
INSTANTIATE(double)
