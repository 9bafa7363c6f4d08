#!/usr/bin/env python3
"""Kernel durations and the gaps between back-to-back launches, from nsys's cuda_gpu_trace CSV.

  devrun/gaps.py CSV NAME-SUBSTRING   # prints launches, median duration, median gap (us)
Only launches in runs of >= 50 back to back (gap < 20 us) count: the timed batches.
"""
import csv, statistics, sys
rows = []
with open(sys.argv[1]) as f:
    for r in csv.DictReader(f):
        name = r.get("Name", "")
        if sys.argv[2] in name:
            rows.append((int(r["Start (ns)"]), int(r["Duration (ns)"])))
rows.sort()
runs, cur = [], [rows[0]] if rows else []
for a, b in zip(rows, rows[1:]):
    if b[0] - (a[0] + a[1]) < 20000:
        cur.append(b)
    else:
        runs.append(cur); cur = [b]
if cur: runs.append(cur)
runs = [r for r in runs if len(r) >= 50]
durs = [d for r in runs for (_, d) in r]
gaps = [b[0] - (a[0] + a[1]) for r in runs for a, b in zip(r, r[1:])]
per = [(r[-1][0] + r[-1][1] - r[0][0]) / len(r) for r in runs]
print(f"{sys.argv[2]}: {len(runs)} batches, {len(durs)} launches; duration median {statistics.median(durs)/1e3:.3f} us "
      f"(min {min(durs)/1e3:.3f}, max {max(durs)/1e3:.3f}); gap median {statistics.median(gaps)/1e3:.3f} us "
      f"(min {min(gaps)/1e3:.3f}, max {max(gaps)/1e3:.3f}); batch time per launch median {statistics.median(per)/1e3:.3f} us")
