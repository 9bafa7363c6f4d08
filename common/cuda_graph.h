// A CUDA Graph captured from a stream: the same launches, recorded once and replayed.
//
// Each kernel launch in a stream costs the host a call into the driver and the GPU's front
// end a command to decode, a few microseconds either way: for a reduction of 2^20 values,
// about as long as its memory traffic. A graph records the launches once (stream capture),
// is instantiated once (the driver checks and lays out every launch then), and is then
// replayed with one cudaGraphLaunch: one call, and the GPU walks the prepared launches.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "cuda_check.h"

class CudaGraph {
public:
    // Records whatever `enqueue()` launches into `stream` (nothing runs), and instantiates it.
    template <typename Enqueue>
    CudaGraph(cudaStream_t stream, Enqueue&& enqueue) {
        // ThreadLocal: only this thread's unsafe calls (a synchronous cudaMalloc, say) end the
        // capture with an error; other threads' calls are theirs.
        CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        try {
            enqueue();
        } catch (...) {
            cudaGraph_t broken = nullptr;
            cudaStreamEndCapture(stream, &broken);  // leave the stream usable; the first error wins
            if (broken) cudaGraphDestroy(broken);
            throw;
        }
        CUDA_CHECK(cudaStreamEndCapture(stream, &graph_));
        CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
        CUDA_CHECK(cudaGraphUpload(exec_, stream));  // so that the first launch is not also the upload
    }
    ~CudaGraph() {
        if (exec_) cudaGraphExecDestroy(exec_);  // no check: a destructor must not throw
        if (graph_) cudaGraphDestroy(graph_);
    }
    CudaGraph(const CudaGraph&) = delete;
    CudaGraph& operator=(const CudaGraph&) = delete;

    void launch(cudaStream_t stream) const { CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

    // How many nodes (kernels, memsets) the capture recorded.
    std::size_t nodes() const {
        std::size_t count = 0;
        CUDA_CHECK(cudaGraphGetNodes(graph_, nullptr, &count));
        return count;
    }

private:
    cudaGraph_t graph_ = nullptr;
    cudaGraphExec_t exec_ = nullptr;
};
