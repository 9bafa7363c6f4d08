// figures: checks (or updates) every measured figure in README.md, docs/, assignments/ and classroom/answer-key/
// against the results file it links to (tools/figures.h says how figures are written).
//
//   build/release/bin/figures            # check; exit 1 and one line per problem
//   build/release/bin/figures --update   # rewrite CSV figures with the current data, then check
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "figures.h"

#ifndef REDUCTION_SOURCE_DIR
#define REDUCTION_SOURCE_DIR "."
#endif

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (argc > 2 || (!mode.empty() && mode != "--update")) {
        std::fprintf(stderr, "figures: usage: figures [--update] (see tools/figures.h)\n");
        return 2;
    }
    const std::string root = REDUCTION_SOURCE_DIR;
    int count = 0;
    for (const std::string& page : figures::pages(root)) {
        std::ifstream in(root + "/" + page);
        std::ostringstream text;
        text << in.rdbuf();
        std::string content = text.str();
        if (mode == "--update") {
            std::vector<figures::Problem> ignored;
            const std::string updated = figures::update_page(root, page, content, ignored);
            if (updated != content) {
                std::ofstream(root + "/" + page, std::ios::binary | std::ios::trunc) << updated;
                std::printf("updated %s\n", page.c_str());
                content = updated;
            }
        }
        for (const auto& p : figures::check_page(root, page, content)) {
            std::printf("%s: %s\n", p.where.c_str(), p.what.c_str());
            ++count;
        }
    }
    if (count) {
        std::printf("figures: %d problems\n", count);
        return 1;
    }
    std::printf("figures: every figure matches its source\n");
    return 0;
}
