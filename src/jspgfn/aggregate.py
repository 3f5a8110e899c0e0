"""Collect metrics.json files into one tidy table (one row per run, scalar metrics only)."""

import json
from pathlib import Path

import pandas as pd

from jspgfn import atomic
from jspgfn.errors import DataError

IDENTIFICATION = ("preset", "experiment", "label", "method", "model", "seed", "dataset", "dataset_seed", "num_samples", "metrics_file")


def _read_metrics(path):
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "file not found")
    try:
        metrics = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(path, f"not a valid metrics JSON file ({exc})") from None
    if not isinstance(metrics, dict):
        raise DataError(path, f"expected a JSON object of metrics, got {type(metrics).__name__}")
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
