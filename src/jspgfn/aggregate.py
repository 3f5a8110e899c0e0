"""Collect metrics.json files into tidy tables: metrics.csv (one row per run, scalar metrics only),
features.csv (one row per run and feature pair), log_pt.csv (one row per run and sample with a
log P_T estimate) and edges.csv (one row per run and ordered pair with an edge marginal)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd

from jspgfn import atomic
from jspgfn.errors import DataError

IDENTIFICATION = (
    "preset",
    "experiment",
    "label",
    "display_name",
    "method",
    "model",
    "seed",
    "dataset",
    "dataset_seed",
    "num_samples",
    "metrics_file",
)


def _read_metrics_object(path):
    """The metrics.json at `path` as a dict; DataError naming the file when missing or not a JSON object."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "file not found")
    try:
        metrics = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(path, f"not a valid metrics JSON file ({exc})") from None
    if not isinstance(metrics, dict):
        raise DataError(path, f"expected a JSON object of metrics, got {type(metrics).__name__}")
    return metrics


def _run_columns(metrics, columns):
    """The columns that name a run in the long tables: the constants, label, display_name, method, dataset_seed."""
    label = metrics.get("label", metrics.get("method"))
    return {
        **columns,
        "label": label,
        "display_name": metrics.get("display_name", label),
        "method": metrics.get("method"),
        "dataset_seed": metrics.get("dataset_seed"),
    }


def _read_metrics(path):
    metrics = _read_metrics_object(path)
    row = {key: value for key, value in metrics.items() if not isinstance(value, (list, dict))}
    row["metrics_file"] = str(path)
    return row


def aggregate_metrics(paths, out_csv, columns=None):
    """Read every metrics.json in `paths` and write one CSV row per file to `out_csv` (atomically).

    List and dict fields (e.g. `notes`) are dropped; a `metrics_file` column names the source.
    `columns` ({name: value}) adds constant columns, e.g. the preset and experiment.
    Columns: the identification columns present (IDENTIFICATION order), then the rest sorted.
    Raises DataError naming the first missing or malformed file. Returns the DataFrame.
    """
    rows = [{**(columns or {}), **_read_metrics(path)} for path in paths]
    table = pd.DataFrame(rows)
    first = [column for column in IDENTIFICATION if column in table.columns]
    table = table[first + sorted(column for column in table.columns if column not in first)]
    with atomic.atomic_path(out_csv) as tmp:
        table.to_csv(tmp, index=False)
    return table


def _feature_rows(path, metrics, columns):
    """Long-format rows of one run's features: one per (feature, ordered pair i != j)."""
    rows = []
    run = _run_columns(metrics, columns)
    for name, values in metrics.get("features", {}).items():
        estimate, exact = values["estimate"], values["exact"]
        d = int(round((1 + np.sqrt(1 + 4 * len(estimate))) / 2))  # len = d (d - 1)
        pairs = [(i, j) for i in range(d) for j in range(d) if i != j]  # features.offdiagonal order
        if len(pairs) != len(estimate) or len(exact) != len(estimate):
            raise DataError(path, f"feature '{name}' has {len(estimate)} estimates, {len(exact)} exact values")
        for (i, j), est, ref in zip(pairs, estimate, exact):
            rows.append({**run, "feature": name, "source": i, "target": j, "exact": ref, "estimate": est})
    return rows


def aggregate_features(paths, out_csv, columns=None):
    """One CSV row per (run, feature, ordered pair): the exact and estimated feature values.

    Written atomically; runs evaluated without an exact posterior contribute no rows.
    Columns: the `columns` constants, label, display_name, method, dataset_seed, feature, source, target,
    exact, estimate.
    """
    rows = []
    for path in paths:
        rows.extend(_feature_rows(path, _read_metrics_object(path), columns or {}))
    table = pd.DataFrame(
        rows,
        columns=[
            *(columns or {}),
            "label",
            "display_name",
            "method",
            "dataset_seed",
            "feature",
            "source",
            "target",
            "exact",
            "estimate",
        ],
    )
    with atomic.atomic_path(out_csv) as tmp:
        table.to_csv(tmp, index=False)
    return table


LOG_PT_COLUMNS = ("label", "display_name", "method", "dataset_seed", "sample", "num_edges", "log_reward", "log_pt")


def _log_pt_rows(path, metrics, columns):
    """Long-format rows of one run's `log_pt_points`: one per sample with a finite log P_T and log R."""
    points = metrics.get("log_pt_points")
    if points is None:
        return []
    if not isinstance(points, dict) or any(not isinstance(points.get(key), list) for key in ("log_reward", "log_pt")):
        raise DataError(path, "log_pt_points must hold the lists log_reward and log_pt")
    num = len(points["log_reward"])
    samples = points.get("sample", list(range(num)))  # the index in the samples file; older files: 0..K-1
    num_edges = points.get("num_edges", [None] * num)
    if not len(points["log_pt"]) == len(samples) == len(num_edges) == num:
        raise DataError(path, "log_pt_points lists have different lengths")
    run = _run_columns(metrics, columns)
    return [
        {**run, "sample": k, "num_edges": edges, "log_reward": r, "log_pt": p}
        for k, edges, r, p in zip(samples, num_edges, points["log_reward"], points["log_pt"])
    ]


def aggregate_log_pt(paths, out_csv, columns=None):
    """One CSV row per (run, sample) with a log P_T estimate: the points of Figure 3c, written atomically.

    Columns: the `columns` constants, then LOG_PT_COLUMNS (label, display_name, method, dataset_seed,
    sample, num_edges, log_reward, log_pt). Runs without `log_pt_points` contribute no rows (a
    header-only file when none has any). Raises DataError naming a missing or malformed file.
    """
    rows = []
    for path in paths:
        rows.extend(_log_pt_rows(Path(path), _read_metrics_object(path), columns or {}))
    table = pd.DataFrame(rows, columns=[*(columns or {}), *LOG_PT_COLUMNS])
    with atomic.atomic_path(out_csv) as tmp:
        table.to_csv(tmp, index=False)
    return table


EDGE_COLUMNS = (
    "label",
    "display_name",
    "method",
    "dataset_seed",
    "source",
    "target",
    "source_name",
    "target_name",
    "marginal",
    "reference",
)


def _edge_rows(path, metrics, columns):
    """Long-format rows of one run's `edge_marginals`: one per ordered pair i != j."""
    edges = metrics.get("edge_marginals")
    if edges is None:
        return []
    names, marginal, reference = edges.get("names"), edges.get("marginal"), edges.get("reference")
    d = len(names) if isinstance(names, list) else -1
    shape_ok = isinstance(marginal, list) and len(marginal) == d and all(len(row) == d for row in marginal)
    if reference is not None:
        shape_ok = shape_ok and len(reference) == d and all(len(row) == d for row in reference)
    if d < 1 or not shape_ok:
        raise DataError(path, "edge_marginals must hold d names and d x d lists marginal (and reference)")
    run = _run_columns(metrics, columns)
    return [
        {
            **run,
            "source": i,
            "target": j,
            "source_name": names[i],
            "target_name": names[j],
            "marginal": marginal[i][j],
            "reference": None if reference is None else reference[i][j],
        }
        for i in range(d)
        for j in range(d)
        if i != j
    ]


def aggregate_edges(paths, out_csv, columns=None):
    """One CSV row per (run, ordered pair i != j) with an edge marginal, written atomically.

    Columns: the `columns` constants, then EDGE_COLUMNS (... source, target: indices; source_name,
    target_name; marginal: weighted share of samples with i -> j; reference: graph.csv's entry, empty
    without one). Runs evaluated without --edge-marginals contribute no rows (a header-only file when none).
    """
    rows = []
    for path in paths:
        rows.extend(_edge_rows(Path(path), _read_metrics_object(path), columns or {}))
    table = pd.DataFrame(rows, columns=[*(columns or {}), *EDGE_COLUMNS])
    with atomic.atomic_path(out_csv) as tmp:
        table.to_csv(tmp, index=False)
    return table
