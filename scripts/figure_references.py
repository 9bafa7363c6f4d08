#!/usr/bin/env python3
"""Rewrites a page's inline figure links as reference-style figures (tools/figures.h).

    [51.3 us](results/results.csv "stage=...; -> median_ms:median")
becomes
    [51.3 us][f1]
with, at the page's foot, after a comment that says what they are,
    [f1]: results/results.csv "stage=...; -> median_ms:median"

so that the raw Markdown reads: a figure's source and query stay checkable by
build/release/bin/figures but no longer sit inside the sentence. Figures with the same
source and query share one label. A page's existing definitions are kept and their
labels not reused.

    scripts/figure_references.py PAGE...      # rewrites each page in place
"""
import re
import sys

INLINE = re.compile(r'\[([^\]\[]+)\]\(([^)\s]*results/[^)\s]+) "([^"]+)"\)')
DEFINITION = re.compile(r'^\[(f(\d+))\]: (\S+) "([^"]+)"[ \t]*$', re.M)
FOOT = "<!-- Figures: each [number][fN] above is checked against the source and query below by build/release/bin/figures (tools/figures.h). -->"


def convert(page):
    labels = {}  # (target, query) -> label
    used = [int(m.group(2)) for m in DEFINITION.finditer(page)]
    for m in DEFINITION.finditer(page):
        labels[(m.group(3), m.group(4))] = m.group(1)
    next_number = max(used, default=0) + 1
    new = []

    def label_of(target, query):
        nonlocal next_number
        key = (target, query)
        if key not in labels:
            labels[key] = "f%d" % next_number
            next_number += 1
            new.append(key)
        return labels[key]

    body = INLINE.sub(lambda m: "[%s][%s]" % (m.group(1), label_of(m.group(2), m.group(3))), page)
    if not new:
        return page
    body = body.rstrip("\n") + "\n"
    if FOOT not in body:
        body += "\n" + FOOT + "\n\n"
    body += "".join('[%s]: %s "%s"\n' % (labels[k], k[0], k[1]) for k in new)
    return body


def main(paths):
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for path in paths:
        with open(path, encoding="utf-8") as f:
            page = f.read()
        converted = convert(page)
        if converted != page:
            with open(path, "w", encoding="utf-8") as f:
                f.write(converted)
            print("%s: %d inline figures made reference-style" % (path, len(INLINE.findall(page))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
