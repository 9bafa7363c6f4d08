"""The one way this repository draws a plot: GB/s against n as SVG line panels, with the
standard library alone (no plotting package to install). scripts/plot_sweep.py and
scripts/plot_loads.py use it.

A panel is a title and a list of Series; x is log2(n), the y axis runs from 0 to a little
above the DRAM peak the harness used, which is drawn as a grey line."""
import csv
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass, field

WIDTH, HEIGHT, MARGIN = 460, 340, 60  # one panel, in SVG units


def read_verified_csv(path, needed, script):
    """The records of a harness CSV (lines starting with '#' skipped); exits with one line
    where a column is missing or any record failed verification: nothing unverified is drawn."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    if not rows:
        sys.exit(f"{script}: {path} has no records")
    missing = set(needed) - set(rows[0])
    if missing:
        sys.exit(f"{script}: {path} lacks columns {sorted(missing)}")
    unverified = [r for r in rows if r["verified"] != "true"]
    if unverified:
        sys.exit(f"{script}: {path}: {len(unverified)} records failed verification; not plotting")
    return rows


@dataclass
class Series:
    label: str
    color: str
    dash: str = ""  # an SVG stroke-dasharray, "" for a solid line
    points: dict = field(default_factory=lambda: defaultdict(list))  # log2 n -> [GB/s], the median is drawn

    def add(self, n, gbps):
        self.points[int(n).bit_length() - 1].append(float(gbps))


def panel(title, series, peak, left):
    """The SVG elements of one panel, its left edge at `left`."""
    xs = sorted({x for s in series for x in s.points})
    x_of = lambda x: left + MARGIN + (x - xs[0]) / max(1, xs[-1] - xs[0]) * (WIDTH - 1.5 * MARGIN)
    y_of = lambda y: HEIGHT - MARGIN + 20 - y / (peak * 1.05) * (HEIGHT - 1.5 * MARGIN)
    out = [f'<text x="{left + WIDTH / 2}" y="20" text-anchor="middle" font-weight="bold">{title}</text>',
           f'<line x1="{x_of(xs[0])}" y1="{y_of(peak)}" x2="{x_of(xs[-1])}" y2="{y_of(peak)}" stroke="#999"/>',
           f'<text x="{x_of(xs[0]) + 4}" y="{y_of(peak) - 4}" font-size="11" fill="#666">peak {peak:.0f} GB/s</text>',
           f'<line x1="{x_of(xs[0])}" y1="{y_of(0)}" x2="{x_of(xs[-1])}" y2="{y_of(0)}" stroke="black"/>',
           f'<line x1="{x_of(xs[0])}" y1="{y_of(0)}" x2="{x_of(xs[0])}" y2="{y_of(peak * 1.05)}" stroke="black"/>']
    step = max(1, (len(xs) + 9) // 10)  # at most ten labels on the x axis
    for x in xs[::step]:
        out.append(f'<text x="{x_of(x)}" y="{y_of(0) + 16}" text-anchor="middle" font-size="11">2^{x}</text>')
    for y in range(0, int(peak) + 1, 500):
        out.append(f'<text x="{x_of(xs[0]) - 6}" y="{y_of(y) + 4}" text-anchor="end" font-size="11">{y}</text>')
    out.append(f'<text x="{left + WIDTH / 2}" y="{HEIGHT - 8}" text-anchor="middle" font-size="12">n (elements)</text>')
    for s in series:
        path = " ".join(f"{x_of(x):.1f},{y_of(statistics.median(ys)):.1f}" for x, ys in sorted(s.points.items()))
        dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
        out.append(f'<polyline points="{path}" fill="none" stroke="{s.color}" stroke-width="1.6"{dash}>'
                   f'<title>{s.label}</title></polyline>')
    return out


def write_svg(path, panels, legend, caption, per_row=5):
    """panels: [(title, [Series], peak)]; legend: [Series] (label, color, dash), `per_row` a line."""
    body = []
    for i, (title, series, peak) in enumerate(panels):
        body += panel(title, series, peak, i * WIDTH)
    y = HEIGHT + 14
    for row in range(0, len(legend), per_row):
        x = 20
        for s in legend[row:row + per_row]:
            dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
            body.append(f'<line x1="{x}" y1="{y}" x2="{x + 20}" y2="{y}" stroke="{s.color}" stroke-width="2"{dash}/>'
                        f'<text x="{x + 24}" y="{y + 4}" font-size="11">{s.label}</text>')
            x += max(85, 24 + 7 * len(s.label))
        y += 18
    body.append(f'<text x="20" y="{y + 4}" font-size="11">{caption}</text>')
    height = y + 16
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH * len(panels)}" height="{height}" '
           'font-family="sans-serif" font-size="12">', '<rect width="100%" height="100%" fill="white"/>'] + body + ["</svg>"]
    with open(path, "w") as f:
        f.write("\n".join(svg) + "\n")
    print(f"wrote {path}")
