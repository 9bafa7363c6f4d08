// The harness knows no stage: no file of common/ or runner/ names a stage's labelled
// variant (its option, its label, a choice's spelling) or an enum that a stage folder
// declares. The words are gathered from the stages themselves: each variant table the
// stages register (all_stages()), and each `enum class` of a reduceN/ folder. So a variant
// added to a stage is covered without touching this test, and a harness that learns its
// name (a flag, a case in the parser, a label) fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "benchmark.h"
#include "stages.h"

namespace {

namespace fs = std::filesystem;
const fs::path kSource = REDUCTION_SOURCE_DIR;

std::string text_of(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

bool is_source(const fs::path& path) {
    const std::string ext = path.extension().string();
    return ext == ".h" || ext == ".cuh" || ext == ".cu" || ext == ".cpp" || ext == ".in" || ext == ".txt";
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `word` in `text` with no word character (or '-', for an option) touching either end.
bool mentions(const std::string& text, const std::string& word) {
    for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
        const char before = at == 0 ? ' ' : text[at - 1];
        const char after = at + word.size() < text.size() ? text[at + word.size()] : ' ';
        const bool open_before = !(word_char(word.front()) || word.front() == '-') || !(word_char(before) || before == '-');
        const bool open_after = !(word_char(word.back()) || word.back() == '-') || !(word_char(after) || after == '-');
        if (open_before && open_after) return true;
    }
    return false;
}

// What a harness that knew a stage's variants would have to write.
std::set<std::string> stage_words() {
    std::set<std::string> words;
    for (const Stage* stage : all_stages()) {
        for (const Variant& variant : stage->variants) {
            const std::string name(variant.name);
            words.insert("--" + name);          // the option
            words.insert("\"" + name + "\"");   // a lookup by name
            words.insert(name + "=");           // a label
            for (std::string_view choice : variant.choices) {
                const bool number = std::all_of(choice.begin(), choice.end(),
                                                [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
                if (!number) words.insert("\"" + std::string(choice) + "\"");  // a choice's spelling
            }
        }
    }
    const std::regex enum_declaration(R"(enum\s+class\s+(\w+))");
    for (const auto& folder : fs::directory_iterator(kSource)) {
        if (!folder.is_directory() || !std::regex_match(folder.path().filename().string(), std::regex("reduce[0-9]"))) {
            continue;
        }
        for (const auto& file : fs::directory_iterator(folder.path())) {
            const std::string text = text_of(file.path());
            for (std::sregex_iterator m(text.begin(), text.end(), enum_declaration), end; m != end; ++m) {
                words.insert((*m)[1].str());
            }
        }
    }
    return words;
}

TEST(HarnessKnowsNoStage, CommonAndRunnerNameNoStagesVariantsOrEnums) {
    const std::set<std::string> words = stage_words();
    // The words must come from somewhere: every tree has reduce0 and its --select.
    ASSERT_TRUE(words.count("--select")) << "reduce0 declares --select";
    ASSERT_TRUE(words.count("Select")) << "reduce0 declares enum class Select";
    int files = 0;
    for (const char* folder : {"common", "runner"}) {
        for (const auto& entry : fs::recursive_directory_iterator(kSource / folder)) {
            if (!entry.is_regular_file() || !is_source(entry.path())) continue;
            ++files;
            const std::string text = text_of(entry.path());
            for (const std::string& word : words) {
                EXPECT_FALSE(mentions(text, word))
                    << fs::relative(entry.path(), kSource).string() << " names " << word
                    << ": a stage declares it (its kernel.cu), the harness reads it from the stage's table";
            }
        }
    }
    EXPECT_GT(files, 20);
}

// The labels docs/results and the figures read ("variant=select=bitmask" in results.csv):
// what each stage's declarations give by default and under --variants.
std::vector<std::string> labels_of(const char* name, ValueType type, bool variants) {
    const Stage* stage = find_stage(name);
    std::vector<std::string> labels;
    if (!stage) return labels;
    const std::vector<VariantChoices> runs = variants ? variant_runs(stage->variants, {}, type)
                                                      : std::vector<VariantChoices>{{}};
    for (const VariantChoices& run : runs) labels.push_back(variant_label(stage->variants, run, type));
    return labels;
}

TEST(HarnessKnowsNoStage, TheStagesKeepTheLabelsOfTheResults) {
    using Labels = std::vector<std::string>;
    EXPECT_EQ(labels_of("reduce0", ValueType::Int32, true), (Labels{"", "select=bitmask"}));
    EXPECT_EQ(labels_of("reduce1", ValueType::Int32, true), (Labels{""}));
    if (!find_stage("reduce7")) GTEST_SKIP() << "a classroom tree without reduce3 ... reduce7";
    EXPECT_EQ(labels_of("reduce3", ValueType::Float32, true), (Labels{"", "running-sum=shared"}));
    EXPECT_EQ(labels_of("reduce4", ValueType::Float32, true), (Labels{""}));  // the legacy races are not timed
    EXPECT_EQ(labels_of("reduce7", ValueType::Int32, false), (Labels{"vec=4 finish=packed"}));
    EXPECT_EQ(labels_of("reduce7", ValueType::Float32, false), (Labels{"vec=4 finish=last-block"}));
    EXPECT_EQ(labels_of("reduce7", ValueType::Float64, false), (Labels{"vec=2 finish=last-block"}));
    EXPECT_EQ(labels_of("reduce7", ValueType::Float64, true),
              (Labels{"vec=1 finish=two-pass", "vec=1 finish=atomic", "vec=1 finish=last-block", "vec=1 finish=pdl",
                      "vec=2 finish=two-pass", "vec=2 finish=atomic", "vec=2 finish=last-block", "vec=2 finish=pdl"}));
    EXPECT_EQ(labels_of("reduce7", ValueType::Int32, true).size(), 15u);  // 3 widths x 5 finishes (packed: int only)
    const Stage& reduce7 = *find_stage("reduce7");
    EXPECT_EQ(variant_label(reduce7.variants, {{"loads", "8"}}, ValueType::Float32), "vec=4 finish=last-block loads=8");
    const Stage& reduce4 = *find_stage("reduce4");
    EXPECT_EQ(variant_label(reduce4.variants, {{"last-warp", "legacy-plain"}}, ValueType::Int32),
              "last-warp=legacy-plain");
}

}  // namespace

// What a run takes for its block is the stage's to say: its record's default_block when
// --block is not given (a block the stage supports), the command line's when it is.
TEST(StageRecords, TheDefaultBlockIsTheStagesOwnAndOneItSupports) {
    for (const Stage* stage : all_stages()) {
        const int block = stage->default_block;
        EXPECT_TRUE(block >= stage->min_block && block <= stage->max_block && (block & (block - 1)) == 0)
            << stage->name << ": default_block " << block;
        Options options;  // --block not given
        EXPECT_EQ(run_config(*stage, options).block, block) << stage->name;
        options.block = stage->min_block;
        EXPECT_EQ(run_config(*stage, options).block, stage->min_block) << stage->name;
    }
}
