// Figures in the docs that cannot drift from their data.
//
// A measured number in README.md, docs/, assignments/ or classroom/answer-key/ is written as a link to the file it
// comes from, with a query in the link's title:
//
//   [51.3 us](results/results.csv "stage=reduce0; type=int; n=2^22; variant= -> median_ms:median")
//   [51.3 us (50.9-51.6)](results/results.csv "stage=reduce0; type=int; n=2^22; variant= -> median_ms:spread")
//   [1.74x](results/results.csv "... -> median_ms:median / ... -> median_ms:median")
//   [32,948,224](results/profiles.txt "line: smsp__inst_executed.sum")
//
// or, so that the raw Markdown reads, as a reference-style link whose definition, on a line
// of its own (at the page's foot), holds the source and the query:
//
//   reduce0 takes [51.3 us][f1] ...
//
//   [f1]: results/results.csv "stage=reduce0; type=int; n=2^22; variant= -> median_ms:median"
//
// Both forms are checked alike; a figure definition that no figure uses is a problem too.
//
// A CSV query is FILTERS -> COLUMN[:AGGREGATE]: the rows whose columns equal the filters
// (n also takes 2^K), the column's value, aggregated over repetitions (median, min, max,
// or spread = median with its min-max). Terms combine with " / ", " * ", " + ", " - ", and
// a term may be a plain number. A text query "line: S" names the lines of the file that
// hold S, which must all show the figure's number (S may not name lines that disagree);
// "line: A >> B >> S" names the first line holding S after the first line holding B after
// the first holding A (a stage's section of a log, then its kernel's line). The figure's text is the value rounded to the decimals shown,
// in the unit shown (us, ms, GB/s, TB/s, %, x; a _ms column converts to us). A computed
// figure keeps its columns' unit: "A -> median_ms - B -> median_ms" shown in us is the
// difference x1000 (write no "* 1000"), and so is a _ms column times or over a plain
// number; a ratio or product of two columns is shown as computed.
//
// check_figures() finds every figure that no longer matches its source, and every
// measured-looking number (a number with one of those units) that is not a figure;
// update_figures() rewrites the figures of CSV sources with their current values.
#pragma once

#include <string>
#include <vector>

namespace figures {

struct Problem {
    std::string where;  // "docs/01-divergence.md:42"
    std::string what;
};

// `page` is the Markdown text of `path` (relative to `root`, the repository).
std::vector<Problem> check_page(const std::string& root, const std::string& path, const std::string& page);
// The page with every CSV figure's text replaced by its current value (same decimals and unit).
std::string update_page(const std::string& root, const std::string& path, const std::string& page,
                        std::vector<Problem>& problems);
// The fields of each line of a CSV text (RFC 4180 quoting; CR dropped).
std::vector<std::vector<std::string>> csv_rows(const std::string& text);
// How many figure links a page has.
std::size_t count_figures(const std::string& page);
// The pages the rules apply to: README.md, docs/*.md, assignments/*.md.
std::vector<std::string> pages(const std::string& root);

}  // namespace figures
