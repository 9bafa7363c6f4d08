// grade_replay: the process the sanitizers watch. It runs no host code of the submission's.
//
// The submission's worker records what its launcher asks of the GPU (worker/recorder.cu):
// each launch (kernel name, grid, block, shared memory, attributes, parameter bytes), each
// memset, and the worker's own copies and buffers. This program loads the kernels from the
// worker's executable (its .nv_fatbin section: device code only, no host code of anyone's
// runs from it), maps the judge's inputs and the worker's buffers at the same addresses the
// worker had them (worker/gpu_window.h), and repeats the records in order under
// compute-sanitizer. Its kernels see what they saw in the worker: the same pointers, bytes
// and launches. The judge checks the sums it sends back, as it checked the worker's.
//
//
//   grade_replay --device-code WORKER [--copy-guard] --socket FD   (started by the judge)
// --copy-guard: a granule mapped past each private copy, as in the worker (racecheck);
// without it a read past a copy's end leaves the mapping, which memcheck reports.
#include <cuda.h>
#include <cuda_runtime.h>
#include <elf.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu_window.h"
#include "launch_record.h"
#include "protocol.h"

namespace {

using namespace grading_wire;
using gpu_window::check;

static_assert(sizeof(CUlaunchAttribute) == launch_record::kAttributeBytes, "the record's attribute size");

void check_runtime(cudaError_t r, const char* what) {
    if (r != cudaSuccess) throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorString(r));
}

// The bytes of `path`'s section `name` (an ELF64 file), every bound checked.
std::vector<char> elf_section(const std::string& path, const char* name) {
    std::ifstream in(path, std::ios::binary);
    const std::vector<char> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto within = [&](std::uint64_t offset, std::uint64_t bytes) { return offset <= file.size() && bytes <= file.size() - offset; };
    Elf64_Ehdr header{};
    if (!within(0, sizeof header)) throw std::runtime_error("the worker is not an ELF file");
    std::memcpy(&header, file.data(), sizeof header);
    if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
        header.e_shentsize != sizeof(Elf64_Shdr) || !within(header.e_shoff, std::uint64_t{header.e_shnum} * sizeof(Elf64_Shdr)) ||
        header.e_shstrndx >= header.e_shnum) {
        throw std::runtime_error("the worker is not an ELF64 file this program reads");
    }
    auto section = [&](std::size_t i) {
        Elf64_Shdr s{};
        std::memcpy(&s, file.data() + header.e_shoff + i * sizeof s, sizeof s);
        return s;
    };
    const Elf64_Shdr names = section(header.e_shstrndx);
    for (std::size_t i = 0; i < header.e_shnum; ++i) {
        const Elf64_Shdr s = section(i);
        const std::size_t length = std::strlen(name) + 1;
        if (s.sh_name >= names.sh_size || !within(names.sh_offset + s.sh_name, length) ||
            std::memcmp(file.data() + names.sh_offset + s.sh_name, name, length) != 0) {
            continue;
        }
        if (!within(s.sh_offset, s.sh_size)) break;
        return std::vector<char>(file.begin() + static_cast<std::ptrdiff_t>(s.sh_offset),
                                 file.begin() + static_cast<std::ptrdiff_t>(s.sh_offset + s.sh_size));
    }
    throw std::runtime_error(std::string("the worker has no ") + name + " section");
}

// The worker's device code: each fatbinary of its .nv_fatbin section (one per translation
// unit with kernels) loaded as a library, and its kernels found by their mangled names.
class DeviceCode {
public:
    DeviceCode(const std::string& worker, int device) : device_(device), section_(elf_section(worker, ".nv_fatbin")) {
        constexpr std::uint32_t kFatbinMagic = 0xBA55ED50;
        std::size_t at = 0;
        while (at + 16 <= section_.size()) {
            std::uint32_t magic = 0;
            std::uint16_t header_bytes = 0;
            std::uint64_t fat_bytes = 0;
            std::memcpy(&magic, &section_[at], 4);
            if (magic == 0) {  // padding between two objects' sections
                at += 8;
                continue;
            }
            std::memcpy(&header_bytes, &section_[at + 6], 2);
            std::memcpy(&fat_bytes, &section_[at + 8], 8);
            if (magic != kFatbinMagic || header_bytes < 16 || fat_bytes > section_.size() - at - header_bytes) {
                throw std::runtime_error("the worker's .nv_fatbin section is not a list of fatbinaries");
            }
            CUlibrary library = nullptr;
            check(cuLibraryLoadData(&library, &section_[at], nullptr, nullptr, 0, nullptr, nullptr, 0), "cuLibraryLoadData");
            libraries_.push_back(library);
            // Its kernels by name, listed rather than looked up: a failed lookup is an API
            // error, which the sanitizer would report as the submission's.
            unsigned count = 0;
            check(cuLibraryGetKernelCount(&count, library), "cuLibraryGetKernelCount");
            std::vector<CUkernel> kernels(count);
            if (count) check(cuLibraryEnumerateKernels(kernels.data(), count, library), "cuLibraryEnumerateKernels");
            for (CUkernel k : kernels) {
                const char* name = nullptr;
                check(cuKernelGetName(&name, k), "cuKernelGetName");
                const auto [it, fresh] = kernels_.try_emplace(name, k);
                if (!fresh) it->second = nullptr;  // named twice: no launch of it can be replayed
            }
            at += (header_bytes + fat_bytes + 7) / 8 * 8;
        }
        if (libraries_.empty()) throw std::runtime_error("the worker holds no device code");
    }
    // The kernel of that name: in exactly one library, or std::runtime_error.
    CUkernel kernel(const std::string& name) const {
        if (name.empty()) {
            throw std::runtime_error("the worker could not record one of the launcher's launches (a kernel the driver "
                                     "could not name, or more than 8 launch attributes)");
        }
        const auto found = kernels_.find(name);
        if (found == kernels_.end()) throw std::runtime_error("the worker's device code has no kernel named " + name);
        if (!found->second) throw std::runtime_error("two kernels of the worker are named " + name);
        return found->second;
    }
    int device() const { return device_; }

private:
    int device_;
    std::vector<char> section_;
    std::vector<CUlibrary> libraries_;
    std::map<std::string, CUkernel> kernels_;
};

void launch(const DeviceCode& code, const launch_record::Launch& l) {
    const CUkernel k = code.kernel(l.name);
    // Each recorded parameter checked against the kernel's own (a record that names more
    // than the kernel has gets an API error, its own doing), and entries past the record's
    // pointing to zeros: the driver reads as many as the kernel has, whatever the record says.
    static const std::vector<char> zeros(launch_record::kMostParameterBytes);
    std::vector<void*> arguments(l.parameters.size() + launch_record::kMostParameterBytes / 4,
                                 const_cast<char*>(zeros.data()));
    for (std::size_t i = 0; i < l.parameters.size(); ++i) {
        std::size_t offset = 0, size = 0;
        if (cuKernelGetParamInfo(k, i, &offset, &size) != CUDA_SUCCESS || size != l.parameters[i].size()) {
            throw std::runtime_error("a launch of " + l.name + " whose parameters do not match the kernel's");
        }
        arguments[i] = const_cast<char*>(l.parameters[i].data());
    }
    CUlaunchAttribute attributes[launch_record::kMostAttributes];
    std::memcpy(attributes, l.attributes, l.attribute_count * sizeof(CUlaunchAttribute));
    CUlaunchConfig config{};
    config.gridDimX = l.grid[0], config.gridDimY = l.grid[1], config.gridDimZ = l.grid[2];
    config.blockDimX = l.block[0], config.blockDimY = l.block[1], config.blockDimZ = l.block[2];
    config.sharedMemBytes = l.shared_bytes;
    config.hStream = nullptr;  // the worker's stream: the legacy default stream
    config.attrs = attributes;
    config.numAttrs = l.attribute_count;
    // Made as the worker's was, refused as the worker's was (a failed launch is still made,
    // so that memcheck reports it as it would have in the worker): any other outcome means
    // the two processes differ, and the replay stops (review 18).
    const CUresult made = cuLaunchKernelEx(&config, reinterpret_cast<CUfunction>(k), arguments.data(), nullptr);
    if ((made == CUDA_SUCCESS) != (l.status == 0)) {
        throw std::runtime_error("a launch of " + l.name + (l.status == 0 ? " that the worker made failed here"
                                                                          : " that failed in the worker was made here"));
    }
}

// One record, repeated in order.
void replay(const DeviceCode& code, gpu_window::Window& window, bool copy_guard, const std::vector<char>& record) {
    using launch_record::OpKind;
    launch_record::read(record, [&](OpKind kind, const void* op) {
        switch (kind) {
            case OpKind::Launch: launch(code, *static_cast<const launch_record::Launch*>(op)); break;
            case OpKind::Memset: {
                const auto& m = *static_cast<const launch_record::Memset*>(op);
                if (m.dst < gpu_window::kBase || m.dst > gpu_window::kEnd || m.bytes > gpu_window::kEnd - m.dst) {
                    throw std::runtime_error("a memset outside the worker's buffers");
                }
                const cudaError_t made = cudaMemsetAsync(reinterpret_cast<void*>(m.dst), m.value, m.bytes);
                if ((made == cudaSuccess) != (m.status == 0)) throw std::runtime_error("a memset that went otherwise in the worker");
                break;
            }
            case OpKind::Copy: {
                const auto& c = *static_cast<const launch_record::Copy*>(op);
                check_runtime(cudaMemcpyAsync(reinterpret_cast<void*>(c.dst), reinterpret_cast<const void*>(c.src), c.bytes,
                                              cudaMemcpyDeviceToDevice),
                              "the worker's copy of an input");
                break;
            }
            case OpKind::Ensure: {
                const auto& e = *static_cast<const launch_record::Ensure*>(op);
                const auto slot = static_cast<gpu_window::Slot>(e.slot);
                if (slot != gpu_window::kResults && slot != gpu_window::kWorkspace && slot != gpu_window::kCopy) {
                    throw std::runtime_error("a malformed record (a buffer slot)");
                }
                window.ensure(slot, e.bytes, slot == gpu_window::kCopy && copy_guard);
                break;
            }
            case OpKind::FuncAttribute: {
                const auto& f = *static_cast<const launch_record::FuncAttribute*>(op);
                const CUresult made = cuKernelSetAttribute(static_cast<CUfunction_attribute>(f.attribute), f.value,
                                                           code.kernel(f.name), code.device());
                if ((made == CUDA_SUCCESS) != (f.status == 0)) {
                    throw std::runtime_error("an attribute of " + f.name + " that went otherwise in the worker");
                }
                break;
            }
        }
    });
}

template <typename T>
std::vector<double> sums(std::size_t count) {
    std::vector<T> host(count);
    check_runtime(cudaMemcpy(host.data(), reinterpret_cast<const void*>(gpu_window::Window::start(gpu_window::kResults)),
                             count * sizeof(T), cudaMemcpyDeviceToHost),
                  "reading the sums back");
    return std::vector<double>(host.begin(), host.end());
}

}  // namespace

int main(int argc, char** argv) {
    std::string worker;
    bool copy_guard = false;
    int socket = -1;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--device-code" && i + 1 < argc) worker = argv[++i];
        else if (a == "--copy-guard") copy_guard = true;
        else if (a == "--socket" && i + 1 < argc) socket = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "usage: %s --device-code WORKER [--copy-guard] --socket FD (started by the judge)\n", argv[0]);
            return 2;
        }
    }
    if (worker.empty() || socket < 0) return 2;
    Setup setup;
    int memory_fd = -1;
    if (!recv_with_fd(socket, &setup, sizeof setup, memory_fd, 60000) || setup.magic != kMagic || setup.version != kVersion) {
        std::fprintf(stderr, "replay: no setup from the judge\n");
        return 3;
    }
    Ready ready;
    std::unique_ptr<gpu_window::Window> window;
    std::unique_ptr<DeviceCode> code;
    try {
        const int device = static_cast<int>(setup.device);
        check_runtime(cudaSetDevice(device), "cudaSetDevice");
        check_runtime(cudaFree(nullptr), "starting CUDA");
        window = std::make_unique<gpu_window::Window>(device);
        copy_text(ready.text, window->map_input(memory_fd, setup.bytes));
        code = std::make_unique<DeviceCode>(worker, device);
    } catch (const std::exception& e) {
        ready.kind = Kind::Failed;
        copy_text(ready.text, e.what());
    }
    close(memory_fd);
    if (!send_all(socket, &ready, sizeof ready) || ready.kind != Kind::Ready) return 3;
    for (;;) {
        Request q;
        if (!recv_all(socket, &q, sizeof q, -1) || q.magic != kMagic || q.op != kReplay ||
            q.record_bytes > launch_record::kMostRecordBytes) {
            return 0;  // quit, or the judge is gone
        }
        std::vector<char> record(q.record_bytes);
        if (!recv_all(socket, record.data(), record.size(), 60000)) return 0;
        Reply reply;
        std::vector<double> values;
        try {
            if (!well_formed(q)) throw std::runtime_error("malformed request");
            replay(*code, *window, copy_guard, record);
            check_runtime(cudaDeviceSynchronize(), "the replayed launches");
            const std::size_t count = q.batch * q.repeats;
            values = q.type == ValueKind::Int32 ? sums<int>(count) : q.type == ValueKind::Float32 ? sums<float>(count) : sums<double>(count);
            reply.ok = 1;
        } catch (const std::exception& e) {
            copy_text(reply.text, e.what());
        }
        reply.count = static_cast<std::uint32_t>(values.size());
        if (!send_all(socket, &reply, sizeof reply) || !send_all(socket, values.data(), values.size() * sizeof(double))) return 0;
    }
}
