#!/usr/bin/env python3
"""Reads Nsight Systems' cuda_gpu_trace report (CSV, on stdin) of a two-launch reduction and
prints, for every first pass (a grid of more than one block) followed by its second pass (a
grid of one block) of the same kernel, when the second pass started and ended relative to
the end of the first, then the medians (docs/11-fixed-costs.md, section 11.4).

  gap_ns:  second pass's start - first pass's end (negative: the second was already on the
           GPU, waiting in cudaGridDependencySynchronize, while the first ran)
  tail_ns: second pass's end - first pass's end: what the finish adds after the reads

  nsys stats --report cuda_gpu_trace --format csv REPORT | scripts/pass_gaps.py KERNEL_SUBSTRING
  scripts/pass_gaps.py KERNEL_SUBSTRING < docs/results/timeline.txt   # nsys stats' table, as timeline.sh prints it
"""
import csv
import re
import statistics
import sys

# A kernel's row of the table nsys stats prints (not --format csv): Start, Duration, CorrId,
# GrdX, GrdY, GrdZ, BlkX, BlkY, BlkZ, Reg/Trd, ..., and the name last, after two spaces.
KERNEL_ROW = re.compile(r"\s*([\d,]+)\s+([\d,]+)\s+[\d,]+\s+([\d,]+)\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+\s")


def table_rows(lines):
    rows = []
    for line in lines:
        m = KERNEL_ROW.match(line)
        if m:
            rows.append({"Start (ns)": m[1].replace(",", ""), "Duration (ns)": m[2].replace(",", ""),
                         "GrdX": m[3].replace(",", ""), "Name": re.split(r"\s{2,}", line.strip())[-1]})
    return rows


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    wanted = sys.argv[1]
    lines = sys.stdin.read().splitlines()
    header_at = next((i for i, line in enumerate(lines) if "Start (ns)" in line), None)
    if header_at is None:
        print("pass_gaps.py: no cuda_gpu_trace header ('Start (ns)') on stdin", file=sys.stderr)
        return 1
    if "," in lines[header_at]:
        rows = list(csv.DictReader(lines[header_at:]))
    else:
        rows = table_rows(lines[header_at + 1:])
    kernels = [r for r in rows if wanted in r.get("Name", "")]
    print("first_start_ns,first_blocks,first_duration_ns,second_duration_ns,gap_ns,tail_ns")
    gaps, tails, firsts = [], [], []
    for first, second in zip(kernels, kernels[1:]):
        if int(first["GrdX"]) > 1 and int(second["GrdX"]) == 1:
            first_end = int(first["Start (ns)"]) + int(first["Duration (ns)"])
            second_start = int(second["Start (ns)"])
            second_end = second_start + int(second["Duration (ns)"])
            gaps.append(second_start - first_end)
            tails.append(second_end - first_end)
            firsts.append(int(first["Duration (ns)"]))
            print(f'{first["Start (ns)"]},{first["GrdX"]},{first["Duration (ns)"]},{second["Duration (ns)"]},'
                  f"{gaps[-1]},{tails[-1]}")
    if not gaps:
        print(f"pass_gaps.py: no first pass followed by a one-block second pass of '{wanted}'", file=sys.stderr)
        return 1
    print(f"# {len(gaps)} reductions: median first pass {statistics.median(firsts):.0f} ns, "
          f"median gap {statistics.median(gaps):.0f} ns, median tail {statistics.median(tails):.0f} ns "
          f"(gaps {min(gaps)} .. {max(gaps)} ns)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
