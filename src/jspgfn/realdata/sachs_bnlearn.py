"""Sachs source 2: bnlearn's discretised `sachs.interventional.txt` (Scutari; levels 1..3 of the 11
proteins and an INT column), read, turned into a dataset whose conditions are the groups of rows with the
same intervention target, and written (for tests and for users who hand the cdt-derived data to bnlearn).
"""

import csv
import gzip
from pathlib import Path

import numpy as np

from jspgfn.errors import DataError, JspgfnError, check_count
from jspgfn.realdata.sachs_assemble import assemble, check_test_labels, dataset_meta, sachs_dataset
from jspgfn.realdata.sachs_study import NAMES, NUM_LEVELS, Condition, column_order

DEFAULT_TEST_TARGETS = ("PIP2", "Mek")  # the same two conditions, as bnlearn's file identifies them


def open_text(path):
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(path, encoding="utf-8-sig")


def read_bnlearn_interventional(path):
    """bnlearn's sachs.interventional.txt (optionally .gz): (codes int64 [N, 11] in 0..2 in the order of
    NAMES, target int64 [N]: index into NAMES of the intervened protein, -1 for none).

    The file is whitespace-separated with a header of the 11 proteins and INT; levels are 1..3; INT is the
    1-based position of the intervened protein among the file's columns, 0 for none. Every malformed
    input raises DataError naming the file, the line and the problem.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "file not found")
    try:
        with open_text(path) as handle:
            lines = [(n + 1, line.split()) for n, line in enumerate(handle)]
    except (UnicodeDecodeError, OSError, EOFError) as exc:
        raise DataError(path, f"not a text file ({exc.__class__.__name__})") from None
    lines = [(n, tokens) for n, tokens in lines if tokens]
    if not lines:
        raise DataError(path, "empty file: expected a header of the 11 Sachs proteins and INT")
    header = [token.strip('"') for token in lines[0][1]]
    if [h.upper() for h in header].count("INT") != 1:
        raise DataError(path, "header has no INT column (bnlearn's sachs.interventional.txt has one)")
    int_col = [h.upper() for h in header].index("INT")
    protein_cols = [c for c in range(len(header)) if c != int_col]
    order = column_order([header[c] for c in protein_cols], path)
    if len(lines) == 1:
        raise DataError(path, "no observations below the header")
    codes = np.empty((len(lines) - 1, len(NAMES)), dtype=np.int64)
    target = np.empty(len(lines) - 1, dtype=np.int64)
    for r, (line, tokens) in enumerate(lines[1:]):
        tokens = [token.strip('"') for token in tokens]
        if len(tokens) != len(header):
            raise DataError(path, f"line {line} has {len(tokens)} values, the header has {len(header)} (ragged row)")
        for c, token in enumerate(tokens):
            name = header[c]
            if not token.isdigit():
                raise DataError(path, f"line {line}, column '{name}': expected a non-negative integer, got {token!r}")
            value = int(token)
            if c == int_col:
                if value > len(protein_cols):
                    raise DataError(path, f"line {line}, column 'INT': {value} is not 0 or a protein column 1..11")
                target[r] = -1 if value == 0 else order[value - 1]
            elif not 1 <= value <= NUM_LEVELS:
                raise DataError(path, f"line {line}, column '{name}': level {value} is not 1, 2 or 3")
            else:
                codes[r, order[protein_cols.index(c)]] = value - 1
    return codes, target


def sachs_from_bnlearn(path, seed=0, test_targets=DEFAULT_TEST_TARGETS, num_train=None):
    """The Sachs Dataset from bnlearn's discretised sachs.interventional.txt (all its rows).

    Conditions are the groups of rows with the same INT (the file has no condition label): 'observational'
    (INT 0) and one per intervened protein, labelled by that protein. The groups whose target is in
    `test_targets` (default PIP2 and Mek: psitect and u0126, as for cdt's table) are the test data.
    """
    check_count("seed", seed, 0)
    path = Path(path)
    codes, target = read_bnlearn_interventional(path)
    present = sorted(set(target.tolist()), key=lambda t: (t >= 0, t))
    conditions = [
        Condition(
            "observational" if t < 0 else NAMES[t],
            "as coded in bnlearn's INT column",
            int(np.sum(target == t)),
            () if t < 0 else (NAMES[t],),
            "none" if t < 0 else "intervention",
            "bnlearn sachs.interventional.txt INT column",
        )
        for t in present
    ]
    test_labels = check_test_labels(test_targets, [c.label for c in conditions], "intervention target")
    if "observational" in test_labels:
        raise JspgfnError("the observational rows cannot be held out: hold out intervention targets")
    blocks = [codes[target == t] for t in present]
    rng = np.random.default_rng(seed)
    train, train_int, test, test_int, ranges = assemble(blocks, conditions, test_labels, rng, num_train)
    discretisation = {
        "rule": "as supplied: bnlearn's levels 1..3 (Sachs et al.'s discretisation) minus 1: 0 low, 1 average, 2 high"
    }
    extra = {
        "condition_labels": "groups of rows with the same INT value of bnlearn's file (labelled by the target)",
        "rows_per_condition": None,
    }
    meta = dataset_meta("bnlearn", path, seed, conditions, blocks, ranges, discretisation, extra)
    return sachs_dataset(train, train_int, test, test_int, meta, path)


def write_bnlearn_format(path, codes, target):
    """Write codes int [N, 11] (0..2, order of NAMES) and target int [N] (-1 or index into NAMES) in
    bnlearn's sachs.interventional.txt format (levels 1..3, INT 1-based, 0 for none); for tests and
    for users who want to hand the cdt-derived data to bnlearn."""
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle, delimiter=" ", lineterminator="\n")
        writer.writerow(list(NAMES) + ["INT"])
        for row, t in zip(np.asarray(codes), np.asarray(target)):
            writer.writerow([int(v) + 1 for v in row] + [int(t) + 1])
