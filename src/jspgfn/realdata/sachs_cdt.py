"""Sachs source 1: the raw continuous table `cyto_full_data.csv` shipped by cdt (the Causal Discovery
Toolbox), found without importing cdt, its condition blocks RECONSTRUCTED from their sizes, discretised
by tertiles of the observational conditions (sachs.py's docstring says how and why).
"""

import contextlib
import importlib.metadata
import importlib.util
from pathlib import Path

import numpy as np

from jspgfn.dataset import read_csv_matrix
from jspgfn.errors import DataError, JspgfnError, check_count
from jspgfn.realdata.sachs_assemble import (
    assemble,
    check_test_labels,
    dataset_meta,
    discretise,
    sachs_dataset,
    sample_rows,
    split_blocks,
    tertile_cuts,
)
from jspgfn.realdata.sachs_study import CONDITIONS, NAMES, column_order, reorder_columns

ROWS_PER_CONDITION = 600
DEFAULT_TEST_CONDITIONS = ("psitect", "u0126")
CDT_RELATIVE_PATH = "data/resources/cyto_full_data.csv"
CONDITION_LABEL_NOTE = (
    "RECONSTRUCTED from block sizes: cdt's cyto_full_data.csv has no condition column; its rows are read "
    "as the 9 conditions of Sachs et al. (2005) concatenated in the order cd3cd28, icam2, aktinhib, g0076, "
    "psitect, u0126, ly, pma, b2camp with sizes 853, 902, 911, 723, 810, 799, 848, 913, 707 (the row counts "
    "of their 9 files; a change-point fit found the same boundaries within 12 rows). The order is an inference."
)


def cdt_data_path():
    """Path of cdt's cyto_full_data.csv, found without importing cdt (raises JspgfnError if absent)."""
    candidates = []
    with contextlib.suppress(ImportError, ValueError):
        spec = importlib.util.find_spec("cdt")  # a top-level spec: cdt/__init__.py is not executed
        if spec is not None and spec.submodule_search_locations:
            candidates += [Path(p) / CDT_RELATIVE_PATH for p in spec.submodule_search_locations]
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        for file in importlib.metadata.files("cdt") or ():
            if str(file).replace("\\", "/").endswith(CDT_RELATIVE_PATH):
                candidates.append(Path(file.locate()))
    for path in candidates:
        if path.is_file():
            return path
    raise JspgfnError(
        "the Sachs flow cytometry table is taken from the package cdt (Causal Discovery Toolbox), which is "
        "not installed: run `pip install --no-deps cdt` (it is only a data source), or pass bnlearn's "
        "sachs.interventional.txt"
    )


def read_cdt_table(path):
    """cdt's raw table: float [7466, 11] in the order of NAMES (raises DataError naming the file)."""
    header, values = read_csv_matrix(path)
    order = column_order(header, path)
    expected = sum(c.size for c in CONDITIONS)
    if len(values) != expected:
        raise DataError(
            path,
            f"has {len(values)} data rows, expected {expected} (the 9 Sachs conditions of sizes "
            f"{', '.join(str(c.size) for c in CONDITIONS)}): not cdt's cyto_full_data.csv",
        )
    if np.any(values < 0):
        r, c = (int(i) for i in np.argwhere(values < 0)[0])
        raise DataError(path, f"line {r + 2}, column '{header[c]}': negative concentration {float(values[r, c])!r}")
    return reorder_columns(values, order)


def sachs_from_cdt(
    seed=0, rows_per_condition=ROWS_PER_CONDITION, test_conditions=DEFAULT_TEST_CONDITIONS, num_train=None, path=None
):
    """The Sachs Dataset from cdt's raw table (`path`, default: found with cdt_data_path).

    Returns a Dataset with train [N, 11] codes (N = 7 * rows_per_condition, or num_train), test
    [2 * rows_per_condition, 11], both intervention masks, the reference graph and metadata.
    """
    check_count("seed", seed, 0)
    check_count("rows_per_condition", rows_per_condition, 1, min(c.size for c in CONDITIONS))
    test_labels = check_test_labels(test_conditions, [c.label for c in CONDITIONS], "condition")
    path = Path(path) if path is not None else cdt_data_path()
    raw = split_blocks(read_cdt_table(path), [c.size for c in CONDITIONS])
    observational = np.concatenate([block for block, c in zip(raw, CONDITIONS) if not c.targets])
    cuts = tertile_cuts(observational)
    rng = np.random.default_rng(seed)
    blocks = [discretise(block[sample_rows(rng, len(block), rows_per_condition)], cuts) for block in raw]
    train, train_int, test, test_int, ranges = assemble(blocks, CONDITIONS, test_labels, rng, num_train)
    discretisation = {
        "rule": (
            "per protein, tertiles (1/3 and 2/3 quantiles) of the raw values of the observational conditions "
            "(cd3cd28, icam2; all rows); level = (x > c1) + (x > c2): 0 low, 1 average, 2 high"
        ),
        "cut_points": {name: [float(cuts[0, v]), float(cuts[1, v])] for v, name in enumerate(NAMES)},
    }
    extra = {"condition_labels": CONDITION_LABEL_NOTE, "rows_per_condition": rows_per_condition}
    meta = dataset_meta("cdt", path, seed, CONDITIONS, blocks, ranges, discretisation, extra)
    return sachs_dataset(train, train_int, test, test_int, meta, path)
