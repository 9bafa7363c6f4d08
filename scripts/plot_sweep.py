#!/usr/bin/env python3
"""GB/s against n, one line per stage plus CUB and the device copy, from the CSV that
`reduce_all --sweep FROM:TO --csv` writes. One panel per CSV file (e.g. int and float).

    python3 -m pip install --user matplotlib      # once
    python3 scripts/plot_sweep.py docs/results/sweep_int.csv docs/results/sweep_float.csv \\
        -o docs/img/sweep_h100.png
"""
import argparse
import csv
import sys

LABELS = {"cub": "CUB DeviceReduce::Sum", "copy": "device copy (read + write)"}


def read_sweep(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"plot_sweep.py: {path} has no records")
    missing = {"stage", "kernel", "type", "n", "gbps", "verified", "device", "peak_gbps"} - set(rows[0])
    if missing:
        sys.exit(f"plot_sweep.py: {path} lacks columns {sorted(missing)}: is it reduce_all --csv output?")
    unverified = [r for r in rows if r["verified"] != "true"]
    if unverified:
        sys.exit(f"plot_sweep.py: {path}: {len(unverified)} records failed verification; not plotting them")
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", nargs="+", help="reduce_all --sweep ... --csv output, one file per panel")
    parser.add_argument("-o", "--output", required=True, help="the PNG to write")
    parser.add_argument("--title", help="figure title (default: the device and the method)")
    args = parser.parse_args()
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_sweep.py: matplotlib is missing: python3 -m pip install --user matplotlib")

    sweeps = [read_sweep(path) for path in args.csv]
    fig, axes = plt.subplots(1, len(sweeps), figsize=(7.5 * len(sweeps), 5.5), sharey=True, squeeze=False)
    for ax, rows in zip(axes[0], sweeps):
        series = {}
        for r in rows:
            name = r["stage"]
            label = LABELS.get(name, f"{name} {r['kernel']}")
            series.setdefault(label, ([], []))
            series[label][0].append(int(r["n"]))
            series[label][1].append(float(r["gbps"]))
        colors = plt.get_cmap("viridis")
        stages = [label for label in series if label not in LABELS.values()]
        for i, label in enumerate(stages):
            ax.plot(*series[label], marker="o", markersize=3, color=colors(i / max(1, len(stages) - 1)), label=label)
        if LABELS["cub"] in series:
            ax.plot(*series[LABELS["cub"]], color="crimson", linewidth=2, label=LABELS["cub"])
        if LABELS["copy"] in series:
            ax.plot(*series[LABELS["copy"]], color="gray", linestyle="--", label=LABELS["copy"])
        peak = float(rows[0]["peak_gbps"]) if rows[0]["peak_gbps"] else None
        if peak:
            ax.axhline(peak, color="black", linestyle=":", label=f"theoretical peak {peak:.0f} GB/s")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("n (elements)")
        ax.set_title(f"{rows[0]['type']} values")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("GB/s (bytes read / median time)")
    axes[0][0].legend(fontsize=8, loc="upper left")
    fig.suptitle(args.title or f"{sweeps[0][0]['device']}: median of timed runs, L2 flushed before each run")
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
