"""Tables written three ways from one DataFrame: CSV (numbers), LaTeX and PDF ("mean [low, high]" strings)."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from jspgfn import atomic  # noqa: E402
from jspgfn.report.names import display_names, sort_labels  # noqa: E402
from jspgfn.report.summary import INTERVAL_NOTE, format_interval, summarise  # noqa: E402

FEATURES = ("edge", "path", "markov")
FEATURE_TITLES = {"edge": "Edge features", "path": "Path features", "markov": "Markov features"}
METRIC_TITLES = {"rmse": "RMSE", "pearson": "Pearson r"}


def table_d1(metrics, paper):
    """Table D.1: RMSE and Pearson's r of edge/path/Markov features against the exact posterior.

    Args:
      metrics: aggregated metrics.csv of the small-graph experiment (one row per run; `label` column).
      paper: the paper's Table D.1 (`method`, `edge_rmse`, `edge_rmse_ci`, ...), keyed by display name.
    Returns:
      (numbers, shown): numbers has one row per (method, metric) with our mean and 95% interval (low,
      high; summary.interval) and the paper's mean and CI half-width; shown has one row per method and
      "ours" ("mean [low, high]") / "paper" (as the paper prints it: "mean ± half-width") string columns per metric.
    """
    columns = [f"{f}_{m}" for f in FEATURES for m in ("rmse", "pearson")]
    summary = summarise(metrics, columns)
    paper = paper.set_index("method")
    names = display_names(metrics)
    numbers, shown = [], []
    for label in sort_labels(summary["label"], names):
        name = names[label]
        row = {"method": name}
        for column in columns:
            ours = summary[(summary.label == label) & (summary.metric == column)].iloc[0]
            in_paper = name in paper.index and column in paper.columns
            paper_mean = float(paper.loc[name, column]) if in_paper else np.nan
            paper_ci = float(paper.loc[name, f"{column}_ci"]) if in_paper else np.nan
            numbers.append(
                {
                    "method": name,
                    "label": label,
                    "metric": column,
                    "mean": ours["mean"],
                    "low": ours["low"],
                    "high": ours["high"],
                    "n": ours["n"],
                    "paper_mean": paper_mean,
                    "paper_ci": paper_ci,
                }
            )
            shown_name = f"{FEATURE_TITLES[column.split('_')[0]].split()[0]} {METRIC_TITLES[column.split('_')[1]]}"
            row[f"{shown_name} (ours)"] = format_interval(ours["mean"], ours["low"], ours["high"])
            row[f"{shown_name} (paper)"] = f"{paper_mean:.3f} ± {paper_ci:.3f}" if in_paper else "–"
        shown.append(row)
    return pd.DataFrame(numbers), pd.DataFrame(shown)


CAPABILITY_TITLES = {
    "joint": "Joint G & θ",
    "nonlinear": "Non-linear",
    "dag_support": "DAG support",
    "discrete": "Discrete obs.",
    "max_parents": "Max parents",
    "sampler": "Sampler",
    "minibatch": "Mini-batch",
}


def _mark(value):
    if isinstance(value, str):  # as read back from a CSV
        value = {"True": True, "False": False}.get(value)
    return {True: "✓", False: "✗"}.get(value, "?") if value is not None and value == value else "?"


def table_a1(capabilities):
    """Table A.1 from the tidy capabilities table (`jspgfn capabilities`): a mark per capability,
    `*` where a probe run decided it. Returns (numbers, shown) for write_table."""
    names = display_names(capabilities)
    order = sort_labels(capabilities["label"], names)
    numbers = capabilities.set_index("label").loc[order].reset_index()
    shown = []
    for label in order:
        cells = capabilities[capabilities.label == label].set_index("capability")
        row = {"method": names[label]}
        for key, title in CAPABILITY_TITLES.items():
            if key not in cells.index:
                row[title] = "?"
                continue
            probed = str(cells.loc[key, "probed"]) == "True"
            row[title] = _mark(cells.loc[key, "value"]) + ("*" if probed else "")
        shown.append(row)
    return numbers, pd.DataFrame(shown)


def write_table(numbers, shown, stem, title, note, intervals=True):
    """stem.csv (numbers), stem.tex and stem.pdf (shown), each written atomically; `note` goes under the
    table, followed by how the intervals are computed (summary.INTERVAL_NOTE) when `intervals`."""
    note = f"{note} {INTERVAL_NOTE}" if intervals else note
    with atomic.atomic_path(f"{stem}.csv") as tmp:
        numbers.to_csv(tmp, index=False)
    latex = shown.to_latex(index=False, caption=f"{title} {note}", escape=True)
    atomic.write_text(f"{stem}.tex", latex)
    with atomic.atomic_path(f"{stem}.pdf") as tmp:
        render_pdf(shown, title, note, tmp)


def render_pdf(shown, title, note, path):
    """A table as a PDF page: header row wrapped on ' (' so long column names fit."""
    header = [column.replace(" (", "\n(").replace(" Pearson", "\nPearson") for column in shown.columns]
    width = max(6.0, 1.45 * len(shown.columns))
    height = 1.3 + 0.32 * (len(shown) + 2)
    fig, ax = plt.subplots(figsize=(width, height))
    ax.axis("off")
    widths = [1.8] + [1.0] * (len(shown.columns) - 1)  # the method names need the widest column
    widths = [w / sum(widths) for w in widths]
    table = ax.table(cellText=shown.values, colLabels=header, loc="center", cellLoc="center", colWidths=widths)
    table.auto_set_font_size(False)
    table.set_fontsize(7.5)
    table.scale(1.0, 1.6)
    for (row, _), cell in table.get_celld().items():
        if row == 0:
            cell.set_height(cell.get_height() * 2.2)
            cell.set_text_props(weight="bold")
    ax.set_title(title, fontsize=10, pad=12)
    fig.text(0.5, 0.02, note, ha="center", va="bottom", fontsize=7, wrap=True)
    fig.savefig(path, format="pdf", bbox_inches="tight")
    plt.close(fig)


SLOPE_COLUMNS = {"log_pt_slope": "Slope Δ", "log_pt_pearson": "Pearson r"}


def table_slopes(metrics):
    """Slope Delta (RANSAC) and Pearson's r of log P_T against log R per method and dataset (Figure 3c).

    Args:
      metrics: tidy metrics table (label, dataset_seed, log_pt_slope, log_pt_pearson; one row per run).
        Runs without a log P_T estimate (NaN in both columns, e.g. the baselines) are left out.
    Returns:
      (numbers, shown) for write_table. numbers: one row per run (method, label, dataset_seed, seed when
      recorded, the two metrics) then one row per method with dataset_seed "mean", the means, their 95%
      intervals (columns <metric>_low, <metric>_high; summary.interval) and n; shown: the same rows as
      strings, "mean [95% CI]" last per method. Raises ValueError when no run has a log P_T estimate.
    """
    columns = list(SLOPE_COLUMNS)
    values = metrics[columns].apply(pd.to_numeric, errors="coerce")
    runs = metrics[values.notna().any(axis=1)].copy()
    if runs.empty:
        raise ValueError("no run has a log_pt_slope or log_pt_pearson (were the samples drawn with --log-pt?)")
    runs[columns] = values.loc[runs.index]
    names = display_names(runs)
    by = ["dataset_seed", "seed"] if "seed" in runs else ["dataset_seed"]
    numbers, shown = [], []
    for label in sort_labels(runs["label"], names):
        part = runs[runs.label == label].sort_values(by)
        for _, run in part.iterrows():
            row = {"method": names[label], "label": label, **{key: run[key] for key in by}}
            numbers.append({**row, **{column: run[column] for column in columns}})
            shown.append(
                {
                    "Method": names[label],
                    "Dataset": str(run["dataset_seed"]),
                    **{title: format_interval(run[column]) for column, title in SLOPE_COLUMNS.items()},
                }
            )
        summary = summarise(part, columns).set_index("metric")
        row = {"method": names[label], "label": label, "dataset_seed": "mean"}
        numbers.append({**row, **_interval_columns(summary, columns)})
        shown.append(
            {
                "Method": names[label],
                "Dataset": "mean [95% CI]",
                **{
                    title: format_interval(*summary.loc[column, ["mean", "low", "high"]])
                    for column, title in SLOPE_COLUMNS.items()
                },
            }
        )
    numbers = pd.DataFrame(numbers)
    for column in ("seed", "n"):  # integers with gaps (the mean rows have no seed, the runs no n)
        numeric = column in numbers and pd.api.types.is_numeric_dtype(numbers[column])
        if numeric and (numbers[column].dropna() % 1 == 0).all():
            numbers[column] = numbers[column].astype("Int64")
    return numbers, pd.DataFrame(shown)


GRAPH_COLUMNS = {"expected_shd": "E-SHD", "auroc": "AUROC"}


def table_graph(metrics):
    """E-SHD and AUROC of each method against the dataset's graph.csv (e.g. the Sachs consensus network).

    Args:
      metrics: tidy metrics table (label, expected_shd, auroc; one row per run).
    Returns:
      (numbers, shown) for write_table. numbers: one row per method (method, label, the means, their 95%
      intervals <metric>_low and <metric>_high, n datasets); shown: "mean [low, high]" strings (the mean
      alone for one dataset).
      Raises ValueError when no run has an E-SHD or AUROC (the data has no graph.csv).
    """
    columns = list(GRAPH_COLUMNS)
    values = metrics.reindex(columns=columns).apply(pd.to_numeric, errors="coerce")
    runs = metrics[values.notna().any(axis=1)].copy()
    if runs.empty:
        raise ValueError("no run has an expected_shd or auroc (the dataset has no graph.csv)")
    runs[columns] = values.loc[runs.index]
    return _per_method(runs, {column: (title, 3) for column, title in GRAPH_COLUMNS.items()})


def _interval_columns(summary, columns):
    """{<metric>: mean, <metric>_low: low, <metric>_high: high, ..., n: the most runs with a value} of one
    method's summary (summarise, indexed by metric)."""
    row = {}
    for column in columns:
        row[column], row[f"{column}_low"], row[f"{column}_high"] = summary.loc[column, ["mean", "low", "high"]]
    return {**row, "n": int(summary["n"].max())}


def _per_method(runs, columns):
    """(numbers, shown) of a per-method table: runs (label and the columns' values, one row per run),
    columns {metric: (title, digits shown)}. numbers: method, label, each metric's mean across the runs,
    its 95% interval <metric>_low and <metric>_high (summary.interval), n (the most runs with a value);
    shown: "mean [low, high]" strings."""
    names = display_names(runs)
    summary = summarise(runs, list(columns))
    numbers, shown = [], []
    for label in sort_labels(runs["label"].unique(), names):
        part = summary[summary.label == label].set_index("metric")
        row = {"method": names[label], "label": label, **_interval_columns(part, columns)}
        numbers.append(row)
        shown.append(
            {
                "Method": names[label],
                **{
                    title: format_interval(row[c], row[f"{c}_low"], row[f"{c}_high"], digits)
                    for c, (title, digits) in columns.items()
                },
                "Datasets": str(row["n"]),
            }
        )
    return pd.DataFrame(numbers), pd.DataFrame(shown)


# metrics.json key -> (column title, digits shown). log P(D | G) includes the unnormalised graph prior
# (0 under the uniform prior); "gap" = exact_log_pdg_mean - log_pdg_mean per dataset (0 for a sampler that
# matches the exact posterior, > 0 when its graphs score lower on average).
EXACT_GRAPH_COLUMNS = {
    "num_edges_mean": ("Edges (per sample)", 1),
    "exact_num_edges": ("Edges (exact E)", 1),
    "log_pdg_mean": ("log P(D|G) (mean)", 1),
    "log_pdg_best": ("log P(D|G) (best)", 1),
    "exact_log_pdg_mean": ("log P(D|G) (exact E)", 1),
    "log_pdg_gap": ("Gap to exact (log P(D|G))", 1),
}


def table_exact_graphs(metrics):
    """Per method: edges per sample and log P(D | G) of the samples (mean, best) beside the exact posterior's
    expected edges and log P(D | G), over the datasets evaluated against the exact posterior.

    Args:
      metrics: tidy metrics table (label, num_edges_mean, exact_num_edges, log_pdg_mean, log_pdg_best,
        exact_log_pdg_mean; one row per run). Runs without num_edges_mean (no exact posterior for their
        dataset) are left out.
    Returns:
      (numbers, shown) for write_table. numbers: one row per method (method, label, the mean across datasets
      of each EXACT_GRAPH_COLUMNS key, its 95% interval <key>_low and <key>_high, n datasets); log_pdg_gap
      is exact_log_pdg_mean - log_pdg_mean per dataset. shown: "mean [low, high]" strings (the mean alone for
      one dataset). Raises ValueError when no run was evaluated against the exact posterior.
    """
    keys = [key for key in EXACT_GRAPH_COLUMNS if key != "log_pdg_gap"]
    metrics = metrics.reset_index(drop=True)
    values = metrics.reindex(columns=keys).apply(pd.to_numeric, errors="coerce")
    runs = metrics[values["num_edges_mean"].notna()].copy()
    if runs.empty:
        raise ValueError("no run has num_edges_mean (none was evaluated with --exact)")
    runs[keys] = values.loc[runs.index]
    runs["log_pdg_gap"] = runs["exact_log_pdg_mean"] - runs["log_pdg_mean"]
    return _per_method(runs, EXACT_GRAPH_COLUMNS)
