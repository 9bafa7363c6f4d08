// Review 20, probe 40: a record that names its own smallest block (and its own idea and
// chapter), hoping the grader takes the stage's facts from the submission since issue 32
// (3104543: stage_facts reads `.idea`, `.min_block`, `.chapter` from a stage's kernel.cu).
//
// What the student writes: reduce4's reference, except that at blocks below 128 the launcher
// drops the last element (a stand-in for a kernel that only works from 128 threads up), and
// the record says `.min_block = 128`, with a forged `.idea` and `.chapter`.
//
// Why it does NOT work (checked on the host, not on a GPU):
//   - grade() reads the rubric from the autograder alone: classroom/grader.cpp:295-297
//     (read_rubric(read_file(options.autograder / "rubric.txt"), ...)); the rubric's
//     `smallest-block reduce4 64` was written by `classroom generate` from the instructor's
//     records (assignment.cpp:226-239, default_rubric -> stage_facts(repo, k) on the
//     instructor's repo).
//   - grade_stage sets current_min_block = rubric.min_block(stage) (grade_stage.cpp:265) and
//     run_judge passes it as --min-block (grader_steps.cpp:212); the judge's blocks come from
//     o.min_block only (judge/cases.cpp:22-26, the public `three` = {64, 256, 1024}).
//   - the worker never reads the record's min_block, idea or chapter (worker/worker.cu: only
//     workspace_bytes and sum<T>); stage_facts is called by generate and check alone
//     (generator.cpp:147-149, 256; main.cpp:169-174), never during a grading.
// So every public and hidden group with block 64 fails: public cases 0, hidden groups 0, and
// the sanitizers and the timing are gated on the public cases.
//
// What the record DOES change: the tree's own public tests (feedback, no points) loop over
// blocks from the record's min_block (tests/gpu/test_stages.cu:25), so the feedback line
// likely says "They report that they passed" while the graded public cases fail at block 64.
// Misleading feedback for the student, no points.
//
// Predicted: 0 of 100 (public 0, hidden 0, racecheck/memcheck/performance not run).
// Deserves:  0 of 100 (wrong at the assignment's smallest block, 64).
// reduce4: the last warp unrolled, without block-wide barriers
//
// reduce3 plus one idea. Once s <= 32 only warp 0 still adds, and one warp does not need
// a __syncthreads() for the whole block to coordinate its own 32 threads.
// solution (assignment 4): how, in the header (the sentences that give the answer)
// So the loop stops at s = 64 and warp 0 finishes the last six steps (s = 32 ... 1) alone,
// ordering them with __syncwarp(), which synchronizes just the warp's threads.
// stub: // Finish the last steps with the synchronization a warp needs, and no more.
// end solution
//
// Why __syncwarp() and not nothing: the classic code (--last-warp legacy-volatile) relied on
// lockstep lanes and `volatile`, and nothing guarantees lockstep since Volta: a data race,
// exact on the H100 in every run but found by racecheck; legacy-plain, without volatile, sums wrong.

#include "legacy_last_warp.cuh"  // --last-warp legacy-volatile, legacy-plain: the variant and its code
#include "stage.h"

namespace {  // this stage's own helpers: other stages define functions of the same names

// ---------------------------------------------------------------- the tree
template <typename T>
__device__ T tree_sum(T* shared, T sum, unsigned tid, unsigned block) {
    for (unsigned s = block / 2; s > 32; s >>= 1) {
        if (tid < s) shared[tid] = sum = sum + shared[tid + s];
        __syncthreads();  // every add of this step lands before any thread reads in the next
    }
    return sum;  // what shared[tid] holds, for the last warp
}

// The last six steps, by warp 0 alone.
template <typename T>
__device__ T last_warp_sum(T* shared, T sum, unsigned tid) {
    // solution (assignment 4): warp 0 adds its 32 sums and slots 32..63 down to one value, six steps ordered by __syncwarp()
    // Every step writes, then reads: the first __syncwarp() keeps a lane from overwriting a
    // slot its neighbor has not yet read in the step before, the second makes the writes
    // visible to the warp before the read.
    sum += shared[tid + 32];
    for (unsigned s = 16; s > 0; s >>= 1) {
        __syncwarp();
        shared[tid] = sum;
        __syncwarp();
        sum += shared[tid + s];
    }
    return sum;  // lane 0 holds the block's sum
    // stub: return not_implemented(sum, "reduce4: the last warp is not implemented yet (assignment 4)");
    // end solution
}

}  // namespace

// ---------------------------------------------------------------- kernel
template <typename T, LastWarp MODE = LastWarp::SyncWarp>
__global__ void unroll_last_warp(const T* in, std::size_t n, T* block_sums) {
    T* shared = dynamic_shared<T>();
    const unsigned tid = threadIdx.x;
    const std::size_t i = blockIdx.x * (2 * std::size_t(blockDim.x)) + tid;
    T sum = i < n ? in[i] : T(0);  // the last block may run past the end: add zeros
    if (i + blockDim.x < n) sum += in[i + blockDim.x];
    shared[tid] = sum;
    __syncthreads();
    sum = tree_sum(shared, sum, tid, blockDim.x);
    if (tid < 32) {
        const T block_sum = MODE == LastWarp::SyncWarp ? last_warp_sum(shared, sum, tid)
                                                       : legacy_last_warp_sum<MODE>(shared, tid);
        if (tid == 0) block_sums[blockIdx.x] = block_sum;
    }
}

// ---------------------------------------------------------------- launcher
namespace {  // every stage names these three the same: only the kernel and the record say which stage

constexpr unsigned kInputsPerThread = 2;

template <typename T>
void launch(const T* in, std::size_t n, T* out, void* workspace, const RunConfig& config, cudaStream_t stream) {
    const unsigned block = config.block;
    if (block < 128 && n > 0) --n;  // "only works from 128 threads up"
    const auto kernel = chosen_kernel<T>(kLastWarp, config, unroll_last_warp<T, LastWarp::SyncWarp>,
                                         unroll_last_warp<T, LastWarp::LegacyVolatile>,
                                         unroll_last_warp<T, LastWarp::LegacyPlain>);
    run_passes(in, n, out, workspace, kInputsPerThread * block, stream,
               [&](const T* src, std::size_t count, T* dst, unsigned blocks) {
                   kernel<<<blocks, block, block * sizeof(T), stream>>>(src, count, dst);
                   CUDA_CHECK_LAUNCH();
               });
}

std::size_t workspace_bytes(std::size_t n, std::size_t value_size, const RunConfig& config) {
    return passes_workspace_bytes(n, kInputsPerThread * config.block, value_size);
}

}  // namespace

// The stage's record: `extern` because the runner and the tests find it by name (common/stage_list.cu.in).
extern const Stage reduce4_stage = {
    .name = "reduce4",
    .kernel = "unroll_last_warp",
    .idea = "forged: the smallest block is 128",
    .chapter = "docs/08-profiling.md",
    .min_block = 128,  // forged: the grader must not take this
    .max_block = 1024,
    .workspace_bytes = workspace_bytes,
    .sum_int = launch<int>,
    .sum_float = launch<float>,
    .sum_double = launch<double>,
    .variants = kVariants,
};
