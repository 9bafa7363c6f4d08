#include "gpu_test.h"

#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <tuple>

#include "cuda_check.h"

const std::string& gpu_unavailable_reason() {
    static const std::string reason = [] {
        int count = 0;
        const cudaError_t status = cudaGetDeviceCount(&count);
        if (status != cudaSuccess) {
            return std::string("no usable CUDA device (") + cudaGetErrorName(status) + ": " +
                   cudaGetErrorString(status) + "): GPU tests skipped";
        }
        if (count == 0) return std::string("no CUDA device: GPU tests skipped");
        return std::string();
    }();
    return reason;
}

const std::string& pdl_unavailable_reason() {
    static const std::string reason = [] {
        if (!gpu_unavailable_reason().empty()) return gpu_unavailable_reason();
        int device = 0, major = 0;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
        return major >= 9 ? std::string()
                          : std::string("Programmatic Dependent Launch needs compute capability 9.0 or newer: skipped");
    }();
    return reason;
}

const std::vector<std::size_t>& test_sizes() {
    static const std::vector<std::size_t> sizes = {
        0, 1, 2, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 65537,
        std::size_t{1} << 20, (std::size_t{1} << 20) + 1, (std::size_t{1} << 24) + 3};
    return sizes;
}

template <typename T>
TestInput<T> test_input(std::size_t n, std::size_t offset) {
    struct Cached {
        DeviceBuffer<T> buffer;
        long long exact_sum;
    };
    static std::map<std::pair<std::size_t, std::size_t>, std::unique_ptr<Cached>> cache;
    auto& slot = cache[{n, offset}];
    if (!slot) {
        const HostInput<T> host = make_input<T>(n, /*seed=*/n * 7 + offset + 1);
        slot = std::make_unique<Cached>(Cached{DeviceBuffer<T>(n + offset + 1), host.expected.exact});
        if (n) {
            CUDA_CHECK(cudaMemcpy(slot->buffer.get() + offset, host.values.data(), n * sizeof(T),
                                  cudaMemcpyHostToDevice));
        }
    }
    return {slot->buffer.get() + offset, slot->exact_sum};
}

template <typename T>
std::vector<SumCheck> run_stage_twice(const Stage& stage, const RunConfig& config, const TestInput<T>& input,
                                      std::size_t n, cudaStream_t stream) {
    DeviceBuffer<unsigned char> workspace(stage.workspace_bytes(n, sizeof(T), config));
    if (workspace.bytes()) CUDA_CHECK(cudaMemset(workspace.get(), 0, workspace.bytes()));
    CUDA_CHECK(cudaDeviceSynchronize());  // a non-blocking stream does not wait for the memset
    DeviceBuffer<T> result(1);
    std::vector<SumCheck> checks;
    for (int run = 0; run < 2; ++run) {
        CUDA_CHECK(cudaMemsetAsync(result.get(), 0x7F, sizeof(T), stream));  // a value no sum here takes
        stage.sum<T>()(input.values, n, result.get(), workspace.get(), config, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        T got{};
        CUDA_CHECK(cudaMemcpy(&got, result.get(), sizeof(T), cudaMemcpyDeviceToHost));
        checks.push_back(check_sum(got, input.exact_sum));
    }
    return checks;
}

#define INSTANTIATE(T)                                                            \
    template TestInput<T> test_input<T>(std::size_t, std::size_t);               \
    template std::vector<SumCheck> run_stage_twice<T>(const Stage&, const RunConfig&, \
                                                      const TestInput<T>&, std::size_t, cudaStream_t);
INSTANTIATE(int)
INSTANTIATE(float)
INSTANTIATE(double)
