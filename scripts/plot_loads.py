#!/usr/bin/env python3
"""GB/s against n for each --loads, from scripts/loads_sweep.sh's CSV, as an SVG (no
packages needed): one panel per type, one color per --loads of reduce7 (a stage with a
--loads of its own would be dashed), CUB in black and the DRAM peak the harness uses as a
grey line.

    python3 scripts/plot_loads.py docs/results/loads_sweep.csv -o docs/img/loads_sweep.svg
"""
import argparse
import csv
import statistics
import sys
from collections import defaultdict

COLORS = {"1": "#d62728", "2": "#ff7f0e", "4": "#2ca02c", "8": "#1f77b4", "16": "#9467bd"}
DASHES = {"reduce7": "", "reduce6": "6,4"}
WIDTH, HEIGHT, MARGIN = 460, 340, 60  # one panel


def read_sweep(path):
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))]
    missing = {"loads", "stage", "type", "n", "gbps", "verified", "peak_gbps"} - set(rows[0] if rows else {})
    if missing:
        sys.exit(f"plot_loads.py: {path} lacks columns {sorted(missing)}: is it scripts/loads_sweep.sh's CSV?")
    unverified = [r for r in rows if r["verified"] != "true"]
    if unverified:
        sys.exit(f"plot_loads.py: {path}: {len(unverified)} records failed verification; not plotting")
    return rows


def panel(rows, type_name, left):
    """The SVG elements of one panel, its left edge at `left`."""
    series = defaultdict(list)  # (stage, loads) -> [(log2 n, GB/s)], CUB under ("cub", "")
    for r in rows:
        if r["type"] != type_name:
            continue
        key = (r["stage"], "" if r["stage"] == "cub" else r["loads"])
        if r["stage"] in DASHES or r["stage"] == "cub":
            series[key].append((int(r["n"]).bit_length() - 1, float(r["gbps"])))
    peak = max(float(r["peak_gbps"]) for r in rows)
    xs = sorted({x for points in series.values() for x, _ in points})
    x_of = lambda x: left + MARGIN + (x - xs[0]) / max(1, xs[-1] - xs[0]) * (WIDTH - 1.5 * MARGIN)
    y_of = lambda y: HEIGHT - MARGIN + 20 - y / (peak * 1.05) * (HEIGHT - 1.5 * MARGIN)
    out = [f'<text x="{left + WIDTH / 2}" y="20" text-anchor="middle" font-weight="bold">{type_name}</text>',
           f'<line x1="{x_of(xs[0])}" y1="{y_of(peak)}" x2="{x_of(xs[-1])}" y2="{y_of(peak)}" stroke="#999"/>',
           f'<text x="{x_of(xs[0]) + 4}" y="{y_of(peak) - 4}" font-size="11" fill="#666">peak {peak:.0f} GB/s</text>',
           f'<line x1="{x_of(xs[0])}" y1="{y_of(0)}" x2="{x_of(xs[-1])}" y2="{y_of(0)}" stroke="black"/>',
           f'<line x1="{x_of(xs[0])}" y1="{y_of(0)}" x2="{x_of(xs[0])}" y2="{y_of(peak * 1.05)}" stroke="black"/>']
    for x in xs:
        out.append(f'<text x="{x_of(x)}" y="{y_of(0) + 16}" text-anchor="middle" font-size="11">2^{x}</text>')
    for y in range(0, int(peak) + 1, 500):
        out.append(f'<text x="{x_of(xs[0]) - 6}" y="{y_of(y) + 4}" text-anchor="end" font-size="11">{y}</text>')
    out.append(f'<text x="{left + WIDTH / 2}" y="{HEIGHT - 8}" text-anchor="middle" font-size="12">n (elements)</text>')
    for (stage, loads), points in sorted(series.items()):
        by_x = defaultdict(list)
        for x, y in points:
            by_x[x].append(y)
        path = " ".join(f"{x_of(x):.1f},{y_of(statistics.median(ys)):.1f}" for x, ys in sorted(by_x.items()))
        color = "black" if stage == "cub" else COLORS.get(loads, "gray")
        dash = f' stroke-dasharray="{DASHES[stage]}"' if DASHES.get(stage) else ""
        out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="1.6"{dash}>'
                   f'<title>{stage} {("--loads " + loads) if loads else ""}</title></polyline>')
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", help="scripts/loads_sweep.sh's loads_sweep.csv")
    parser.add_argument("-o", "--output", required=True, help="the SVG to write")
    args = parser.parse_args()
    rows = read_sweep(args.csv)
    types = [t for t in ("int", "float", "double") if any(r["type"] == t for r in rows)]
    legend_height = 40
    total_width = WIDTH * len(types)
    body = []
    for i, type_name in enumerate(types):
        body += panel(rows, type_name, i * WIDTH)
    # The legend: colors are --loads, dashes the stage; GB/s is the median over repetitions.
    y = HEIGHT + 14
    x = 20
    for loads, color in COLORS.items():
        body.append(f'<line x1="{x}" y1="{y}" x2="{x + 20}" y2="{y}" stroke="{color}" stroke-width="2"/>'
                    f'<text x="{x + 24}" y="{y + 4}" font-size="11">--loads {loads}</text>')
        x += 85
    body.append(f'<line x1="{x}" y1="{y}" x2="{x + 20}" y2="{y}" stroke="black" stroke-width="2"/>'
                f'<text x="{x + 24}" y="{y + 4}" font-size="11">CUB</text>')
    body.append(f'<text x="20" y="{y + 22}" font-size="11">reduce7 (16-byte loads, block 256, the grid that '
                'fits at once); GB/s, median of the repetitions, y axis from 0</text>')
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_width}" height="{HEIGHT + legend_height}" '
           'font-family="sans-serif" font-size="12">', '<rect width="100%" height="100%" fill="white"/>'] + body + ["</svg>"]
    with open(args.output, "w") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
