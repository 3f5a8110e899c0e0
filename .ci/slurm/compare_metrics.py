"""Check that two runs of the same preset produced the same metrics.

    python .ci/slurm/compare_metrics.py RESULTS_A RESULTS_B

RESULTS_A and RESULTS_B are two `results:` roots (e.g. a local run and a SLURM run of
config/smoke.yaml). Every aggregated table `<root>/<preset>/<experiment>/metrics.csv` must exist in
both, with the same columns and the same rows, cell for cell, as text (the CSV writes each float
with its full repr, so equal text = bitwise-equal numbers). Ignored: wall-time, provenance and
timing columns (they differ between any two runs). Path columns (`dataset`, `metrics_file`, ...)
are compared with the root replaced by `<results>`.

Exit status 0 when equal, 1 with the differences listed, 2 on a usage error or a missing table.
"""

import csv
import re
import sys
from pathlib import Path

IGNORED = re.compile(r"(wall|seconds|time|provenance|host|date|version)", re.IGNORECASE)


def tables(root):
    return {p.relative_to(root).as_posix(): p for p in sorted(root.glob("*/*/metrics.csv"))}


def read(path, root):
    prefixes = sorted({str(root), str(root.resolve())}, key=len, reverse=True)
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        columns = [c for c in reader.fieldnames or [] if not IGNORED.search(c)]
        rows = []
        for row in reader:
            cells = []
            for c in columns:
                value = row[c]
                for prefix in prefixes:
                    value = value.replace(prefix, "<results>")
                cells.append(value)
            rows.append(tuple(cells))
    return columns, sorted(rows)


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    root_a, root_b = (Path(a) for a in argv)
    tab_a, tab_b = tables(root_a), tables(root_b)
    if not tab_a:
        print(f"compare: no */*/metrics.csv under {root_a}", file=sys.stderr)
        return 2
    problems = []
    if set(tab_a) != set(tab_b):
        problems.append(f"different tables: {sorted(tab_a)} vs {sorted(tab_b)}")
    compared = 0
    for name in sorted(set(tab_a) & set(tab_b)):
        cols_a, rows_a = read(tab_a[name], root_a)
        cols_b, rows_b = read(tab_b[name], root_b)
        if cols_a != cols_b:
            problems.append(f"{name}: different columns: {cols_a} vs {cols_b}")
            continue
        if len(rows_a) != len(rows_b):
            problems.append(f"{name}: {len(rows_a)} rows vs {len(rows_b)} rows")
            continue
        for ra, rb in zip(rows_a, rows_b):
            for col, va, vb in zip(cols_a, ra, rb):
                if va != vb:
                    ident = dict(zip(cols_a, ra))
                    problems.append(
                        f"{name}: method={ident.get('method')} seed={ident.get('seed')}: {col}: {va!r} vs {vb!r}"
                    )
        compared += 1
        ignored = []
        with open(tab_a[name], newline="") as f:
            ignored = [c for c in next(csv.reader(f)) if IGNORED.search(c)]
        print(
            f"compare: {name}: {len(rows_a)} rows x {len(cols_a)} columns compared "
            f"(ignored: {', '.join(ignored) or 'none'})"
        )
    if problems:
        print(f"compare: METRICS DIFFER ({len(problems)} differences):", file=sys.stderr)
        for p in problems[:50]:
            print(f"  {p}", file=sys.stderr)
        return 1
    print(f"compare: {compared} table(s) equal")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
