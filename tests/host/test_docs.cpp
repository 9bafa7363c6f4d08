// The chapters in docs/ quote the change from one stage to the next as ```diff blocks.
// Every quoted line must still be in the kernel file it claims to come from, so a chapter
// cannot keep showing code the repository no longer has.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

const std::filesystem::path kSource = REDUCTION_SOURCE_DIR;

std::vector<std::string> lines_of(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

struct DiffBlock {
    std::string chapter;
    std::string before, after;  // "reduce1/kernel.cu"
    std::vector<std::string> lines;
};

std::vector<DiffBlock> diff_blocks() {
    std::vector<DiffBlock> blocks;
    for (const auto& entry : std::filesystem::directory_iterator(kSource / "docs")) {
        if (entry.path().extension() != ".md") continue;
        bool inside = false;
        for (const std::string& line : lines_of(entry.path())) {
            if (!inside && line == "```diff") {
                inside = true;
                blocks.push_back({entry.path().filename().string(), "", "", {}});
            } else if (inside && line == "```") {
                inside = false;
            } else if (inside && line.rfind("--- ", 0) == 0) {
                blocks.back().before = line.substr(4);
            } else if (inside && line.rfind("+++ ", 0) == 0) {
                blocks.back().after = line.substr(4);
            } else if (inside) {
                blocks.back().lines.push_back(line);
            }
        }
    }
    return blocks;
}

TEST(Docs, EveryQuotedDiffMatchesTheKernels) {
    const auto blocks = diff_blocks();
    ASSERT_GE(blocks.size(), 7u) << "each lesson chapter quotes its change as a ```diff block";
    for (const DiffBlock& block : blocks) {
        SCOPED_TRACE(block.chapter + ": " + block.before + " -> " + block.after);
        ASSERT_FALSE(block.before.empty() || block.after.empty()) << "a diff block needs --- and +++ lines";
        const auto before = lines_of(kSource / block.before);
        const auto after = lines_of(kSource / block.after);
        ASSERT_FALSE(before.empty());
        ASSERT_FALSE(after.empty());
        const std::set<std::string> in_before(before.begin(), before.end());
        const std::set<std::string> in_after(after.begin(), after.end());
        int changed = 0;
        for (const std::string& line : block.lines) {
            if (line.rfind("@@", 0) == 0 || line.empty()) continue;
            const std::string code = line.substr(1);
            if (line[0] == '-') {
                ++changed;
                EXPECT_TRUE(in_before.count(code)) << "not in " << block.before << ": " << code;
            } else if (line[0] == '+') {
                ++changed;
                EXPECT_TRUE(in_after.count(code)) << "not in " << block.after << ": " << code;
            } else {
                EXPECT_TRUE(in_before.count(code) && in_after.count(code)) << "context not in both: " << code;
            }
        }
        EXPECT_GT(changed, 0) << "a diff with no change";
    }
}

}  // namespace
