"""Mean and 95% confidence interval across datasets, as the paper reports them."""

import numpy as np
import pandas as pd
from scipy import stats


def mean_ci(values, level=0.95):
    """(mean, half-width of the Student-t confidence interval) of the finite values; NaN if none.

    One value gives a half-width of NaN (no spread can be estimated).
    """
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return float("nan"), float("nan")
    if values.size == 1:
        return float(values[0]), float("nan")
    half = stats.t.ppf(0.5 + level / 2, values.size - 1) * values.std(ddof=1) / np.sqrt(values.size)
    return float(values.mean()), float(half)


def summarise(metrics, columns, by="label"):
    """Tidy summary [by, metric, mean, ci, n] of the `columns` of a metrics table, per `by` group."""
    rows = []
    for group, table in metrics.groupby(by, sort=False):
        for column in columns:
            if column not in table:
                continue
            values = pd.to_numeric(table[column], errors="coerce")
            mean, half = mean_ci(values)
            rows.append({by: group, "metric": column, "mean": mean, "ci": half, "n": int(np.isfinite(values).sum())})
    return pd.DataFrame(rows, columns=[by, "metric", "mean", "ci", "n"])


def format_mean_ci(mean, ci, digits=3):
    if not np.isfinite(mean):
        return "n/a"
    if not np.isfinite(ci):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {ci:.{digits}f}"
