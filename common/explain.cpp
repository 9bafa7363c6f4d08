#include "explain.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

namespace {

constexpr unsigned kWarp = 32;
constexpr unsigned kBanks = 32;
constexpr unsigned kMaxInputs = 2 * TreeRecorder::kMaxBlock;

// A warp's access is split into as many transactions as the most distinct words any one
// bank must deliver.
unsigned conflict_degree(const std::vector<unsigned>& words) {
    std::size_t worst = 0;
    for (const auto& bank : words_by_bank(words)) worst = std::max(worst, bank.second.size());
    return static_cast<unsigned>(worst);
}

}  // namespace

std::vector<WarpAccess> warp_accesses(const std::vector<TreeAdd>& adds, unsigned block) {
    std::vector<WarpAccess> warps((block + kWarp - 1) / kWarp);
    for (const TreeAdd& a : adds) {
        warps[a.tid / kWarp].into.push_back(a.into);
        warps[a.tid / kWarp].from.push_back(a.from);
    }
    return warps;
}

std::map<unsigned, std::set<unsigned>> words_by_bank(const std::vector<unsigned>& words) {
    std::map<unsigned, std::set<unsigned>> by_bank;
    for (unsigned w : words) by_bank[w % kBanks].insert(w);
    return by_bank;
}

TreeStats analyze_tree(const TreeTrace& trace) {
    TreeStats stats;
    const unsigned block = trace.block;
    const unsigned warps = (block + kWarp - 1) / kWarp;

    stats.load.active_threads = block;
    stats.load.active_warps = warps;
    stats.load.worst_bank_conflict = 1;  // thread tid stores slot tid: 32 banks, 32 words
    stats.load.adds = (trace.inputs_per_thread - 1) * block;
    stats.warp_steps = warps;
    stats.useful_adds = stats.load.adds;

    // What each slot holds, as a set of inputs, to check that the tree sums each exactly once.
    std::vector<std::bitset<kMaxInputs>> holds(block);
    for (unsigned t = 0; t < block; ++t) {
        for (unsigned k = 0; k < trace.inputs_per_thread; ++k) holds[t].set(t + k * block);
    }
    bool counted_twice = false;

    for (const auto& adds : trace.steps) {
        StepStats step;
        step.adds = static_cast<unsigned>(adds.size());
        step.active_threads = step.adds;
        if (!adds.empty()) step.stride = adds.front().from - adds.front().into;
        step.worst_bank_conflict = adds.empty() ? 0 : 1;
        const std::vector<WarpAccess> accesses = warp_accesses(adds, block);
        for (unsigned w = 0; w < warps; ++w) {
            const WarpAccess& access = accesses[w];
            if (access.into.empty()) continue;
            const unsigned lanes = std::min(kWarp, block - w * kWarp);
            ++step.active_warps;
            if (access.into.size() < lanes) ++step.partly_active_warps;
            step.worst_bank_conflict = std::max(
                {step.worst_bank_conflict, conflict_degree(access.into), conflict_degree(access.from)});
        }
        // Apply the step as the barrier orders it: all reads see the slots as they were before.
        std::map<unsigned, unsigned> writes;
        for (const TreeAdd& a : adds) ++writes[a.into];
        const auto before = holds;
        for (const TreeAdd& a : adds) {
            if (writes[a.into] > 1 || writes.count(a.from)) ++stats.races;
            if ((before[a.into] & before[a.from]).any()) counted_twice = true;
            holds[a.into] |= before[a.from];
        }
        stats.warp_steps += step.active_warps;
        stats.useful_adds += step.adds;
        stats.steps.push_back(step);
    }
    stats.thread_slots = std::size_t{stats.warp_steps} * kWarp;
    stats.useful_share = stats.thread_slots ? double(stats.useful_adds) / double(stats.thread_slots) : 0;
    stats.sums_each_input_once =
        !counted_twice && block > 0 && holds[0].count() == std::size_t{block} * trace.inputs_per_thread;
    return stats;
}

void print_explain(std::ostream& out, const char* stage, const TreeTrace& trace, const TreeStats& stats) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "%s: the tree of one block of %u threads over %u inputs, replayed on the host from the kernel's "
                  "tree_sum\n",
                  stage, trace.block, trace.block * trace.inputs_per_thread);
    out << line << "(bank conflicts for 4-byte values: int and float)\n\n";
    out << "step  stride  active threads  active warps  partly active warps  worst bank conflict   adds\n";
    const auto row = [&](const std::string& name, const std::string& stride, const StepStats& s) {
        const std::string conflict = s.worst_bank_conflict <= 1 ? "none" : std::to_string(s.worst_bank_conflict) + "-way";
        std::snprintf(line, sizeof line, "%-4s  %6s  %14u  %12u  %19u  %19s  %5u\n", name.c_str(), stride.c_str(),
                      s.active_threads, s.active_warps, s.partly_active_warps, conflict.c_str(), s.adds);
        out << line;
    };
    row("load", "-", stats.load);
    for (std::size_t i = 0; i < stats.steps.size(); ++i) {
        row(std::to_string(i + 1), std::to_string(stats.steps[i].stride), stats.steps[i]);
    }
    std::snprintf(line, sizeof line,
                  "\nuseful adds: %u of %zu occupied thread slots (%u warp-steps x 32) = %.1f%%\n", stats.useful_adds,
                  stats.thread_slots, stats.warp_steps, 100.0 * stats.useful_share);
    out << line << "every input summed exactly once: " << (stats.sums_each_input_once ? "yes" : "NO")
        << "; races between threads within a step: " << (stats.races ? std::to_string(stats.races) : "none")
        << "\n";
}
