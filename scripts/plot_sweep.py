#!/usr/bin/env python3
"""GB/s against n, one line per stage plus CUB and the device copy, from the CSV that
`reduce_all --sweep FROM:TO --csv` writes, as an SVG (scripts/lib/svg_plot.py: no packages
needed). One panel per CSV file (e.g. int and float).

    python3 scripts/plot_sweep.py docs/results/sweep_int.csv docs/results/sweep_float.csv \\
        -o docs/img/sweep.svg
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from svg_plot import Series, read_verified_csv, write_svg  # noqa: E402

# reduce0 ... reduce7 from light to dark, so that each lesson's step reads as a shift.
STAGE_COLORS = ["#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b", "#2ca02c"]
OTHERS = {"cub": ("CUB DeviceReduce::Sum", "crimson", ""), "copy": ("device copy (read + write)", "gray", "6,4")}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", nargs="+", help="reduce_all --sweep ... --csv output, one file per panel")
    parser.add_argument("-o", "--output", required=True, help="the SVG to write")
    args = parser.parse_args()
    needed = {"stage", "kernel", "type", "n", "gbps", "verified", "device", "peak_gbps"}
    panels, legend = [], {}
    for path in args.csv:
        rows = read_verified_csv(path, needed, "plot_sweep.py")
        series = {}
        for r in rows:
            stage = r["stage"]
            if stage not in OTHERS and not (stage.startswith("reduce") and stage[6:].isdigit()):
                continue  # the library stages (reduce7_cg, reduce7_cub) belong to docs/09, not this figure
            if stage not in series:
                label, color, dash = OTHERS.get(stage, (stage, "", ""))
                if not color:
                    color = STAGE_COLORS[min(int(stage[6:]), len(STAGE_COLORS) - 1)]
                series[stage] = Series(label, color, dash)
            series[stage].add(r["n"], r["gbps"])
        ordered = [series[s] for s in sorted(series, key=lambda s: (s in OTHERS, s))]
        panels.append((f"{rows[0]['type']} values", ordered, float(rows[0]["peak_gbps"])))
        for s in ordered:
            legend.setdefault(s.label, s)
    device = rows[0]["device"]
    write_svg(args.output, panels, list(legend.values()),
              f"{device}: GB/s (bytes read / median time of the timed runs, L2 flushed before each), y axis from 0",
              per_row=5)


if __name__ == "__main__":
    main()
