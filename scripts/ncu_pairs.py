#!/usr/bin/env python3
"""Nsight Compute counters of several profiles side by side (issue 31's X4 call).

  scripts/ncu_pairs.py DIR    # DIR holds ncu_<name>.csv, each ncu --csv output of a few launches
  scripts/ncu_pairs.py --durations DIR    # CSV: each profile's gpu__time_duration.sum over its
                                          # launches (median, min, max, in ms), for figure links

Prints, for each metric, each profile's values over its launches (launch order) and, for
smsp__inst_executed.sum, the instructions per warp (divided by sm__ctas_launched.sum x the
warps of a block, from launch__block_size where profiled, else 512 threads).
"""
import collections
import csv
import statistics
import sys
from pathlib import Path


def main():
    durations = len(sys.argv) == 3 and sys.argv[1] == "--durations"
    if len(sys.argv) != 2 and not durations:
        sys.exit(__doc__)
    profiles = {}
    for f in sorted(Path(sys.argv[-1]).glob("ncu_*.csv")):
        values = collections.defaultdict(list)
        with open(f) as fh:
            for r in csv.reader(fh):
                if len(r) > 14 and r[0] != "ID":
                    values[(r[12], r[13])].append(r[14].replace(",", ""))
        profiles[f.stem[4:]] = values
    if durations:
        print("profile,launches,median_ms,min_ms,max_ms")
        for name, values in profiles.items():
            ns = [float(v) for v in values.get(("gpu__time_duration.sum", "ns"), [])]
            if ns:
                print(f"{name},{len(ns)},{statistics.median(ns) / 1e6:.6f},{min(ns) / 1e6:.6f},{max(ns) / 1e6:.6f}")
        return
    metrics = sorted({m for v in profiles.values() for m in v})
    for name, values in profiles.items():
        print(f"== {name}")
        for m in metrics:
            print(f"  {m[0]:62s} {m[1]:10s} {' '.join(values.get(m, ['-']))}")
        inst = values.get(("smsp__inst_executed.sum", "inst"))
        ctas = values.get(("sm__ctas_launched.sum", "block"))
        if inst and ctas:
            block = float(values.get(("launch__block_size", ""), ["512"])[0])
            print(f"  instructions per warp: {float(inst[0]) / (float(ctas[0]) * block / 32):.1f}")


if __name__ == "__main__":
    main()
