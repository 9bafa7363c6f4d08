#!/usr/bin/env python3
"""reduce7 against CUB like for like, from issue31_gpu.sh's like_for_like.csv (step 'cub').

    scripts/like_for_like.py docs/results/grid_layout_fcb7c24/like_for_like.csv

Each reduce7 row is paired with the CUB rows of the same small_inputs run (same build,
timing, type and n; small_inputs prints CUB right after the stage): int's atomic finish
against CUB's not_guaranteed determinism where the build has it (CCCL 3.5), else
run_to_run (CCCL 3.0.1 has no other for Sum); float's deterministic last-block finish
against run_to_run. x CUB = CUB's median / reduce7's. A pair where CUB's median is lower
is a tie when the difference is within the larger of the two rows' min-max spread,
else reduce7 is behind. Prints, per build, timing, type and block, the smallest x CUB
and every size that is not ahead.
"""
import sys

from results_csv import rows as read_rows


def pairs(path):
    rows = read_rows(path)
    for r in rows:  # a file from one build only may have no build column
        r.setdefault("build", "release")
    builds_with_not_guaranteed = {r["build"] for r in rows if "not_guaranteed" in r["variant"]}
    stage = None
    for r in rows:
        if r["stage"] == "reduce7":
            stage = r
            continue
        if not r["stage"].startswith("cub") or stage is None:
            continue
        if any(stage[k] != r[k] for k in ("build", "timing", "type", "n")):
            continue
        if r["type"] == "int" and r["build"] in builds_with_not_guaranteed:
            like = "not_guaranteed" in r["variant"]
        else:
            like = "run_to_run" in r["variant"]
        if not like:
            continue
        ours, cub = float(stage["median_us"]), float(r["median_us"])
        spread = max(float(stage["max_us"]) - float(stage["min_us"]), float(r["max_us"]) - float(r["min_us"]))
        verdict = "ahead" if cub >= ours else ("tie" if ours - cub <= spread else "behind")
        yield stage, r, cub / ours, verdict, spread


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: scripts/like_for_like.py LIKE_FOR_LIKE.CSV")
    groups = {}
    for stage, cub, ratio, verdict, spread in pairs(sys.argv[1]):
        key = (stage["build"], stage["timing"], stage["type"], stage["block"], stage["variant"], cub["variant"])
        groups.setdefault(key, []).append((int(stage["n"]), ratio, verdict, stage, cub, spread))
    if not groups:
        sys.exit("like_for_like.py: no reduce7 row with a CUB row of the same run")
    print("build,timing,type,block,reduce7,cub,sizes,lowest_x_cub,at_n,not_ahead")
    for key, items in groups.items():
        lowest = min(items, key=lambda item: item[1])
        not_ahead = [
            f"2^{n.bit_length() - 1} {verdict} {ratio:.3f} ({float(s['median_us']):.2f} vs {float(c['median_us']):.2f} us, spread {sp:.2f})"
            for n, ratio, verdict, s, c, sp in items if verdict != "ahead"
        ]
        print(",".join(key) + f",{len(items)},{lowest[1]:.3f},2^{lowest[0].bit_length() - 1},\"{'; '.join(not_ahead) or 'none'}\"")


if __name__ == "__main__":
    main()
