#include "device_input.h"

#include <algorithm>
#include <chrono>

#include "cuda_check.h"
#include "timing.h"

namespace {

template <typename T>
__global__ void generate_input(T* values, std::size_t begin, std::size_t count, std::uint64_t seed, int magnitude,
                               InputData data) {
    for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < count;
         k += std::size_t(gridDim.x) * blockDim.x) {
        values[k] = input_element<T>(seed, begin + k, magnitude, data);
    }
}

}  // namespace

template <typename T>
void generate_input_on_device(T* values, std::size_t begin, std::size_t count, std::size_t n, std::uint64_t seed,
                              InputData data, cudaStream_t stream) {
    if (count == 0) return;
    const int magnitude = value_magnitude(n, value_type_of<T>());
    const auto blocks = static_cast<unsigned>(std::min<std::size_t>((count + 255) / 256, 65536));
    generate_input<<<blocks, 256, 0, stream>>>(values, begin, count, seed, magnitude, data);
    CUDA_CHECK_LAUNCH();
}

template <typename T>
DeviceInput<T> make_device_input(std::size_t n, std::uint64_t seed, InputData data) {
    DeviceInput<T> input{n, DeviceBuffer<T>(n), {}};
    CudaEvent start, stop;
    CUDA_CHECK(cudaEventRecord(start, nullptr));
    generate_input_on_device(input.values.get(), 0, n, n, seed, data, nullptr);
    CUDA_CHECK(cudaEventRecord(stop, nullptr));
    // The GPU writes while the host computes the sum it must have.
    const auto host_start = std::chrono::steady_clock::now();
    input.expected = expected_sum<T>(n, seed, data);
    input.reference_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - host_start).count();
    input.reference_threads = host_threads_for(n);
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    input.generate_ms = ms;
    // The timed kernels run on a non-blocking stream, which would not wait for the
    // legacy default stream's generator.
    CUDA_CHECK(cudaDeviceSynchronize());
    return input;
}

DeviceMemory device_memory() {
    DeviceMemory memory;
    CUDA_CHECK(cudaMemGetInfo(&memory.free_bytes, &memory.total_bytes));
    return memory;
}

void require_device_memory(const MemoryPlan& plan, const std::string& what) {
    const DeviceMemory memory = device_memory();
    if (const auto shortfall = memory_shortfall(plan, what, memory.free_bytes, memory.total_bytes)) {
        throw TooLargeError(*shortfall);
    }
}

#define INSTANTIATE(T)                                                                                        \
    template void generate_input_on_device<T>(T*, std::size_t, std::size_t, std::size_t, std::uint64_t, InputData, \
                                              cudaStream_t);                                                  \
    template DeviceInput<T> make_device_input<T>(std::size_t, std::uint64_t, InputData);
INSTANTIATE(int)
INSTANTIATE(float)
INSTANTIATE(double)
