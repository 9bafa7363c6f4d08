#include "multi_gpu_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "bandwidth.h"
#include "report.h"  // common/: with_thousands, count_text, bytes_text, fixed, csv_field

namespace {

std::string pad_right(const std::string& text, std::size_t width) {
    return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}
std::string pad_left(const std::string& text, std::size_t width) {
    return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

// "n = 8,589,934,592 (2^33)"
std::string n_text(std::size_t n) {
    const std::string power = count_text(n);
    return with_thousands(n) + (power.find('^') != std::string::npos ? " (" + power + ")" : "");
}

double median_of(const std::vector<double>& values) { return summarize(values).median; }

std::string gpu_check_text(const GpuRuns& gpu, Collective collective) {
    if (gpu.checked == 0) return collective == Collective::Reduce ? "- (reduce: rank 0 gets the sum)" : "not checked";
    if (gpu.failed == 0) return "exact, " + std::to_string(gpu.checked) + " runs";
    return "FAIL " + std::to_string(gpu.failed) + "/" + std::to_string(gpu.checked) + " runs: " + gpu.first_failure;
}

std::string csv_number(double value, int decimals) { return fixed(value, decimals); }
std::string csv_number(const std::optional<double>& value, int decimals) {
    return value ? fixed(*value, decimals) : "";
}

// One CSV row: column name -> text; the columns it lacks stay empty.
using CsvRow = std::map<std::string, std::string>;

}  // namespace

void print_run_header(std::ostream& out, const RunDescription& run) {
    out << run.program << "\n";
    const std::pair<const char*, const std::string*> lines[] = {
        {"nvls", &run.nvls},         {"mode", &run.mode},        {"gpus", &run.gpus},
        {"device", &run.device},     {"peak", &run.peak},        {"software", &run.software},
        {"problem", &run.problem},   {"timing", &run.method}};
    for (const auto& [label, text] : lines) {
        if (!text->empty()) out << "  " << pad_right(label, 9) << *text << "\n";
    }
}

std::string gpus_text(const std::vector<RankInfo>& members) {
    // In rank order, one group per run of equal (name, host).
    std::string text;
    for (std::size_t i = 0; i < members.size();) {
        std::size_t j = i;
        while (j < members.size() && members[j].device_name == members[i].device_name &&
               members[j].host == members[i].host) {
            ++j;
        }
        text += (text.empty() ? "" : "; ") + std::to_string(j - i) + " x " + members[i].device_name + " on host " +
                members[i].host;
        i = j;
    }
    return text;
}

std::optional<double> sum_of_peaks(const std::vector<RankInfo>& members) {
    double sum = 0;
    for (const RankInfo& member : members) {
        if (!member.peak_gbps) return std::nullopt;
        sum += *member.peak_gbps;
    }
    return sum;
}

void print_reduction(std::ostream& out, const ReductionResult& r, const BaselineResult& baseline) {
    const std::size_t value_bytes = type_size(r.type);
    const int gpus = static_cast<int>(r.gpus.size());
    out << "\nreduction: " << n_text(r.n) << " " << type_name(r.type) << " values = "
        << bytes_text(static_cast<double>(r.n * value_bytes)) << " across " << gpus << " GPU" << (gpus == 1 ? "" : "s")
        << ": reduce7 on each shard, then one "
        << (r.collective == Collective::AllReduce ? "ncclAllReduce" : "ncclReduce (to rank 0)") << " of one value\n\n";

    // The per-GPU table.
    std::size_t name_width = 6, host_width = 4;
    for (const GpuRuns& gpu : r.gpus) {
        name_width = std::max(name_width, gpu.gpu.device_name.size());
        host_width = std::max(host_width, gpu.gpu.host.size());
    }
    out << "rank  gpu  " << pad_right("host", host_width) << "  " << pad_right("device", name_width)
        << "   shard values   local ms  local GB/s  % peak  collective us   total ms  check\n";
    for (const GpuRuns& gpu : r.gpus) {
        const double local = median_of(gpu.local_ms);
        const double local_gbps = gbps(static_cast<double>(gpu.shard.count * value_bytes), local);
        const std::string pct = gpu.gpu.peak_gbps ? fixed(100.0 * local_gbps / *gpu.gpu.peak_gbps, 1) + "%" : "-";
        out << pad_left(std::to_string(gpu.gpu.rank), 4) << pad_left(std::to_string(gpu.gpu.device), 5) << "  "
            << pad_right(gpu.gpu.host, host_width) << "  " << pad_right(gpu.gpu.device_name, name_width)
            << pad_left(with_thousands(gpu.shard.count), 15) << pad_left(fixed(local, 4), 11)
            << pad_left(fixed(local_gbps, 0), 12) << pad_left(pct, 8)
            << pad_left(fixed(1000.0 * median_of(gpu.collective_ms), 1), 15)
            << pad_left(fixed(median_of(gpu.total_ms), 4), 11) << "  " << gpu_check_text(gpu, r.collective) << "\n";
    }

    // The aggregate.
    std::vector<RankInfo> members;
    for (const GpuRuns& gpu : r.gpus) members.push_back(gpu.gpu);
    const double total_gbps = gbps(static_cast<double>(r.n * value_bytes), r.run.median);
    const auto peaks = sum_of_peaks(members);
    out << "\n" << pad_right("aggregate", 12) << fixed(r.run.median, 4) << " ms median (min " << fixed(r.run.min, 4)
        << ", max " << fixed(r.run.max, 4) << ") for the whole sum = " << fixed(total_gbps, 0) << " GB/s";
    if (peaks) out << " = " << fixed(100.0 * total_gbps / *peaks, 1) << "% of " << fixed(*peaks, 0) << " GB/s (the " << gpus << " GPUs' peaks added)";
    out << "\n";
    if (baseline.ran) {
        out << pad_right("single GPU", 12) << fixed(baseline.median_ms, 4) << " ms median = " << fixed(baseline.gbps, 0)
            << " GB/s" << (baseline.pct_peak ? " = " + fixed(*baseline.pct_peak, 1) + "% of its peak" : "")
            << ": reduce7 on GPU " << baseline.device << " over the whole input, same method, "
            << (baseline.failed ? "FAIL: " + baseline.check : baseline.check) << "\n";
        out << pad_right("scaling", 12) << fixed(total_gbps / baseline.gbps, 2) << " x the single GPU (" << gpus
            << " GPUs: ideally " << gpus << ")\n";
    } else {
        out << pad_right("single GPU", 12) << "not timed: " << baseline.why_not << "\n";
    }
    out << pad_right("check", 12);
    if (r.verified()) {
        out << "exact: the sum " << fixed(r.value, 0) << " on "
            << (r.collective == Collective::AllReduce ? "every GPU" : "rank 0") << " in every run (" << r.checked
            << " results checked";
        if (r.collective == Collective::AllReduce) out << ": " << 1 + r.warmup + r.iters << " runs x " << gpus << " GPUs";
        out << ")\n";
    } else if (r.failed) {
        out << "FAIL: " << r.failed << " of " << r.checked << " results wrong; first: " << r.check << "\n";
    } else {
        out << "FAIL: every run's result is exact, but the check of the partials failed (below)\n";
    }
    if (!r.partials_check.empty()) out << pad_right("partials", 12) << r.partials_check << "\n";
    out << "\nlocal: start -> its shard's sum done. collective: -> the "
        << (r.collective == Collective::AllReduce ? "all-reduce" : "reduce") << " of that value done, which includes "
        << "waiting for the slowest GPU. total: both.\nA run's time is the largest total over the GPUs: a GPU's events "
           "time that GPU only. Each GPU's sum is enqueued behind a gate kernel that the host opens once, so the GPUs\n"
           "start together and reduce7's launch is outside the timed region, as in the single-GPU baseline; the "
           "collective is\nissued just after the gate opens, while the GPUs sum. With one process per GPU each "
           "process opens its own gate\nafter a barrier: the skew between processes remains.\n"
           "GB/s = values x "
        << value_bytes << " bytes / median time.\n";
}

void print_allreduce(std::ostream& out, const AllReduceResult& r) {
    out << "\nelement-wise all-reduce (the gradient case): ";
    if (!r.ran) {
        out << "skipped: " << r.why_not << "\n";
        return;
    }
    out << "ncclAllReduce(sum), in place, " << n_text(r.elements) << " floats = " << bytes_text(static_cast<double>(r.bytes))
        << " per GPU, " << r.gpus << " GPUs\n";
    const auto line = [&](const char* label, const std::string& text) { out << "  " << pad_right(label, 9) << text << "\n"; };
    line("check", r.verified() ? "exact: after one all-reduce every element of every GPU's vector is the sum of the " +
                                     std::to_string(r.gpus) + " GPUs' values (" + with_thousands(r.checked_elements) +
                                     " elements checked)"
                               : "FAIL: " + r.check + " of " + with_thousands(r.checked_elements));
    line("time", fixed(r.run.median, 4) + " ms median (min " + fixed(r.run.min, 4) + ", max " + fixed(r.run.max, 4) +
                     ") of " + std::to_string(r.run.runs) + " runs: the slowest GPU's; no L2 flush");
    line("algbw", fixed(r.algbw_gbps, 1) + " GB/s = S / t, S = " + bytes_text(static_cast<double>(r.bytes)));
    line("busbw", fixed(r.busbw_gbps, 1) + " GB/s = algbw x 2(G-1)/G = algbw x " + fixed(allreduce_bus_factor(r.gpus), 2) +
                      ": what each GPU's link carried per second");
    if (r.link.gbps) {
        line("link", fixed(*r.link.gbps, 0) + " GB/s per GPU and direction (" + r.link.source + "); busbw = " +
                         fixed(100.0 * r.busbw_gbps / *r.link.gbps, 1) + "% of it");
    } else {
        line("link", r.link.source);
    }
    if (!r.peer_access.empty()) line("peers", r.peer_access);
    if (r.peer_copy) {
        line("copy", fixed(r.peer_copy_gbps, 1) + " GB/s per GPU and direction by the copy engines "
                     "(cudaMemcpyPeerAsync, each GPU sending S while receiving S; " + fixed(r.peer_copy->median, 4) +
                     " ms median): a reference for the link, not a bound on NCCL, which moves data with SM loads "
                     "and stores; busbw = " + fixed(100.0 * r.busbw_gbps / r.peer_copy_gbps, 1) + "% of it");
        line("", r.peer_copy_verified()
                     ? "copy check: exact, every received element equals the sender's (" +
                           with_thousands(r.peer_copy_checked) + " elements checked)"
                     : "copy check: FAIL: " + with_thousands(r.peer_copy_mismatches) + " of " +
                           with_thousands(r.peer_copy_checked) + " received elements wrong" +
                           (r.peer_copy_gate_timeouts ? ", " + std::to_string(r.peer_copy_gate_timeouts) +
                                                            " timed GPU runs whose start gate gave up"
                                                      : ""));
    } else if (!r.peer_copy_why_not.empty()) {
        line("copy", "not measured: " + r.peer_copy_why_not);
    }
    if (r.across_machines) {
        line("note", "the ranks span machines: between them the all-reduce crosses the network, not NVLink");
    }
    out << "\nalgbw and busbw as NCCL defines them (nccl-tests, doc/PERFORMANCE.md): a ring all-reduce sends "
           "2(G-1)/G x S bytes over each GPU's link.\n";
}

std::string rank_summary_line(const ReductionResult& r, int rank) {
    for (const GpuRuns& gpu : r.gpus) {
        if (gpu.gpu.rank != rank) continue;
        const double local = median_of(gpu.local_ms);
        return "rank " + std::to_string(rank) + " of " + std::to_string(r.gpus.size()) + " (GPU " +
               std::to_string(gpu.gpu.device) + ", " + gpu.gpu.device_name + ", host " + gpu.gpu.host + "): shard [" +
               with_thousands(gpu.shard.begin) + ", " + with_thousands(gpu.shard.begin + gpu.shard.count) +
               "), reduce7 " + fixed(local, 4) + " ms = " +
               fixed(gbps(static_cast<double>(gpu.shard.count * type_size(r.type)), local), 0) + " GB/s, " +
               (r.collective == Collective::AllReduce ? "all-reduce " : "reduce ") +
               fixed(1000.0 * median_of(gpu.collective_ms), 1) + " us; check: " + gpu_check_text(gpu, r.collective);
    }
    return "rank " + std::to_string(rank) + ": not in the job";
}

// ---------------------------------------------------------------- CSV

const std::vector<std::string>& multi_gpu_csv_columns() {
    static const std::vector<std::string> columns = {
        "measurement", "collective", "gpus", "rank", "device", "host", "type", "n", "bytes", "shard_begin",
        "shard_count", "runs", "median_ms", "min_ms", "max_ms", "local_median_ms", "collective_median_us", "gbps",
        "pct_peak", "peak_gbps", "single_gpu_gbps", "scaling", "algbw_gbps", "busbw_gbps", "link_peak_gbps",
        "pct_link_peak", "verified", "checked", "failed", "check", "gate_after_flush", "nccl_proto"};
    return columns;
}

void write_multi_gpu_csv(std::ostream& out, const ReductionResult* reduction, const BaselineResult* baseline,
                         const AllReduceResult* allreduce, const std::string& nccl_proto, bool with_header) {
    std::vector<CsvRow> rows;
    if (reduction) {
        const ReductionResult& r = *reduction;
        const std::size_t value_bytes = type_size(r.type);
        const std::string type(type_name(r.type));
        const std::string collective = collective_name(r.collective);
        const std::string gpus = std::to_string(r.gpus.size());
        const std::size_t bytes = r.n * value_bytes;
        const double total_gbps = gbps(static_cast<double>(bytes), r.run.median);
        const std::string gate = r.gate_after_flush ? "yes" : "no";
        if (baseline && baseline->ran) {
            const BaselineResult& b = *baseline;
            rows.push_back({{"measurement", "single_gpu"}, {"collective", "none"}, {"gpus", "1"}, {"rank", "0"},
                            {"device", b.device_name}, {"type", type}, {"n", std::to_string(r.n)},
                            {"bytes", std::to_string(bytes)}, {"shard_begin", "0"}, {"shard_count", std::to_string(r.n)},
                            {"runs", std::to_string(b.runs)}, {"median_ms", csv_number(b.median_ms, 6)},
                            {"min_ms", csv_number(b.min_ms, 6)}, {"max_ms", csv_number(b.max_ms, 6)},
                            {"local_median_ms", csv_number(b.median_ms, 6)}, {"gbps", csv_number(b.gbps, 1)},
                            {"pct_peak", csv_number(b.pct_peak, 2)}, {"peak_gbps", csv_number(b.peak_gbps, 1)},
                            {"single_gpu_gbps", csv_number(b.gbps, 1)},
                            {"scaling", "1.00"}, {"verified", b.failed == 0 ? "true" : "false"},
                            {"checked", std::to_string(b.checked)}, {"failed", std::to_string(b.failed)},
                            {"check", b.check}});
        }
        for (const GpuRuns& gpu : r.gpus) {
            const TimingStats total = summarize(gpu.total_ms);
            const double local = median_of(gpu.local_ms);
            const double local_gbps = gbps(static_cast<double>(gpu.shard.count * value_bytes), local);
            std::optional<double> pct;
            if (gpu.gpu.peak_gbps) pct = 100.0 * local_gbps / *gpu.gpu.peak_gbps;
            rows.push_back({{"measurement", "gpu"}, {"collective", collective}, {"gpus", gpus},
                            {"rank", std::to_string(gpu.gpu.rank)}, {"device", gpu.gpu.device_name},
                            {"host", gpu.gpu.host}, {"type", type}, {"n", std::to_string(r.n)},
                            {"bytes", std::to_string(gpu.shard.count * value_bytes)},
                            {"shard_begin", std::to_string(gpu.shard.begin)},
                            {"shard_count", std::to_string(gpu.shard.count)}, {"runs", std::to_string(total.runs)},
                            {"median_ms", csv_number(total.median, 6)}, {"min_ms", csv_number(total.min, 6)},
                            {"max_ms", csv_number(total.max, 6)}, {"local_median_ms", csv_number(local, 6)},
                            {"collective_median_us", csv_number(1000.0 * median_of(gpu.collective_ms), 2)},
                            {"gbps", csv_number(local_gbps, 1)}, {"pct_peak", csv_number(pct, 2)},
                            {"peak_gbps", csv_number(gpu.gpu.peak_gbps, 1)},
                            {"verified", gpu.failed == 0 ? "true" : "false"}, {"checked", std::to_string(gpu.checked)},
                            {"failed", std::to_string(gpu.failed)},
                            {"check", gpu.checked ? (gpu.failed ? gpu.first_failure : "exact") : "not checked"},
                            {"gate_after_flush", gate}, {"nccl_proto", nccl_proto}});
        }
        std::vector<RankInfo> members;
        for (const GpuRuns& gpu : r.gpus) members.push_back(gpu.gpu);
        const auto peaks = sum_of_peaks(members);
        std::optional<double> pct, single, scaling;
        if (peaks) pct = 100.0 * total_gbps / *peaks;
        if (baseline && baseline->ran) {
            single = baseline->gbps;
            scaling = total_gbps / baseline->gbps;
        }
        rows.push_back({{"measurement", "aggregate"}, {"collective", collective}, {"gpus", gpus},
                        {"device", r.gpus.empty() ? "" : r.gpus.front().gpu.device_name}, {"type", type},
                        {"n", std::to_string(r.n)}, {"bytes", std::to_string(bytes)},
                        {"runs", std::to_string(r.run.runs)}, {"median_ms", csv_number(r.run.median, 6)},
                        {"min_ms", csv_number(r.run.min, 6)}, {"max_ms", csv_number(r.run.max, 6)},
                        {"gbps", csv_number(total_gbps, 1)}, {"pct_peak", csv_number(pct, 2)},
                        {"peak_gbps", csv_number(peaks, 1)}, {"single_gpu_gbps", csv_number(single, 1)},
                        {"scaling", csv_number(scaling, 3)}, {"verified", r.verified() ? "true" : "false"},
                        {"checked", std::to_string(r.checked)}, {"failed", std::to_string(r.failed)},
                        {"check", r.partials_ok ? r.check : r.check + "; " + r.partials_check},
                        {"gate_after_flush", gate}, {"nccl_proto", nccl_proto}});
    }
    if (allreduce && allreduce->ran) {
        const AllReduceResult& a = *allreduce;
        std::optional<double> pct_link;
        if (a.link.gbps) pct_link = 100.0 * a.busbw_gbps / *a.link.gbps;
        rows.push_back({{"measurement", "allreduce"}, {"collective", "allreduce"}, {"gpus", std::to_string(a.gpus)},
                        {"type", "float"}, {"n", std::to_string(a.elements)}, {"bytes", std::to_string(a.bytes)},
                        {"runs", std::to_string(a.run.runs)}, {"median_ms", csv_number(a.run.median, 6)},
                        {"min_ms", csv_number(a.run.min, 6)}, {"max_ms", csv_number(a.run.max, 6)},
                        {"algbw_gbps", csv_number(a.algbw_gbps, 2)}, {"busbw_gbps", csv_number(a.busbw_gbps, 2)},
                        {"link_peak_gbps", csv_number(a.link.gbps, 1)}, {"pct_link_peak", csv_number(pct_link, 2)},
                        {"verified", a.verified() ? "true" : "false"}, {"checked", std::to_string(a.checked_elements)},
                        {"failed", std::to_string(a.mismatches)}, {"check", a.check}, {"nccl_proto", nccl_proto}});
        if (a.peer_copy) {
            rows.push_back({{"measurement", "peer_copy"}, {"collective", "none"}, {"gpus", std::to_string(a.gpus)},
                            {"type", "float"}, {"n", std::to_string(a.elements)}, {"bytes", std::to_string(a.bytes)},
                            {"runs", std::to_string(a.peer_copy->runs)}, {"median_ms", csv_number(a.peer_copy->median, 6)},
                            {"min_ms", csv_number(a.peer_copy->min, 6)}, {"max_ms", csv_number(a.peer_copy->max, 6)},
                            {"algbw_gbps", csv_number(a.peer_copy_gbps, 2)},
                            {"link_peak_gbps", csv_number(a.link.gbps, 1)},
                            {"pct_link_peak", csv_number(a.link.gbps ? std::optional<double>(100.0 * a.peer_copy_gbps / *a.link.gbps) : std::nullopt, 2)},
                            {"verified", a.peer_copy_verified() ? "true" : "false"},
                            {"checked", std::to_string(a.peer_copy_checked)},
                            {"failed", std::to_string(a.peer_copy_mismatches)},
                            {"check", a.peer_copy_verified() ? "every received element equals the sender's"
                                                             : with_thousands(a.peer_copy_mismatches) +
                                                                   " received elements wrong" +
                                                                   (a.peer_copy_gate_timeouts ? "; start gate timed out"
                                                                                               : "")}});
        }
    }
    const auto& columns = multi_gpu_csv_columns();
    if (with_header) {
        for (std::size_t i = 0; i < columns.size(); ++i) out << (i ? "," : "") << columns[i];
        out << "\n";
    }
    for (const CsvRow& row : rows) {
        for (std::size_t i = 0; i < columns.size(); ++i) {
            const auto cell = row.find(columns[i]);
            out << (i ? "," : "") << (cell == row.end() ? "" : csv_field(cell->second));
        }
        out << "\n";
    }
}
