#!/usr/bin/env python3
"""Alternating rounds of reduce7 builds and the probe, one line per row (issue 31's X1, X2, F1 calls).

  scripts/rounds.py DIR     # DIR holds reduce7_<round>.csv and probe_<type>_<round>.csv

reduce7_<round>.csv: reduce7 --csv rows with a timing column in front (and a build column where
the call compared builds); probe_*.csv: grid_layout_probe's output. Prints type, n (as 2^k),
method, the row's name (build, variant and block size), its GB/s in each round (the round's median) and the median of those.
Every row it reads must say it was verified.
"""
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from results_csv import rows as read_rows


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = Path(sys.argv[1])
    rows = defaultdict(dict)
    for f in sorted(d.glob("reduce7_*.csv")):
        rnd = f.stem.split("_")[-1]
        for r in read_rows(f):
            if r["stage"] != "reduce7":
                continue
            if r["verified"] != "true":
                sys.exit(f"rounds.py: a row not verified in {f}: {r}")
            name = (r["build"] + " " if "build" in r else "") + r["variant"] + " block=" + r["block"]
            if r.get("data", "integers") != "integers":
                name += " data=" + r["data"]
            rows[(r["type"], int(r["n"]).bit_length() - 1, r["timing"], name)][rnd] = float(r["gbps"])
    for f in sorted(d.glob("probe_*.csv")):
        rnd = f.stem.split("_")[-1]
        for r in read_rows(f):
            if r["verified"] != "yes":
                sys.exit(f"rounds.py: a row not verified in {f}: {r}")
            rows[(r["type"], int(r["n"]).bit_length() - 1, r["method"], "probe " + r["layout"])][rnd] = float(r["gbps"])
    print("type n method row GB/s_by_round median")
    for key in sorted(rows):
        by_round = rows[key]
        values = [by_round[k] for k in sorted(by_round)]
        print(f"{key[0]} 2^{key[1]} {key[2]:12s} {key[3]:52s} " + " ".join(f"{v:7.1f}" for v in values) +
              f"  {statistics.median(values):7.1f}")


if __name__ == "__main__":
    main()
