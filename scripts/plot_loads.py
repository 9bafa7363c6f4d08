#!/usr/bin/env python3
"""GB/s against n for each --loads, from scripts/loads_sweep.sh's CSV, as an SVG
(scripts/lib/svg_plot.py: no packages needed): one panel per type, one color per --loads of
reduce7 (a stage with a --loads of its own would be dashed), CUB in black and the DRAM peak
the harness uses as a grey line.

    python3 scripts/plot_loads.py docs/results/loads_sweep.csv -o docs/img/loads_sweep.svg
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from svg_plot import Series, read_verified_csv, write_svg  # noqa: E402

COLORS = {"1": "#d62728", "2": "#ff7f0e", "4": "#2ca02c", "8": "#1f77b4", "16": "#9467bd"}
DASHES = {"reduce7": "", "reduce6": "6,4"}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", help="scripts/loads_sweep.sh's loads_sweep.csv")
    parser.add_argument("-o", "--output", required=True, help="the SVG to write")
    args = parser.parse_args()
    rows = read_verified_csv(args.csv, {"loads", "stage", "type", "n", "gbps", "verified", "peak_gbps"}, "plot_loads.py")
    panels = []
    for type_name in (t for t in ("int", "float", "double") if any(r["type"] == t for r in rows)):
        series = {}  # (stage, loads) -> Series; CUB under ("cub", "")
        for r in rows:
            if r["type"] != type_name or not (r["stage"] in DASHES or r["stage"] == "cub"):
                continue
            key = (r["stage"], "" if r["stage"] == "cub" else r["loads"])
            if key not in series:
                color = "black" if r["stage"] == "cub" else COLORS.get(r["loads"], "gray")
                label = r["stage"] + (f" --loads {r['loads']}" if key[1] else "")
                series[key] = Series(label, color, DASHES.get(r["stage"], ""))
            series[key].add(r["n"], r["gbps"])
        panels.append((type_name, [series[k] for k in sorted(series)], max(float(r["peak_gbps"]) for r in rows)))
    # The legend: colors are --loads, dashes the stage; GB/s is the median over repetitions.
    legend = [Series(f"--loads {loads}", color) for loads, color in COLORS.items()] + [Series("CUB", "black")]
    write_svg(args.output, panels, legend, "reduce7 (16-byte loads, block 256, the grid that fits at once); GB/s, "
              "median of the repetitions, y axis from 0", per_row=6)


if __name__ == "__main__":
    main()
