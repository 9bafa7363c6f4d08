// draw_trees: the addressing diagrams of reduce0 ... reduce3 (the stages with a tree to replay), drawn as SVG from the same
// replay of each kernel's tree_sum that --explain prints (common/explain.h), so a picture
// cannot drift from its kernel.
//
//   build/release/bin/draw_trees docs/img        # writes reduce0_tree.svg ... reduce3_tree.svg
//
// One diagram per stage, for a 64-thread block (two warps): a row of shared-memory slots
// per step, a line from each slot read to the slot it is added into, the cells colored by
// bank (slot mod 32), and a red frame on every access that shares its bank with another
// word accessed by the same warp at the same step (a bank conflict).
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "explain.h"
#include "stages.h"

namespace {

constexpr unsigned kBlock = 64;
constexpr int kCell = 14, kRowGap = 34, kLeft = 150, kTop = 58, kRight = 390;

std::string bank_color(unsigned slot) {
    char text[32];
    std::snprintf(text, sizeof text, "hsl(%u,70%%,85%%)", (slot % 32) * 360 / 32);
    return text;
}

// Slots some warp accesses at one step together with another word of the same bank:
// the conflicts that --explain counts (common/explain.h).
std::set<unsigned> conflicting_slots(const std::vector<TreeAdd>& adds) {
    std::set<unsigned> conflicts;
    for (const WarpAccess& access : warp_accesses(adds, kBlock)) {
        for (const auto* words : {&access.into, &access.from}) {
            for (const auto& [bank, in_bank] : words_by_bank(*words)) {
                if (in_bank.size() > 1) conflicts.insert(in_bank.begin(), in_bank.end());
            }
        }
    }
    return conflicts;
}

std::string draw(const Stage& stage) {
    const TreeTrace trace = stage.trace(kBlock);
    const TreeStats stats = analyze_tree(trace);
    const std::size_t rows = trace.steps.size() + 1;
    const int width = kLeft + kBlock * kCell + kRight;
    const int height = kTop + static_cast<int>(rows) * (kCell + kRowGap) + 40;
    const auto x_of = [](unsigned slot) { return kLeft + static_cast<int>(slot) * kCell; };
    const auto y_of = [](std::size_t row) { return kTop + static_cast<int>(row) * (kCell + kRowGap); };

    std::ostringstream svg;
    svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
        << "\" font-family=\"monospace\" font-size=\"11\">\n"
        << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        << "<text x=\"10\" y=\"20\" font-size=\"14\">" << stage.name << " (" << stage.kernel << "): one block of "
        << kBlock << " threads over " << kBlock * trace.inputs_per_thread
        << " inputs; cell = shared-memory slot, color = bank (slot mod 32)</text>\n"
        << "<text x=\"10\" y=\"38\">lines: the value read and added into a slot (warp 0 blue, warp 1 orange); "
           "red frame: bank conflict within a warp</text>\n";
    for (std::size_t row = 0; row < rows; ++row) {
        const int y = y_of(row);
        std::set<unsigned> conflicts;
        std::string label = trace.inputs_per_thread == 2 ? "load + first add" : "load";
        std::string right = std::to_string(kBlock) + " threads store";
        if (row > 0) {
            const auto& adds = trace.steps[row - 1];
            const StepStats& s = stats.steps[row - 1];
            conflicts = conflicting_slots(adds);
            label = "step " + std::to_string(row) + ", s = " + std::to_string(s.stride);
            const auto count = [](unsigned k, const char* what) {
                return std::to_string(k) + " " + what + (k == 1 ? "" : "s");
            };
            right = count(s.active_threads, "thread") + ", " + count(s.active_warps, "warp") + " (" +
                    std::to_string(s.partly_active_warps) + " partly active), " +
                    (s.worst_bank_conflict > 1 ? std::to_string(s.worst_bank_conflict) + "-way conflict" : "no conflict");
            for (const TreeAdd& a : adds) {  // lines from the previous row
                const char* color = a.tid / 32 == 0 ? "#1f77b4" : "#ff7f0e";
                const int y0 = y_of(row - 1) + kCell, y1 = y;
                svg << "<line x1=\"" << x_of(a.from) + kCell / 2 << "\" y1=\"" << y0 << "\" x2=\"" << x_of(a.into) + kCell / 2
                    << "\" y2=\"" << y1 << "\" stroke=\"" << color << "\" stroke-width=\"1.2\"/>\n"
                    << "<line x1=\"" << x_of(a.into) + kCell / 2 << "\" y1=\"" << y0 << "\" x2=\"" << x_of(a.into) + kCell / 2
                    << "\" y2=\"" << y1 << "\" stroke=\"" << color << "\" stroke-width=\"0.6\" stroke-dasharray=\"2,2\"/>\n";
            }
        }
        svg << "<text x=\"10\" y=\"" << y + 11 << "\">" << label << "</text>\n"
            << "<text x=\"" << x_of(kBlock) + 10 << "\" y=\"" << y + 11 << "\">" << right << "</text>\n";
        for (unsigned slot = 0; slot < kBlock; ++slot) {
            const bool conflict = conflicts.count(slot) > 0;
            svg << "<rect x=\"" << x_of(slot) << "\" y=\"" << y << "\" width=\"" << kCell - 1 << "\" height=\"" << kCell
                << "\" fill=\"" << bank_color(slot) << "\" stroke=\"" << (conflict ? "red" : "#999")
                << "\" stroke-width=\"" << (conflict ? 2 : 0.5) << "\"/>\n";
        }
    }
    char summary[200];
    std::snprintf(summary, sizeof summary,
                  "useful adds: %u of %zu occupied thread slots (%u warp-steps x 32) = %.1f%%", stats.useful_adds,
                  stats.thread_slots, stats.warp_steps, 100.0 * stats.useful_share);
    svg << "<text x=\"10\" y=\"" << height - 14 << "\">" << summary << "</text>\n</svg>\n";
    return svg.str();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: draw_trees OUTPUT_DIR\n");
        return 2;
    }
    for (const Stage* stage : all_stages()) {
        if (!stage->trace) continue;  // reduce4 on: no shared-memory tree to replay
        const std::string path = std::string(argv[1]) + "/" + stage->name + "_tree.svg";
        std::ofstream out(path);
        out << draw(*stage);
        if (!out) {
            std::fprintf(stderr, "draw_trees: cannot write %s\n", path.c_str());
            return 3;
        }
        std::printf("wrote %s\n", path.c_str());
    }
    return 0;
}
