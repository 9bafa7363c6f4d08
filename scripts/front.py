#!/usr/bin/env python3
"""reduce7's default beside the fastest other kernel of the same run (issue 31's "at the front").

  scripts/front.py DIR      # DIR: the output of STEPS="blocks probe public" scripts/issue31_gpu.sh

Reads DIR/reduce7_blocks.csv (reduce7 at --block 256/512/1024; the default block's rows are
reduce7's default), DIR/public_reduce7.csv (reduce7's int default before and after the public
kernels), DIR/public_timed.csv (kernel_9 and fast.cu's kernels 1-4 under the harness's two
methods) and DIR/grid_layout.csv (grid_layout_probe: reduce7's loop body in its one-shot layouts;
for float only its deterministic finish, the probe's "+atomic" layouts left out, as reduce7's
float default is deterministic). A file that is not there is left out (a call that ran some
of the steps).
For each type, n and method it prints reduce7's lowest median of its runs there and the
fastest other row, each with its run's min-max in GB/s, their ratio, and the verdict:
"ahead" (ratio >= 1), "tie" (behind by less than the larger of the two rows' min-max spread,
issue 31's rule) or "BEHIND". Every row it reads must say it was verified.
"""
import sys
from pathlib import Path

from results_csv import rows

DEFAULT_BLOCK = 512  # reduce7's record (.default_block)


def gbps_range(r, bytes_):
    return bytes_ / float(r["max_ms"]) / 1e6, bytes_ / float(r["min_ms"]) / 1e6


def verified(r):
    if r.get("verified") not in ("true", "yes"):
        sys.exit(f"front.py: a row not verified: {r}")
    return r


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = Path(sys.argv[1])
    ours, others = {}, {}

    def rows_of(name):  # a call that ran some of the steps has some of the files
        return rows(d / name) if (d / name).exists() else []

    def add(table, key, name, r, bytes_):
        lo, hi = gbps_range(verified(r), bytes_)
        table.setdefault(key, []).append((float(r["gbps"]), lo, hi, name))

    for r in rows_of("reduce7_blocks.csv"):
        if r["stage"] == "reduce7" and int(r["block"]) == DEFAULT_BLOCK:
            add(ours, (r["type"], int(r["n"]), r["timing"]), f"reduce7 {r['variant']} (blocks step)", r, int(r["bytes"]))
    for r in rows_of("public_reduce7.csv"):
        if r["stage"] == "reduce7":  # the run's CUB and copy rows are not reduce7's
            add(ours, (r["type"], int(r["n"]), r["timing"]), f"reduce7 {r['variant']} (public step)", r, int(r["bytes"]))
    for r in rows_of("public_timed.csv"):
        add(others, (r["type"], int(r["n"]), r["timing"]), f"{r['program']} {r['kernel']}", r, int(r["bytes"]))
    for r in rows_of("grid_layout.csv"):
        if not r["layout"].startswith("one-shot"):
            continue  # issue 31's yardstick is the one-shot grid (the resident layouts are reduce7's own lesson)
        if r["type"] != "int" and "+atomic" in r["layout"]:
            continue  # float's atomic finish gives other bits run to run: not like for like with last-block
        size = {"int": 4, "float": 4, "double": 8}[r["type"]]
        add(others, (r["type"], int(r["n"]), r["method"]), f"probe {r['layout']}", r, int(r["n"]) * size)

    print("type,n,method,reduce7_gbps,reduce7_min,reduce7_max,reduce7_row,fastest_other,other_gbps,other_min,other_max,ratio,verdict")
    for key in sorted(ours, key=lambda k: (k[0], k[1], k[2])):
        if key not in others:
            continue
        mine = min(ours[key])             # reduce7's lowest median of its runs here
        best = max(others[key])           # the fastest other row
        ratio = mine[0] / best[0]
        spread = max(mine[2] - mine[1], best[2] - best[1])
        verdict = "ahead" if ratio >= 1 else ("tie" if best[0] - mine[0] <= spread else "BEHIND")
        t, n, m = key
        print(f"{t},2^{n.bit_length() - 1},{m},{mine[0]:.1f},{mine[1]:.1f},{mine[2]:.1f},{mine[3]},"
              f"{best[3]},{best[0]:.1f},{best[1]:.1f},{best[2]:.1f},{ratio:.4f},{verdict}")


if __name__ == "__main__":
    main()
