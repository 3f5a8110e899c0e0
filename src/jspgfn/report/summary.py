"""Mean and 95% confidence interval across datasets: the one place where every table and figure gets them.

The interval is a transformed one, so that it never leaves the metric's range: Student t with the delta
method on the logit scale of a metric bounded on both sides (Fisher z for Pearson's r), on the log scale of
a metric bounded below, and on the metric's own scale otherwise; then mapped back. It always contains the
arithmetic mean, and it is the plain Student-t interval for an unbounded metric. With 2-5 datasets the
plain interval crossed the range (edge-RMSE intervals down to -1, Pearson r from -4 to 4.7), while the
transformed one keeps about the nominal coverage (tests/test_report.py simulates it); a bootstrap
percentile interval also stays in range but covers only about 50% with two datasets.
"""

import numpy as np
import pandas as pd
from scipy import special, stats

LEVEL = 0.95
INTERVAL_NOTE = (
    "Mean [95% CI] across datasets (the mean alone for one dataset): Student t on the logit (feature RMSE, "
    "AUROC), Fisher z (Pearson r) or log (E-SHD, edge counts) scale, mapped back (delta method) so that it "
    "stays in the metric's range; plain Student t for unbounded metrics."
)

_ROUNDING = 1e-9  # a value this far outside its range (relative) is rounding, not a bug upstream
_UNIT = (0.0, 1.0)
_CORRELATION = (-1.0, 1.0)
_COUNT = (0.0, np.inf)
# The range of each bounded metric of metrics.csv; a column not listed is unbounded. Feature RMSEs are
# between marginal probabilities, hence at most 1.
RANGES = {
    **{f"{feature}_rmse": _UNIT for feature in ("edge", "path", "markov")},
    **{f"{feature}_pearson": _CORRELATION for feature in ("edge", "path", "markov")},
    "log_pt_pearson": _CORRELATION,
    "auroc": _UNIT,
    "expected_shd": _COUNT,
    "num_edges_mean": _COUNT,
    "exact_num_edges": _COUNT,
}


def _link(low, high):
    """(g, inverse of g, derivative of g) of the scale on which a metric in [low, high] gets its interval."""
    if np.isfinite(low) and np.isfinite(high):
        width = high - low
        return (
            lambda m: np.log((m - low) / (high - m)),
            lambda z: low + width * special.expit(z),
            lambda m: width / ((m - low) * (high - m)),
        )
    if np.isfinite(low):
        return lambda m: np.log(m - low), lambda z: low + np.exp(z), lambda m: 1.0 / (m - low)
    if np.isinf(high):
        return (lambda m: m), (lambda z: z), (lambda m: 1.0)
    raise ValueError(f"no interval for a range bounded above only ({low}, {high})")


def interval(values, bounds=(-np.inf, np.inf), level=LEVEL):
    """(mean, low, high) of the finite `values` (float [n]) of a metric in `bounds` (low, high; inf allowed).

    [low, high] is the `level` Student-t interval of the mean, n - 1 degrees of freedom, on the scale of
    _link(bounds) with the delta method, mapped back: inside `bounds`, around the mean. n = 1 gives
    low = high = NaN (no spread to estimate); no finite value gives all NaN; values all on a bound give
    the bound itself. Raises ValueError for a value outside `bounds` by more than rounding (clipped).
    """
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return float("nan"), float("nan"), float("nan")
    slack = _ROUNDING * np.maximum(1.0, np.abs(values))
    if np.any(values < bounds[0] - slack) or np.any(values > bounds[1] + slack):
        raise ValueError(f"values from {values.min():g} to {values.max():g} outside the metric's range {bounds}")
    values = np.clip(values, *bounds)  # a Pearson r of 1 + 1e-16 is 1
    mean = float(values.mean())
    if values.size == 1:
        return mean, float("nan"), float("nan")
    if mean in bounds:  # every value on the bound: no spread
        return mean, mean, mean
    g, inverse, slope = _link(*bounds)
    half = stats.t.ppf(0.5 + level / 2, values.size - 1) * values.std(ddof=1) / np.sqrt(values.size) * slope(mean)
    low, high = inverse(g(mean) - half), inverse(g(mean) + half)
    return mean, float(min(low, mean)), float(max(high, mean))  # rounding never leaves the mean out


def summarise(metrics, columns, by="label"):
    """Tidy summary [by, metric, mean, low, high, n] of the `columns` of a metrics table, per `by` group,
    with each column's interval in its RANGES."""
    rows = []
    for group, table in metrics.groupby(by, sort=False):
        for column in columns:
            if column not in table:
                continue
            values = pd.to_numeric(table[column], errors="coerce")
            mean, low, high = interval(values, RANGES.get(column, (-np.inf, np.inf)))
            n = int(np.isfinite(values).sum())
            rows.append({by: group, "metric": column, "mean": mean, "low": low, "high": high, "n": n})
    return pd.DataFrame(rows, columns=[by, "metric", "mean", "low", "high", "n"])


def format_interval(mean, low=float("nan"), high=float("nan"), digits=3):
    """'0.412 [0.350, 0.470]'; the mean alone without an interval; 'n/a' without a mean."""
    if not np.isfinite(mean):
        return "n/a"
    if not (np.isfinite(low) and np.isfinite(high)):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"
