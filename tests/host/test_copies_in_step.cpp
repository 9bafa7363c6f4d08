// Two copies kept in step: ops/reduce_op.cuh repeats reduce7/kernel.cu's tile loop, its
// loads in flight and its last-block finish (the case of one group: ops keeps the resident
// grid, whose partials fit one of reduce7's groups), for any operator. reduce7's
// copy is the lesson (and a classroom assignment), so the two are not one function; instead
// every line of the shared protocol must read the same in both, and the loads in flight
// must agree with reduce7's default, so that a change to one fails here until the other
// follows. A classroom tree has no ops/: nothing to compare.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>

namespace {

namespace fs = std::filesystem;
const fs::path kSource = REDUCTION_SOURCE_DIR;

// The file's lines, without their indentation.
std::set<std::string> trimmed_lines(const fs::path& path) {
    std::ifstream in(path);
    std::set<std::string> lines;
    for (std::string line; std::getline(in, line);) {
        const auto first = line.find_first_not_of(' ');
        if (first != std::string::npos) lines.insert(line.substr(first));
    }
    return lines;
}

std::string text_of(const fs::path& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(CopiesInStep, ReduceOpRepeatsReduce7sProtocol) {
    const fs::path lesson = kSource / "reduce7/kernel.cu";
    const fs::path copy = kSource / "ops/reduce_op.cuh";
    if (!fs::exists(lesson) || !fs::exists(copy)) GTEST_SKIP() << "no reduce7 or no ops/ in this tree";
    const std::set<std::string> in_lesson = trimmed_lines(lesson);
    const std::set<std::string> in_copy = trimmed_lines(copy);
    for (const std::string& line : {
             std::string("constexpr std::size_t kTile = std::size_t(kLoadsInFlight) * BLOCK;"),
             std::string("std::size_t i = blockIdx.x * kTile + threadIdx.x;"),
             std::string("for (; i + (kLoadsInFlight - 1) * BLOCK < vectors; i += gridDim.x * kTile) {"),
             std::string("if (i < vectors) {  // only a block whose last tile is partial: the others skip its tests"),
             std::string("for (int k = 0; k < kLoadsInFlight; ++k) {  // the last tile, when the input ends inside it"),
             std::string("__shared__ bool is_last;"),
             std::string("__syncthreads();  // also orders thread 0's acquire before the other threads' reads"),
             std::string("if (!is_last) return;"),
         }) {
        EXPECT_TRUE(in_lesson.count(line)) << "reduce7/kernel.cu no longer has: " << line;
        EXPECT_TRUE(in_copy.count(line)) << "ops/reduce_op.cuh no longer has: " << line;
    }
    // The loads in flight: ops' constant and reduce7's (its default, where it is a variant:
    // reduce7/variants.cuh, beside the lesson).
    const std::regex loads(R"(constexpr int k(?:Default)?LoadsInFlight = (\d+);)");
    std::smatch lesson_loads, copy_loads;
    const std::string lesson_text = text_of(kSource / "reduce7/variants.cuh"), copy_text = text_of(copy);
    ASSERT_TRUE(std::regex_search(lesson_text, lesson_loads, loads)) << "reduce7's loads in flight";
    ASSERT_TRUE(std::regex_search(copy_text, copy_loads, loads)) << "ops' loads in flight";
    EXPECT_EQ(lesson_loads[1].str(), copy_loads[1].str());
}

}  // namespace
