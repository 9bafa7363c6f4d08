// The worker's recorder: every call the submission's object makes to launch a kernel, to
// set a memset going or to set a kernel's attribute lands here first (private_symbols.cmake
// renames the object's references to these names, and only the object's); a launch or a
// memset is made as asked and then written into the request's record (launch_record.h)
// with its result, an attribute written and then set. The replay repeats the record under
// compute-sanitizer (judge/replay.cu).
//
// Every call is recorded, in every worker and every request (the timed ones too), so that
// nothing in the process tells a launcher that this request is the one to be replayed.
#include <cuda.h>
#include <cuda_runtime.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "launch_record.h"
#include "recorder.h"

namespace recorder {

launch_record::Writer* target = nullptr;

namespace {

static_assert(sizeof(cudaLaunchAttribute) == launch_record::kAttributeBytes, "the record's attribute size");

struct Kernel {
    std::string name;               // "" where the driver could not name it
    std::vector<std::size_t> sizes;  // its parameters' sizes
};

// A kernel's name and parameter sizes, from the driver's calls for its kind of handle
// (a CUkernel's or a CUfunction's): an empty name where it could not name it.
template <typename Handle>
Kernel describe(Handle h, CUresult (*name_of)(const char**, Handle),
                CUresult (*parameter)(Handle, std::size_t, std::size_t*, std::size_t*)) {
    Kernel k;
    const char* name = nullptr;
    if (name_of(&name, h) != CUDA_SUCCESS || !name) return k;
    k.name = name;
    std::size_t offset = 0, size = 0;
    for (std::size_t i = 0; parameter(h, i, &offset, &size) == CUDA_SUCCESS; ++i) k.sizes.push_back(size);
    return k;
}

// Each asked of the driver once per kernel.
[[maybe_unused]] const Kernel& kernel_of_handle(CUkernel k) {
    static std::map<CUkernel, Kernel> known;
    auto [it, fresh] = known.try_emplace(k);
    if (fresh) it->second = describe(k, cuKernelGetName, cuKernelGetParamInfo);
    return it->second;
}

const Kernel& kernel_of_symbol(const void* func) {
    static std::map<const void*, Kernel> known;
    auto [it, fresh] = known.try_emplace(func);
    cudaFunction_t f = nullptr;
    if (fresh && cudaGetFuncBySymbol(&f, func) == cudaSuccess) {
        it->second = describe(reinterpret_cast<CUfunction>(f), cuFuncGetName, cuFuncGetParamInfo);
    }
    return it->second;
}

// Written after the call is made, with what it returned: the replay's must say the same.
cudaError_t record_launch(cudaError_t status, const Kernel& k, dim3 grid, dim3 block, std::size_t shared, void** args,
                          const cudaLaunchAttribute* attributes, unsigned attribute_count) {
    if (!target) return status;
    launch_record::Launch l;
    l.grid[0] = grid.x, l.grid[1] = grid.y, l.grid[2] = grid.z;
    l.block[0] = block.x, l.block[1] = block.y, l.block[2] = block.z;
    l.shared_bytes = static_cast<std::uint32_t>(shared);
    l.status = status;
    // More attributes than the record holds: a launch the replay refuses (no name).
    l.name = attribute_count <= launch_record::kMostAttributes ? k.name : std::string();
    l.attribute_count = std::min<unsigned>(attribute_count, launch_record::kMostAttributes);
    for (unsigned i = 0; i < l.attribute_count; ++i) std::memcpy(l.attributes[i], &attributes[i], sizeof attributes[i]);
    for (std::size_t i = 0; i < k.sizes.size(); ++i) {
        const char* p = static_cast<const char*>(args[i]);
        l.parameters.emplace_back(p, p + k.sizes[i]);
    }
    target->launch(l);
    return status;
}

cudaError_t record_memset(cudaError_t status, void* dst, int value, std::size_t count) {
    if (target) target->memset({reinterpret_cast<std::uint64_t>(dst), count, value, status});
    return status;
}

}  // namespace
}  // namespace recorder

using recorder::kernel_of_handle;
using recorder::kernel_of_symbol;
using recorder::record_launch;

extern "C" {

#if CUDART_VERSION >= 13000
// nvcc's launch stub (CUDA 13: a kernel handle), and its per-thread-stream twin. CUDA 12's
// stub calls cudaLaunchKernel, below.
cudaError_t grading_recorded___cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args,
                                                std::size_t shared, cudaStream_t stream) {
    return record_launch(__cudaLaunchKernel(kernel, grid, block, args, shared, stream),
                         kernel_of_handle(reinterpret_cast<CUkernel>(kernel)), grid, block, shared, args, nullptr, 0);
}
cudaError_t grading_recorded___cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void** args,
                                                     std::size_t shared, cudaStream_t stream) {
    return record_launch(__cudaLaunchKernel_ptsz(kernel, grid, block, args, shared, stream),
                         kernel_of_handle(reinterpret_cast<CUkernel>(kernel)), grid, block, shared, args, nullptr, 0);
}
#endif
// The runtime's launches by a kernel's host address (CUDA 12's stub, and a launcher's own calls).
cudaError_t grading_recorded_cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, std::size_t shared,
                                              cudaStream_t stream) {
    return record_launch(cudaLaunchKernel(func, grid, block, args, shared, stream), kernel_of_symbol(func), grid, block,
                         shared, args, nullptr, 0);
}
cudaError_t grading_recorded_cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args) {
    const cudaError_t status = cudaLaunchKernelExC(config, func, args);
    if (!config) return status;
    return record_launch(status, kernel_of_symbol(func), config->gridDim, config->blockDim, config->dynamicSmemBytes, args,
                         config->attrs, config->numAttrs);
}
cudaError_t grading_recorded_cudaLaunchCooperativeKernel(const void* func, dim3 grid, dim3 block, void** args,
                                                         std::size_t shared, cudaStream_t stream) {
    cudaLaunchAttribute cooperative{};
    cooperative.id = cudaLaunchAttributeCooperative;
    cooperative.val.cooperative = 1;
    return record_launch(cudaLaunchCooperativeKernel(func, grid, block, args, shared, stream), kernel_of_symbol(func), grid,
                         block, shared, args, &cooperative, 1);
}
cudaError_t grading_recorded_cudaMemsetAsync(void* dst, int value, std::size_t count, cudaStream_t stream) {
    return recorder::record_memset(cudaMemsetAsync(dst, value, count, stream), dst, value, count);
}
cudaError_t grading_recorded_cudaMemset(void* dst, int value, std::size_t count) {
    return recorder::record_memset(cudaMemset(dst, value, count), dst, value, count);
}
cudaError_t grading_recorded_cudaFuncSetAttribute(const void* func, cudaFuncAttribute attribute, int value) {
    const cudaError_t status = cudaFuncSetAttribute(func, attribute, value);
    // With its result, as a launch's: the replay's must agree (review 19: an attribute one
    // process accepts and the other refuses would change what the kernel sees unseen).
    if (recorder::target) recorder::target->func_attribute({kernel_of_symbol(func).name, attribute, value, status});
    return status;
}

}  // extern "C"
