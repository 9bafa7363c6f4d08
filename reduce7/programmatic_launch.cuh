// Programmatic Dependent Launch (PDL) for reduce7's --finish pdl: the machinery, apart
// from the lesson in kernel.cu.
//
// In a stream, a kernel normally starts only after the kernel before it has finished and
// its blocks have drained: the GPU's front end sees the second launch late, and its
// blocks reach the SMs a few microseconds after the last block of the first. With PDL
// (compute capability 9.0 and newer) the second launch carries the attribute
// cudaLaunchAttributeProgrammaticStreamSerialization: it may be scheduled as soon as every
// block of the first has called cudaTriggerProgrammaticLaunchCompletion() (or exited), and
// it calls cudaGridDependencySynchronize() before it reads what the first wrote. That call
// waits until the first grid has completed and its writes are visible, so triggering
// early is safe: it only lets the launch latency overlap the first kernel's work.
#pragma once

#include <cuda_runtime.h>

#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "cuda_check.h"

// Device side. Both are no-ops in a grid that was not launched with the attribute, and
// compile to nothing below sm_90, where the launcher refuses to use them (below).
__device__ inline void let_dependent_grid_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cudaTriggerProgrammaticLaunchCompletion();
#endif
}

__device__ inline void wait_for_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cudaGridDependencySynchronize();
#endif
}

// Called first by both passes of --finish pdl: the second waits for the first grid to
// complete (a no-op in the first, which was not launched with the attribute), and each
// lets the launch after it be scheduled early.
__device__ inline void overlap_the_two_passes() {
    wait_for_previous_grid();
    let_dependent_grid_launch();
}

// Throws, with one line, unless `kernel` can rely on PDL here: the GPU must be compute
// capability 9.0 or newer, and the kernel's code must have been compiled for sm_90 or
// newer (a build for older GPUs alone would run its sm_8x code, in which the wait above
// compiled to nothing, and the dependent grid could read partials not yet written).
// The answer is kept per device and kernel: the launcher asks before every launch, and
// four runtime queries there would add host time to every timed run.
template <typename Kernel>
void require_programmatic_launch(Kernel kernel, const char* who) {
    static std::mutex mutex;  // launchers may be called from more than one host thread
    static std::set<std::pair<int, const void*>> supported;
    int device = 0, major = 0, minor = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    const std::pair<int, const void*> key{device, reinterpret_cast<const void*>(kernel)};
    const std::lock_guard lock(mutex);
    if (supported.count(key)) return;
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    if (major < 9) {
        throw std::runtime_error(std::string(who) + " needs Programmatic Dependent Launch, compute capability 9.0 or newer; this GPU is " +
                                 std::to_string(major) + "." + std::to_string(minor));
    }
    cudaFuncAttributes attributes{};
    CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
    if (attributes.ptxVersion < 90) {
        throw std::runtime_error(std::string(who) + " needs code compiled for sm_90 or newer; this build's kernel is sm_" +
                                 std::to_string(attributes.ptxVersion) +
                                 " (add 90 to CMAKE_CUDA_ARCHITECTURES)");
    }
    supported.insert(key);
}

// Launch `kernel` as the programmatic dependent of the kernel before it in `stream`.
template <typename... Params, typename... Args>
void launch_programmatic_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream,
                                   Args&&... args) {
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = 0;
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
    CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
    CUDA_CHECK_LAUNCH();
}
