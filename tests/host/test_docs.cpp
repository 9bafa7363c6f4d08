// The chapters in docs/ quote the change from one stage to the next as ```diff blocks.
// Every quoted line must still be in the kernel file it claims to come from, so a chapter
// cannot keep showing code the repository no longer has.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <algorithm>
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
    // A classroom tree (no classroom/ folder) has only the chapters before its assignment.
    const bool assignment_tree = !std::filesystem::exists(kSource / "classroom");
    ASSERT_GE(blocks.size(), assignment_tree ? 0u : 7u) << "each lesson chapter quotes its change as a ```diff block";
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

#include <cstdlib>

#include "figures.h"

namespace {

// Every measured figure in README.md, docs/ and assignments/ is a link to its results file
// and equals what that file holds (tools/figures.h); a number that looks measured but is
// not a figure fails too. A classroom tree has no results: there is nothing to check.
TEST(Docs, EveryFigureMatchesItsSource) {
    if (!std::filesystem::is_directory(kSource / "docs/results")) GTEST_SKIP() << "no docs/results in this tree";
    int figures_seen = 0;
    for (const std::string& page : figures::pages(kSource.string())) {
        std::ifstream in(kSource / page);
        std::stringstream text;
        text << in.rdbuf();
        figures_seen += static_cast<int>(figures::count_figures(text.str()));
        for (const auto& problem : figures::check_page(kSource.string(), page, text.str())) {
            ADD_FAILURE() << problem.where << ": " << problem.what;
        }
    }
    EXPECT_GT(figures_seen, 100) << "the docs quote their figures as links";
}

// The check itself, on a planted results file and page: it must reject each kind of
// wrong figure and accept the right ones.
TEST(Docs, TheFigureCheckRejectsWrongFigures) {
    const std::filesystem::path root = std::filesystem::temp_directory_path() / "figures-test";
    std::filesystem::remove_all(root);
    std::filesystem::create_directories(root / "docs/results");
    std::ofstream(root / "docs/results/r.csv") << "stage,variant,type,n,median_ms,gbps\n"
                                                  "reduce0,,int,4194304,0.0513,327.1\n"
                                                  "reduce0,,int,4194304,0.0509,329.6\n"
                                                  "reduce0,,int,4194304,0.0520,322.6\n"
                                                  "reduce0,select=bitmask,int,4194304,0.0293,573\n";
    std::ofstream(root / "docs/results/p.txt") << "smsp__inst_executed.sum   inst   32,948,224   18,268,160\n";
    const auto problems_in = [&](const std::string& page) {
        return figures::check_page(root.string(), "docs/x.md", page).size();
    };
    const std::string q = "stage=reduce0; type=int; n=2^22; variant= -> median_ms";
    EXPECT_EQ(problems_in("[51.3 us](results/r.csv \"" + q + ":median\")"), 0u);
    EXPECT_EQ(problems_in("[51.3 us (50.9-52.0)](results/r.csv \"" + q + ":spread\")"), 0u);
    EXPECT_EQ(problems_in("[1.75x](results/r.csv \"" + q + ":median / stage=reduce0; variant=select=bitmask -> "
                          "median_ms\")"),
              0u);
    EXPECT_EQ(problems_in("[32,948,224](results/p.txt \"line: smsp__inst_executed.sum\")"), 0u);
    EXPECT_EQ(problems_in("2 x 5120-bit bus, `51.3 us` in code, 2^22 values"), 0u);
    EXPECT_EQ(problems_in("[51300 ns](results/r.csv \"" + q + ":median\")"), 0u);  // ms shown in ns: x 1e6
    EXPECT_EQ(problems_in("[51.3 ns](results/r.csv \"" + q + ":median\")"), 1u);   // not scaled
    EXPECT_EQ(problems_in("the second kernel starts 1280 ns later"), 1u);          // ns is measured-looking too
    // Wrong: a planted figure, a spread, a ratio, a count, an ambiguous query, a number
    // without its link, a missing source.
    EXPECT_EQ(problems_in("[51.4 us](results/r.csv \"" + q + ":median\")"), 1u);
    EXPECT_EQ(problems_in("[51.3 us (50.9-51.9)](results/r.csv \"" + q + ":spread\")"), 1u);
    EXPECT_EQ(problems_in("[1.80x](results/r.csv \"" + q + ":median / stage=reduce0; variant=select=bitmask -> "
                          "median_ms\")"),
              1u);
    EXPECT_EQ(problems_in("[32,948,225](results/p.txt \"line: smsp__inst_executed.sum\")"), 1u);
    EXPECT_EQ(problems_in("[51.3 us](results/r.csv \"stage=reduce0 -> median_ms:median\")"), 1u);  // two variants
    EXPECT_EQ(problems_in("[51.3 us](results/r.csv \"" + q + "\")"), 1u);                         // three rows
    EXPECT_EQ(problems_in("reduce0 took 51.3 us, 1.75x slower, at 9.7% of peak"), 3u);
    EXPECT_EQ(problems_in("[51.3 us](results/missing.csv \"" + q + ":median\")"), 1u);
    // Comment lines ('#': a file's provenance) before the header and after the rows.
    std::ofstream(root / "docs/results/c.csv") << "# peers.py on a GPU\n# date: today\n"
                                                  "layout,n,gbps\ntorch.sum,1073741824,581.8\n# command: peers.py\n";
    EXPECT_EQ(problems_in("[582 GB/s](results/c.csv \"layout=torch.sum; n=2^30 -> gbps\")"), 0u);
    EXPECT_EQ(problems_in("[583 GB/s](results/c.csv \"layout=torch.sum; n=2^30 -> gbps\")"), 1u);
    // A computed figure keeps its column's unit: a difference of two _ms values shown in us
    // is x1000. (docs/09 once showed "0.0 us" for 41.104 - 24.096 us, and passed.)
    std::ofstream(root / "docs/results/m.csv") << "measurement,gpus,n,rank,median_ms\n"
                                                  "gpu,2,16777216,0,0.041104\n"
                                                  "gpu,2,16777216,1,0.024096\n";
    const std::string skew = "measurement=gpu; gpus=2; n=2^24; rank=0 -> median_ms - measurement=gpu; gpus=2; "
                             "n=2^24; rank=1 -> median_ms";
    EXPECT_EQ(problems_in("[0.0 us](results/m.csv \"" + skew + "\")"), 1u);
    EXPECT_EQ(problems_in("[17.0 us](results/m.csv \"" + skew + "\")"), 0u);
    EXPECT_EQ(problems_in("[17.0 us](results/m.csv \"" + skew + " * 1000\")"), 1u);  // scaled twice
    EXPECT_EQ(problems_in("[1.71x](results/m.csv \"" + skew.substr(0, skew.find(" - ")) + " / " +
                          skew.substr(skew.find(" - ") + 3) + "\")"),
              0u);  // a ratio has no unit
    // Reference-style figures: the use in the text, the source and query in a definition
    // line (at the page's foot); checked alike, and a definition no figure uses is a problem.
    const std::string defined = "\n\n[f1]: results/r.csv \"" + q + ":median\"\n";
    EXPECT_EQ(problems_in("reduce0 takes [51.3 us][f1]." + defined), 0u);
    EXPECT_EQ(problems_in("reduce0 takes [51.4 us][f1]." + defined), 1u);          // wrong value
    EXPECT_EQ(problems_in("reduce0 takes 51.3 us." + defined), 2u);                // not a figure; f1 unused
    EXPECT_EQ(problems_in("[51.3 us][f1] and [51.3 us][f1]" + defined), 0u);      // one definition, two uses
    EXPECT_EQ(problems_in("[51.3 us][f2]" + defined), 2u);                         // undefined: not a figure; f1 unused
    EXPECT_EQ(problems_in("`shared[tid][k]` and a[i][j] are code, not figures"), 0u);
    // A text figure names its line: where several lines hold the needle and they do not all
    // show the number, the figure could be another stage's; "A >> B >> TEXT" names a section.
    std::ofstream(root / "docs/results/q.txt") << "$ reduce0\n  kernel (1, 1, 1)\n    time us 3.42\n"
                                                  "$ reduce1\n  kernel (1, 1, 1)\n    time us 2.94\n    same us 7.5\n    same us 7.5\n";
    EXPECT_EQ(problems_in("[3.42 us](results/q.txt \"line: time\")"), 1u);                        // two lines, two values
    EXPECT_EQ(problems_in("[3.42 us](results/q.txt \"line: reduce0 >> (1, 1, 1) >> time\")"), 0u);
    EXPECT_EQ(problems_in("[2.94 us](results/q.txt \"line: reduce0 >> (1, 1, 1) >> time\")"), 1u);  // reduce0's line
    EXPECT_EQ(problems_in("[2.94 us](results/q.txt \"line: reduce1 >> time\")"), 0u);
    EXPECT_EQ(problems_in("[7.5 us](results/q.txt \"line: same\")"), 0u);                         // a repeated line
    EXPECT_EQ(problems_in("[2.94 us](results/q.txt \"line: reduce2 >> time\")"), 1u);              // no such section
    // Excerpts: lines of their file, in its order, a left-out line marked by "...";
    // blank lines and SASS's encoding comments may be left out unmarked.
    std::ofstream(root / "docs/results/e.txt") << "alpha\nbeta\n\n        /* 0x000fe2 */\ngamma\ndelta\n";
    const auto excerpt = [](const std::string& lines) { return "<!-- excerpt: results/e.txt -->\n```\n" + lines + "```\n"; };
    EXPECT_EQ(problems_in(excerpt("alpha\nbeta\ngamma\n")), 0u);      // blank and encoding lines skipped
    EXPECT_EQ(problems_in(excerpt("alpha\n...\ndelta\n")), 0u);       // a marked gap
    EXPECT_EQ(problems_in(excerpt("alpha\ndelta\n")), 1u);             // beta and gamma left out silently
    EXPECT_EQ(problems_in(excerpt("beta\nalpha\n")), 1u);              // out of order
    EXPECT_EQ(problems_in(excerpt("alpha\nepsilon\n")), 1u);           // not in the file
    EXPECT_EQ(problems_in(excerpt("gamma\ndelta\n")), 0u);             // may start anywhere
    // --update rewrites a stale CSV figure to the data, keeping its decimals and unit.
    std::vector<figures::Problem> problems;
    EXPECT_EQ(figures::update_page(root.string(), "docs/x.md", "[49 us](results/r.csv \"" + q + ":median\")", problems),
              "[51 us](results/r.csv \"" + q + ":median\")");
    EXPECT_TRUE(problems.empty());
    EXPECT_EQ(figures::update_page(root.string(), "docs/x.md", "[49 us][f1]" + defined, problems), "[51 us][f1]" + defined);
    EXPECT_TRUE(problems.empty());
    // ... and leaves a figure that matches as it is, also at a tie of its rounding.
    std::ofstream(root / "docs/results/t.csv") << "variant,x_ideal\nread,1.655\n";
    for (const std::string shown : {"1.65x", "1.66x"}) {
        const std::string page = "[" + shown + "](results/t.csv \"variant=read -> x_ideal\")";
        EXPECT_EQ(problems_in(page), 0u) << shown;
        EXPECT_EQ(figures::update_page(root.string(), "docs/x.md", page, problems), page);
    }
    EXPECT_TRUE(problems.empty());
}

}  // namespace
