// --explain: replay a block's shared-memory tree on the host and count what the hardware
// sees at each step: active threads, active and partly active warps, bank conflicts, and the
// share of occupied thread slots that do useful adds.
//
// The replay runs the stage's own tree function (tree_sum in reduce0 ... reduce3), the one
// the kernel runs, with a TreeRecorder in place of shared memory. So the table, and the
// diagrams drawn from the same trace (tools/draw_trees.cpp), cannot drift from the kernel.
#pragma once

#include <bitset>
#include <cstddef>
#include <map>
#include <ostream>
#include <set>
#include <vector>

#ifdef __CUDACC__
#define REDUCTION_HOST_DEVICE __host__ __device__
#else
#define REDUCTION_HOST_DEVICE
#endif

// One `shared[into] += shared[from]` done by thread `tid`.
struct TreeAdd {
    unsigned tid, into, from;
};

struct TreeTrace {
    unsigned block = 0;
    unsigned inputs_per_thread = 1;           // 2 when the first add happens during the load (reduce3)
    std::vector<std::vector<TreeAdd>> steps;  // the adds between two barriers, in thread order
};

// Stands in for shared memory and for the barrier while a tree function runs on the host
// for one thread. It records the adds the thread makes in one chosen step.
class TreeRecorder {
public:
    static constexpr unsigned kMaxBlock = 1024;

    struct Register;
    struct Slot {
        TreeRecorder* recorder;
        unsigned index;
        REDUCTION_HOST_DEVICE Slot& operator+=(const Slot& from) {
            recorder->record(index, from.index);
            return *this;
        }
        // Storing a thread's running sum back into its own slot: the add was recorded already.
        REDUCTION_HOST_DEVICE Slot& operator=(const Register&) { return *this; }
    };
    REDUCTION_HOST_DEVICE Slot operator[](unsigned index) { return Slot{this, index}; }

    // A thread's running sum kept in a register (reduce3 on). It holds what the thread's own
    // slot holds, so `sum = sum + shared[from]` records the same add as
    // `shared[tid] += shared[from]`.
    struct Register {
        TreeRecorder* recorder;
        unsigned home;
        REDUCTION_HOST_DEVICE Register operator+(const Slot& from) const {
            recorder->record(home, from.index);
            return *this;
        }
    };
    REDUCTION_HOST_DEVICE Register running_sum(unsigned tid) { return Register{this, tid}; }

    // The barrier: every call ends one step.
    struct Barrier {
        TreeRecorder* recorder;
        REDUCTION_HOST_DEVICE void operator()() const { ++recorder->barriers_; }
    };

    // Replay support: run thread `tid`, keeping only what it does in step `step`.
    void start(unsigned tid, unsigned step) {
        tid_ = tid;
        step_ = step;
        barriers_ = 0;
    }
    Barrier barrier() { return Barrier{this}; }
    unsigned barriers() const { return barriers_; }
    void take_adds(std::vector<TreeAdd>& out) {
        out.insert(out.end(), adds_, adds_ + count_);
        count_ = 0;
    }

private:
    REDUCTION_HOST_DEVICE void record(unsigned into, unsigned from) {
        if (barriers_ == step_ && count_ < kMaxBlock * 2) adds_[count_++] = TreeAdd{tid_, into, from};
    }
    unsigned tid_ = 0, step_ = 0, barriers_ = 0, count_ = 0;
    TreeAdd adds_[kMaxBlock * 2];
};

// Run `tree(shared, tid, block, sync)` for every thread of a block, one step at a time, the
// way the barrier orders them on the GPU.
template <typename Tree>
TreeTrace replay_tree(unsigned block, unsigned inputs_per_thread, Tree&& tree) {
    TreeTrace trace{block, inputs_per_thread, {}};
    std::vector<TreeRecorder> recorder(1);  // on the heap: it holds a few kilobytes
    for (unsigned step = 0;; ++step) {
        std::vector<TreeAdd> adds;
        unsigned barriers = 0;
        for (unsigned tid = 0; tid < block; ++tid) {
            recorder[0].start(tid, step);
            tree(recorder[0], tid, block, recorder[0].barrier());
            recorder[0].take_adds(adds);
            barriers = recorder[0].barriers();
        }
        if (step >= barriers && adds.empty()) break;  // past the last barrier and nothing left to do
        trace.steps.push_back(std::move(adds));
    }
    while (!trace.steps.empty() && trace.steps.back().empty()) trace.steps.pop_back();
    return trace;
}

// ---------------------------------------------------------------- statistics

struct StepStats {
    unsigned stride = 0;               // from - into of the first add: the tree's s at this step
    unsigned active_threads = 0;       // threads that add
    unsigned active_warps = 0;         // warps with at least one active thread: they occupy the SM
    unsigned partly_active_warps = 0;  // warps with some, but not all, of their 32 threads adding: the warp
                                       // issues the step for all 32 lanes, the idle ones masked off
    unsigned worst_bank_conflict = 0;  // most distinct 4-byte words one warp access hits in one bank
    unsigned adds = 0;
};

struct TreeStats {
    StepStats load;                   // the load into shared memory (adds when inputs_per_thread is 2)
    std::vector<StepStats> steps;
    unsigned warp_steps = 0;          // sum of active warps over the load and every step
    std::size_t thread_slots = 0;     // warp_steps x 32
    unsigned useful_adds = 0;         // block x inputs_per_thread - 1 for a correct tree
    double useful_share = 0;          // useful_adds / thread_slots
    bool sums_each_input_once = false;  // slot 0 ends with every input, none twice
    unsigned races = 0;               // adds that read or write a slot another thread writes in the same step
};

TreeStats analyze_tree(const TreeTrace& trace);

// The slots the adds of one warp write (`into`) and read (`from`) at one step; one entry
// per warp of the block, empty for a warp with no active thread.
struct WarpAccess {
    std::vector<unsigned> into, from;
};
std::vector<WarpAccess> warp_accesses(const std::vector<TreeAdd>& adds, unsigned block);

// One warp access's 4-byte words grouped by bank (word mod 32). A bank holding k > 1
// distinct words serves them one after another: a k-way bank conflict. (The same word
// for several lanes is a broadcast, one word.)
std::map<unsigned, std::set<unsigned>> words_by_bank(const std::vector<unsigned>& words);
void print_explain(std::ostream& out, const char* stage, const TreeTrace& trace, const TreeStats& stats);
