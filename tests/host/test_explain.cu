// --explain: the replay of reduce0 ... reduce3's trees against counts worked by hand, and
// the replay's own checks (every input summed once, no races) on broken trees. The counts
// for a stage are an assignment's answer, so a classroom tree keeps only those of the
// stages it hands out complete (the solution markers, docs/classroom.md). Last, a replay
// of reduce4's legacy-plain last warp in the order its SASS runs it.
#include <gtest/gtest.h>

#include <sstream>
#include <vector>

#include "explain.h"
#include "input.h"
#include "stages.h"

// The stages whose trees these tests replay, each defined in its kernel.cu.
extern const Stage reduce1_stage;
extern const Stage reduce2_stage;
extern const Stage reduce3_stage;

namespace {

std::vector<unsigned> column(const TreeStats& stats, unsigned StepStats::*member) {
    std::vector<unsigned> values;
    for (const StepStats& s : stats.steps) values.push_back(s.*member);
    return values;
}

// solution (assignment 3): the counts of reduce3's tree
TEST(Explain, PmppConvergentTreeOver1024Inputs) {
    // PMPP's convergent kernel: 512 threads over 1024 inputs, the first add with the
    // load. 16 warps in the first step, then 8, 4, 2 and six steps of one warp: 36
    // warp-steps, 1152 thread slots, 1023 useful adds: about 89%.
    const TreeTrace trace = reduce3_stage.trace(512);
    const TreeStats stats = analyze_tree(trace);
    EXPECT_EQ(stats.warp_steps, 36u);
    EXPECT_EQ(stats.thread_slots, 1152u);
    EXPECT_EQ(stats.useful_adds, 1023u);
    EXPECT_NEAR(stats.useful_share, 1023.0 / 1152.0, 1e-12);
    EXPECT_EQ(stats.load.adds, 512u);
    EXPECT_EQ(column(stats, &StepStats::active_warps), (std::vector<unsigned>{8, 4, 2, 1, 1, 1, 1, 1, 1}));
    EXPECT_TRUE(stats.sums_each_input_once);
    EXPECT_EQ(stats.races, 0u);
}

TEST(Explain, Reduce3PutsTheIdleHalfToWork) {
    const TreeStats stats = analyze_tree(reduce3_stage.trace(256));
    EXPECT_EQ(stats.load.adds, 256u);
    EXPECT_EQ(stats.useful_adds, 511u);
    EXPECT_NEAR(stats.useful_share, 511.0 / 640.0, 1e-12);
}
// end solution

TEST(Explain, Reduce0DivergesInEveryWarpItTouches) {
    const TreeStats stats = analyze_tree(reduce0_stage.trace(256));
    EXPECT_EQ(column(stats, &StepStats::stride), (std::vector<unsigned>{1, 2, 4, 8, 16, 32, 64, 128}));
    EXPECT_EQ(column(stats, &StepStats::active_threads), (std::vector<unsigned>{128, 64, 32, 16, 8, 4, 2, 1}));
    EXPECT_EQ(column(stats, &StepStats::active_warps), (std::vector<unsigned>{8, 8, 8, 8, 8, 4, 2, 1}));
    EXPECT_EQ(column(stats, &StepStats::partly_active_warps), (std::vector<unsigned>{8, 8, 8, 8, 8, 4, 2, 1}));
    EXPECT_EQ(column(stats, &StepStats::worst_bank_conflict), (std::vector<unsigned>{1, 1, 1, 1, 1, 1, 1, 1}));
    EXPECT_EQ(stats.warp_steps, 8u + 47u);  // the load, then the tree
    EXPECT_EQ(stats.useful_adds, 255u);
}

// solution (assignment 1): the counts of reduce1's tree
TEST(Explain, Reduce1ConvergesButConflictsOnBanks) {
    const TreeStats stats = analyze_tree(reduce1_stage.trace(256));
    EXPECT_EQ(column(stats, &StepStats::active_threads), (std::vector<unsigned>{128, 64, 32, 16, 8, 4, 2, 1}));
    EXPECT_EQ(column(stats, &StepStats::active_warps), (std::vector<unsigned>{4, 2, 1, 1, 1, 1, 1, 1}));
    EXPECT_EQ(column(stats, &StepStats::partly_active_warps), (std::vector<unsigned>{0, 0, 0, 1, 1, 1, 1, 1}));
    // Thread tid touches word 2 s tid: the active lanes' words, 2s apart, fall into only
    // 32 / 2s banks (at least one), so each bank serves (active lanes) / (banks) words.
    EXPECT_EQ(column(stats, &StepStats::worst_bank_conflict), (std::vector<unsigned>{2, 4, 8, 8, 8, 4, 2, 1}));
    EXPECT_EQ(stats.warp_steps, 8u + 12u);
}
// end solution

// solution (assignment 2): the counts of reduce2's tree
TEST(Explain, Reduce2HasNoBankConflicts) {
    const TreeStats stats = analyze_tree(reduce2_stage.trace(256));
    EXPECT_EQ(column(stats, &StepStats::stride), (std::vector<unsigned>{128, 64, 32, 16, 8, 4, 2, 1}));
    EXPECT_EQ(column(stats, &StepStats::worst_bank_conflict), (std::vector<unsigned>{1, 1, 1, 1, 1, 1, 1, 1}));
    EXPECT_EQ(column(stats, &StepStats::active_warps), (std::vector<unsigned>{4, 2, 1, 1, 1, 1, 1, 1}));
    EXPECT_NEAR(stats.useful_share, 255.0 / 640.0, 1e-12);
}
// end solution

// Every stage with a tree (reduce0 ... reduce3, those this tree has): a public test of
// a student's tree too, since it says only that the tree must be right.
TEST(Explain, EveryTreeSumsEveryInputOnceWithoutRaces) {
    int trees = 0;
    for (const Stage* stage : all_stages()) {
        if (!stage->trace) continue;
        ++trees;
        for (unsigned block = 1; block <= 1024; block *= 2) {
            const TreeTrace trace = stage->trace(block);
            const TreeStats stats = analyze_tree(trace);
            EXPECT_TRUE(stats.sums_each_input_once) << stage->name << " block " << block;
            EXPECT_EQ(stats.races, 0u) << stage->name << " block " << block;
            EXPECT_EQ(stats.useful_adds, block * trace.inputs_per_thread - 1) << stage->name;
        }
    }
    EXPECT_GE(trees, 1);
}

TEST(Explain, BrokenTreesAreCaught) {
    // Stops one step early: slot 0 misses half the inputs.
    const TreeTrace short_tree = replay_tree(64, 1, [](auto& shared, unsigned tid, unsigned block, auto sync) {
        for (unsigned s = block / 4; s > 0; s >>= 1) {
            if (tid < s) shared[tid] += shared[tid + s];
            sync();
        }
    });
    EXPECT_FALSE(analyze_tree(short_tree).sums_each_input_once);
    // Adds a slot into itself: counts it twice.
    const TreeTrace doubled = replay_tree(64, 1, [](auto& shared, unsigned tid, unsigned, auto sync) {
        if (tid == 0) shared[0] += shared[0];
        sync();
    });
    EXPECT_FALSE(analyze_tree(doubled).sums_each_input_once);
    // Every thread adds into slot 0 in the same step: a race.
    const TreeTrace racy = replay_tree(64, 1, [](auto& shared, unsigned tid, unsigned, auto sync) {
        if (tid > 0) shared[0] += shared[tid];
        sync();
    });
    EXPECT_GT(analyze_tree(racy).races, 0u);
}

// reduce4 --last-warp legacy-plain as sm_90 SASS runs it (docs/results/
// sass_reduce4_legacy_plain.txt): each lane of the last warp loads its own slot and the six
// partner slots before any lane stores, so lane 0 returns slots 0, 32, 16, 8, 4, 2 and 1 of
// the block's 64 partial sums. Over the passes of n = 2^22 int (block 256: 8,192 blocks,
// then 16, then 1) that gives the wrong sum every run on the H100 got
// (docs/results/legacy.txt: got -148, expected 3392; docs/04-sync-removal.md).
TEST(Legacy, PlainLastWarpAsCompiledGivesTheMeasuredSum) {
    const std::size_t n = std::size_t{1} << 22;
    const unsigned block = 256, per_block = 2 * block;  // reduce4 adds two inputs per thread
    const int magnitude = value_magnitude(n, ValueType::Int32);
    std::vector<long long> values(n);
    long long exact = 0;
    for (std::size_t i = 0; i < n; ++i) exact += values[i] = input_value(2026, i, magnitude);  // the default seed
    ASSERT_EQ(exact, 3392);
    while (values.size() > 1) {
        std::vector<long long> sums((values.size() + per_block - 1) / per_block);
        for (std::size_t b = 0; b < sums.size(); ++b) {
            std::vector<long long> slot(block, 0);
            for (unsigned t = 0; t < block; ++t) {
                for (std::size_t i = b * per_block + t; i < values.size() && i < (b + 1) * per_block; i += block) {
                    slot[t] += values[i];
                }
            }
            for (unsigned s = block / 2; s > 32; s >>= 1) {  // the block-wide steps, correct
                for (unsigned t = 0; t < s; ++t) slot[t] += slot[t + s];
            }
            sums[b] = slot[0] + slot[32] + slot[16] + slot[8] + slot[4] + slot[2] + slot[1];
        }
        values = sums;
    }
    EXPECT_EQ(values[0], -148);
}

TEST(Explain, PrintsTheTable) {
    const TreeTrace trace = reduce0_stage.trace(256);
    std::ostringstream out;
    print_explain(out, "reduce0", trace, analyze_tree(trace));
    const std::string text = out.str();
    EXPECT_NE(text.find("255 of 1760 occupied thread slots (55 warp-steps x 32) = 14.5%"), std::string::npos) << text;
    EXPECT_NE(text.find("every input summed exactly once: yes"), std::string::npos);
}

}  // namespace
