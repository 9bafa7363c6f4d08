// The worker's GPU memory at addresses fixed in advance (CUDA's virtual memory API): the
// judge's inputs, the sums, the launcher's workspace and the private copy of an input.
//
// Why fixed: the sanitizer's run is a replay (replay.cu, in the judge's folder). The
// submission's launcher runs in a plain worker, which records every launch and memset it
// makes (launch_record.h); a program of the judge's repeats them under compute-sanitizer,
// with no host code of the submission's in the process. A kernel that could tell the two
// processes apart would run clean code only in the replay; were a buffer at another address
// there, a kernel given a pointer and a number made from it (the pointer XOR a constant)
// could tell, cheaply. Here both processes place every buffer at the same address, so a
// kernel sees the same pointers, the same bytes and the same launch in both.
//
// Host C++ with the driver API; included by worker.cu (in the tree being graded) and by
// replay.cu (in the judge's).
#pragma once

#include <cuda.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace gpu_window {

// Far above where the driver puts its own allocations, and those of compute-sanitizer: on the
// H100 the range was granted to every worker and, under compute-sanitizer, to every replay
// (docs/results/grading/gradescope_replay/); a process refused it cannot grade.
constexpr std::uint64_t kBase = 0x600000000000ull;
constexpr std::uint64_t kSlot = std::uint64_t{64} << 30;  // room for each buffer
enum Slot : int { kInput = 0, kResults = 4, kWorkspace = 5, kCopy = 6, kSlots = 7 };  // the input may fill 4 slots
constexpr std::uint64_t kEnd = kBase + kSlot * kSlots;  // one past the window

inline void check(CUresult r, const char* what) {
    if (r != CUDA_SUCCESS) {
        const char* name = nullptr;
        cuGetErrorName(r, &name);
        throw std::runtime_error(std::string(what) + " failed: " + (name ? name : "unknown error"));
    }
}

class Window {
public:
    // Reserves the whole window at kBase; throws when the driver gives another address.
    explicit Window(int device) : device_(device) {
        CUmemAllocationProp prop = properties();
        check(cuMemGetAllocationGranularity(&granule_, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
              "cuMemGetAllocationGranularity");
        CUdeviceptr got = 0;
        check(cuMemAddressReserve(&got, kEnd - kBase, 0, kBase, 0), "cuMemAddressReserve");
        if (got != kBase) {
            cuMemAddressFree(got, kEnd - kBase);
            throw std::runtime_error("the driver did not give the grading window its fixed address");
        }
    }
    ~Window() {
        for (int s = 0; s < kSlots; ++s) unmap(s);
        cuMemAddressFree(kBase, kEnd - kBase);
    }
    Window(const Window&) = delete;
    Window& operator=(const Window&) = delete;

    // The judge's input memory (a POSIX file descriptor of its VMM allocation), at kBase:
    // read-only where the driver allows it. Returns how it is mapped.
    const char* map_input(int fd, std::size_t bytes) {
        CUmemGenericAllocationHandle handle{};
        check(cuMemImportFromShareableHandle(&handle, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)),
                                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
              "cuMemImportFromShareableHandle");
        if (bytes > 4 * kSlot) throw std::runtime_error("the shared input is larger than the window holds");
        check(cuMemMap(kBase, bytes, 0, handle, 0), "cuMemMap");
        check(cuMemRelease(handle), "cuMemRelease");
        mapped_[kInput] = bytes;
        mapped_at_[kInput] = kBase;
        CUmemAccessDesc access = access_for(CU_MEM_ACCESS_FLAGS_PROT_READ);
        if (cuMemSetAccess(kBase, bytes, &access, 1) == CUDA_SUCCESS) return "read-only";
        access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        check(cuMemSetAccess(kBase, bytes, &access, 1), "cuMemSetAccess");
        return "read-write (the driver refused a read-only mapping)";
    }
    std::size_t input_bytes() const { return mapped_[kInput]; }

    // `bytes` of memory at the slot's fixed place, mapped anew when it needs more (then
    // zeroed: a launcher's workspace starts at zero) and kept otherwise. A private copy of
    // an input ends at a fixed address, the end of its mapping, so that a read past its last
    // byte leaves the mapping: compute-sanitizer's memcheck reports it (its view of memory
    // mapped this way is the granule, 2 MiB, so only an end that is the mapping's is seen;
    // the copy's start is then wherever its length puts it, an element-aligned address like
    // the judge's offset cases). `guard` maps one more granule past that end, so that the
    // same read returns bytes rather than faulting, as past a cudaMalloc'd buffer: the worker
    // and the racecheck replay have it. The copy's address is the same either way.
    void* ensure(Slot slot, std::size_t bytes, bool guard = false) {
        if (bytes > kSlot / 2) throw std::runtime_error("a buffer larger than the grading window's slot");
        const CUdeviceptr begin = slot == kCopy ? copy_end() - bytes : start(slot);
        const CUdeviceptr at = begin / granule_ * granule_;
        const std::size_t wanted = slot == kCopy ? copy_end() + (guard ? granule_ : 0) - at : round_up(bytes);
        if (wanted > mapped_[slot] || (slot == kCopy && (at != mapped_at_[slot] || wanted != mapped_[slot]))) {
            unmap(slot);
            CUmemAllocationProp prop = properties();
            CUmemGenericAllocationHandle handle{};
            check(cuMemCreate(&handle, wanted, &prop, 0), "cuMemCreate");
            check(cuMemMap(at, wanted, 0, handle, 0), "cuMemMap");
            check(cuMemRelease(handle), "cuMemRelease");
            const CUmemAccessDesc access = access_for(CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
            check(cuMemSetAccess(at, wanted, &access, 1), "cuMemSetAccess");
            check(cuMemsetD8(at, 0, wanted), "cuMemsetD8");
            mapped_[slot] = wanted;
            mapped_at_[slot] = at;
        }
        return reinterpret_cast<void*>(begin);
    }
    static CUdeviceptr start(int slot) { return kBase + kSlot * static_cast<std::uint64_t>(slot); }

private:
    CUmemAllocationProp properties() const {
        CUmemAllocationProp prop{};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = device_;
        return prop;
    }
    CUmemAccessDesc access_for(CUmemAccess_flags flags) const {
        CUmemAccessDesc access{};
        access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        access.location.id = device_;
        access.flags = flags;
        return access;
    }
    std::size_t round_up(std::size_t bytes) const { return (std::max<std::size_t>(bytes, 1) + granule_ - 1) / granule_ * granule_; }
    // A granule short of the slot's end: room for the guard.
    CUdeviceptr copy_end() const { return start(kCopy) + kSlot - granule_; }
    void unmap(int slot) {
        if (!mapped_[slot]) return;
        cuCtxSynchronize();  // nothing may still use it
        cuMemUnmap(mapped_at_[slot], mapped_[slot]);
        mapped_[slot] = 0;
    }

    int device_;
    std::size_t granule_ = 0;
    std::size_t mapped_[kSlots] = {};
    CUdeviceptr mapped_at_[kSlots] = {};
};

}  // namespace gpu_window
