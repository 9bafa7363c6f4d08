// An array in device memory that frees itself (RAII), so no early return or exception leaks it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>

#include "cuda_check.h"

template <typename T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t count) : count_(count) {
        if (count == 0) return;
        const cudaError_t status = cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T));
        if (status != cudaSuccess) {
            cudaGetLastError();  // clear the error so later calls are not blamed for it
            const std::string what = "cudaMalloc of " + std::to_string(count * sizeof(T)) + " bytes";
            cuda_check(status, what.c_str(), __FILE__, __LINE__);
        }
    }
    ~DeviceBuffer() {
        if (data_) cudaFree(data_);  // no check: a destructor must not throw
    }
    DeviceBuffer(DeviceBuffer&& other) noexcept
        : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
        std::swap(data_, other.data_);
        std::swap(count_, other.count_);
        return *this;
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    T* get() const { return data_; }
    std::size_t size() const { return count_; }
    std::size_t bytes() const { return count_ * sizeof(T); }

private:
    T* data_ = nullptr;
    std::size_t count_ = 0;
};
