"""The CSV files that the harness (--csv), grid_layout_probe and the device scripts write,
as the Python scripts beside this one read them: lines starting with '#' (the program's
header: GPU, date, method) are skipped, the rest is one header row and the records.

    from results_csv import rows    # a script in scripts/ run as python3 scripts/NAME.py
"""
import csv


def rows(path):
    """The records of the CSV file at `path`, as dicts keyed by its header row."""
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))
