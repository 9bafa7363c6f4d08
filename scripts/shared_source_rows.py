#!/usr/bin/env python3
"""The shared-memory instructions of one kernel, from Nsight Compute's source page.

Reads `ncu --import REPORT --page source --csv --print-source sass` (one row per SASS
instruction) and prints, as CSV, every instruction that used the shared-memory pipe, with
its wavefronts: how many it took, how many it would take without bank conflicts (ideal),
and the excess. A wavefront is one pass through the 32 banks; an access in which k lanes
want different rows of one bank needs k of them, so the excess is what conflicts cost.

    python3 scripts/shared_source_rows.py SOURCE.csv --label reduce2 [--header]
"""
import argparse
import csv
import sys

# The source page's columns (Nsight Compute's names) and ours. The ones after the first
# three are optional: a version without them prints the column empty.
COLUMNS = [
    ("Address", "address"),
    ("Source", "sass"),
    ("Instructions Executed", "instructions_executed"),
    ("L1 Wavefronts Shared", "wavefronts"),
    ("L1 Wavefronts Shared Ideal", "ideal_wavefronts"),
    ("L1 Wavefronts Shared Excessive", "excessive_wavefronts"),
    ("L1 Conflicts Shared N-Way", "conflicts_n_way"),
]


def number(text):
    text = (text or "").replace(",", "").strip()
    try:
        return float(text)
    except ValueError:
        return 0.0


def plain(value):
    return str(int(value)) if value.is_integer() else repr(value)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source_csv")
    parser.add_argument("--label", required=True, help="the first column of every row (the stage profiled)")
    parser.add_argument("--header", action="store_true", help="print the header line first")
    args = parser.parse_args()
    with open(args.source_csv, newline="") as f:
        rows = list(csv.reader(f))
    # ncu may print lines before the table (the kernel's name): the header is the first
    # row that names the address and the wavefront columns.
    start = next((i for i, r in enumerate(rows) if "Address" in r and "L1 Wavefronts Shared" in r), None)
    if start is None:
        sys.exit(f"shared_source_rows.py: {args.source_csv} has no source table with 'Address' and "
                 "'L1 Wavefronts Shared' (was the report made with --section SourceCounters?)")
    header = rows[start]
    where = {name: header.index(name) for name, _ in COLUMNS if name in header}
    if "Source" not in where:  # some versions call it "SASS Source"
        where["Source"] = next(i for i, name in enumerate(header) if "Source" in name)
    out = csv.writer(sys.stdout, lineterminator="\n")
    if args.header:
        out.writerow(["stage"] + [ours for _, ours in COLUMNS])
    for row in rows[start + 1:]:
        if len(row) != len(header):
            continue
        if number(row[where["L1 Wavefronts Shared"]]) == 0:
            continue  # not a shared-memory instruction, or never executed
        fields = [row[where[name]].strip() if name in where else "" for name, _ in COLUMNS]
        counts = [plain(number(text)) if text else "" for text in fields[2:]]  # "1,024" -> 1024
        out.writerow([args.label] + fields[:2] + counts)


if __name__ == "__main__":
    main()
