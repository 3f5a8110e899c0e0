"""Figures 2, 3, D.1 and D.2 of the paper (seaborn), from metrics.csv, features.csv and log_pt.csv."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from jspgfn import atomic  # noqa: E402
from jspgfn.errors import DataError  # noqa: E402
from jspgfn.report.names import display_names, sort_labels  # noqa: E402
from jspgfn.report.summary import summarise  # noqa: E402

FEATURE_TITLES = {"edge": "edge features", "path": "path features", "markov": "Markov features"}


def save(fig, stem):
    """stem.pdf and stem.png, each written atomically."""
    for suffix, kwargs in ((".pdf", {}), (".png", {"dpi": 200})):
        with atomic.atomic_path(f"{stem}{suffix}") as tmp:
            fig.savefig(tmp, format=suffix[1:], bbox_inches="tight", **kwargs)
    plt.close(fig)


def _scatter(ax, table, title):
    """Exact feature (x) against the method's estimate (y), one point per pair and dataset."""
    ax.plot([0, 1], [0, 1], color="0.6", lw=0.8, ls="--", zorder=0)
    ax.scatter(table["exact"], table["estimate"], s=9, alpha=0.6, color="C0", edgecolors="none")
    rmse = float(np.sqrt(np.mean((table["estimate"] - table["exact"]) ** 2)))
    r = float(np.corrcoef(table["exact"], table["estimate"])[0, 1]) if table["estimate"].std() > 0 else float("nan")
    ax.text(
        0.96,
        0.04,
        f"RMSE {rmse:.3f}\nr = {r:.3f}",
        transform=ax.transAxes,
        ha="right",
        va="bottom",
        fontsize=8,
        bbox={"facecolor": "white", "alpha": 0.85, "edgecolor": "0.8", "boxstyle": "round"},
    )
    ax.set(xlim=(-0.03, 1.03), ylim=(-0.03, 1.03), aspect="equal", title=title)


def figure_features(features, labels, feature_names, stem, max_columns=4):
    """Scatter plots of exact vs estimated features (Figure 2a, Figure D.1).

    Several features: one row per method, one column per feature. One feature: the methods
    side by side, wrapped after `max_columns` panels. Each panel prints the RMSE and Pearson's r of its
    points. Returns the (closed) matplotlib Figure.
    """
    names = display_names(features)
    labels = [label for label in sort_labels(labels, names) if label in names]
    if not labels:
        raise ValueError("none of the requested methods has feature values in the table")
    panels = [(label, feature) for label in labels for feature in feature_names]
    columns = len(feature_names) if len(feature_names) > 1 else min(max_columns, len(labels))
    rows = -(-len(panels) // columns)
    fig, axes = plt.subplots(rows, columns, squeeze=False, figsize=(2.8 * columns, 2.9 * rows))
    for index, ax in enumerate(axes.flat):
        if index >= len(panels):
            ax.axis("off")
            continue
        label, feature = panels[index]
        table = features[(features.label == label) & (features.feature == feature)]
        _scatter(ax, table, f"{names[label]}: {FEATURE_TITLES[feature]}")
        ax.set_xlabel("exact posterior")
        ax.set_ylabel("approximation" if index % columns == 0 else "")
    fig.tight_layout()
    save(fig, stem)
    return fig


# A method is far off in a panel when its mean lies more than FAR_OFF robust spreads from the median of
# the methods' means, and it is clipped only when leaving it out narrows the axis SQUEEZE times or more.
FAR_OFF = 8.0
SQUEEZE = 3.0


def _extents(means, lows, highs, points):
    """[M, 2] low and high x of everything drawn per method: the mean, its interval and the per-dataset points.

    means, lows, highs: float [M] (NaN: nothing / no interval); points: M float arrays (may be empty).
    """
    out = np.full((len(means), 2), np.nan)
    for i, (mean, low, high, values) in enumerate(zip(means, lows, highs, points)):
        drawn = np.concatenate([[mean, low, high], np.asarray(values, float)])
        drawn = drawn[np.isfinite(drawn)]
        if drawn.size:
            out[i] = drawn.min(), drawn.max()
    return out


def far_off(means, lows, highs, points):
    """Which methods to clip from a panel: bool [M], all False when the panel is drawn as it is.

    means, lows, highs: float [M] per-method mean and 95% interval (NaN allowed); points: M float arrays of
    the per-dataset values drawn. A method is far off when |mean - median| exceeds FAR_OFF times a robust
    spread of the means: 1.4826 * their median absolute deviation, or the median half-length of the
    intervals when larger (so that methods within each other's noise are never split). The far-off ones
    are clipped only when their means lie outside the range of what the others draw, at least two methods
    remain, and everything drawn spans SQUEEZE times or more that range; otherwise the panel is left as it is.
    """
    means = np.asarray(means, float)
    far = np.zeros(len(means), dtype=bool)
    finite = np.isfinite(means)
    if finite.sum() < 3:
        return far
    median = np.median(means[finite])
    spread = 1.4826 * np.median(np.abs(means[finite] - median))
    halves = (np.asarray(highs, float) - np.asarray(lows, float)) / 2
    halves = halves[np.isfinite(halves)]
    if halves.size:
        spread = max(spread, float(np.median(halves)))
    spread = max(spread, 1e-12 * max(1.0, abs(median)))
    far = finite & (np.abs(means - median) > FAR_OFF * spread)
    extents = _extents(means, lows, highs, points)
    while True:  # a far-off mean inside what the others draw is not clipped (it would stay on the axis)
        kept = finite & ~far
        if not far.any() or kept.sum() < 2:
            return np.zeros(len(means), dtype=bool)
        low, high = np.nanmin(extents[kept, 0]), np.nanmax(extents[kept, 1])
        inside = far & (means >= low) & (means <= high)
        if not inside.any():
            break
        far &= ~inside
    full = np.nanmax(extents[finite, 1]) - np.nanmin(extents[finite, 0])
    return far if full >= SQUEEZE * (high - low) else np.zeros(len(means), dtype=bool)


def _short(value, digits):
    """`value` with `digits` significant digits, without an exponent between 1e-3 and 1e6: 6037 -> '6000'."""
    if value != 0 and not 1e-3 <= abs(value) < 1e6:
        return f"{value:.{digits}g}"
    return np.format_float_positional(value, precision=digits, fractional=False, trim="-")


def format_value(mean, low, high):
    """The text beside a clipped method's arrow: '65.2 [62, 68]' (or '65.2' without an interval)."""
    if np.isnan(low) or np.isnan(high):
        return _short(mean, 4)
    return f"{_short(mean, 4)} [{_short(low, 2)}, {_short(high, 2)}]"


def _mark_far_off(ax, y, means, lows, highs, points, far, colours):
    """Limit the x-axis to the methods that are not far off and mark the far-off ones by an arrow at the edge.

    y: float [M] rows; means, lows, highs: float [M]; points: M arrays; far: bool [M] (far_off); colours: M
    colours. The far-off methods are not drawn in the panel: only their arrow and mean [95% CI].

    Clipping rather than a symlog axis: a symlog axis compresses every difference beyond its linear
    threshold, so the distances between the close methods (what the panel compares) would depend on an
    arbitrary threshold and could no longer be read off the ticks; clipped, the others keep a linear axis
    and the far-off method keeps its exact value, printed beside the arrow.
    """
    extents = _extents(means, lows, highs, points)
    kept = np.isfinite(means) & ~far
    low, high = np.nanmin(extents[kept, 0]), np.nanmax(extents[kept, 1])
    pad = 0.06 * (high - low) if high > low else max(1e-3, 0.05 * abs(high))
    ax.set_xlim(low - pad, high + pad)
    for i in np.flatnonzero(far):
        right = means[i] > high
        ax.annotate(
            format_value(means[i], lows[i], highs[i]),
            xy=(1.0 if right else 0.0, y[i]),
            xycoords=("axes fraction", "data"),
            xytext=(-34 if right else 34, 0),
            textcoords="offset points",
            ha="right" if right else "left",
            va="center",
            fontsize=8,
            color=colours[i],
            arrowprops={"arrowstyle": "->", "color": colours[i], "lw": 1.2},
            annotation_clip=False,
        )


def figure_metrics(metrics, columns, titles, stem, title=None):
    """Mean and 95% interval across datasets per method, one panel per metric (Figures 2b, 3a, 3b, D.2).

    Args:
      metrics: tidy metrics table (one row per run: label, optional display_name, the `columns`).
      columns, titles: the metrics to draw and their panel titles (lists of the same length).
      stem: writes stem.pdf and stem.png.
      title: figure title (suptitle), or None.
    Per method: the mean with its interval (summary.interval: inside the metric's range; none for one
    dataset), and just below it every run's value as a small dot, jittered vertically (one per dataset).
    A method far off the others in a panel (far_off) is clipped: the axis is limited to the others and an
    arrow at the edge of its row carries its mean [95% CI] (see _mark_far_off); a panel without one is drawn
    with matplotlib's own limits. A method without any finite value in a panel gets the words "no value"
    in its row. Returns the (closed) matplotlib Figure.
    """
    summary = summarise(metrics, columns)
    names = display_names(metrics)
    order = sort_labels(summary["label"], names)
    height = 0.62 * len(order) + 1.2 + (0.3 if title else 0.0)
    fig, axes = plt.subplots(1, len(columns), figsize=(3.3 * len(columns), height), sharey=True, squeeze=False)
    palette = dict(zip(order, sns.color_palette("tab10", len(order))))
    colours = [palette[label] for label in order]
    rng = np.random.default_rng(0)  # the same jitter on every run of the figure
    for ax, column, panel_title in zip(axes[0], columns, titles):
        part = summary[summary.metric == column].set_index("label").reindex(order)
        y = np.arange(len(order), dtype=float)
        means, lows, highs = (part[key].to_numpy(float) for key in ("mean", "low", "high"))
        values = [
            pd.to_numeric(metrics.loc[metrics.label == label, column], errors="coerce").to_numpy(float)
            for label in order
        ]
        values = [v[np.isfinite(v)] for v in values]
        far = far_off(means, lows, highs, values)
        for i in np.flatnonzero(~far):
            error = np.nan_to_num([[means[i] - lows[i]], [highs[i] - means[i]]])  # no interval: no bar
            ax.errorbar(means[i], y[i], xerr=error, fmt="o", color=colours[i], capsize=3)
            if values[i].size:
                jitter = y[i] + 0.26 + rng.uniform(-0.08, 0.08, size=values[i].size)
                ax.scatter(values[i], jitter, s=7, color=colours[i], alpha=0.55, edgecolors="none", zorder=1)
        if far.any():
            _mark_far_off(ax, y, means, lows, highs, values, far, colours)
        for i in np.flatnonzero(np.isnan(means)):  # e.g. DiBS when every particle is cyclic
            ax.text(0.03, y[i], "no value", transform=ax.get_yaxis_transform(), va="center", fontsize=8, color="0.4")
        ax.set_yticks(y, [names[label] for label in order])
        ax.set_ylim(len(order) - 0.45, -0.55)  # inverted, with room for the dots below the last row
        ax.set_title(panel_title, fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    axes[0, 0].set_ylabel("")
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    save(fig, stem)
    return fig


def figure_log_pt(
    points, metrics, labels, stem, dataset_seed=None, title=None, points_source="log-pt table", metrics_source="metrics"
):
    """log R(G, theta) (x) against log P_T(G, theta) (y) of one dataset, one panel per method (Figure 3c).

    Args:
      points: tidy log-pt table (aggregate_log_pt: label, dataset_seed, num_edges, log_reward, log_pt; one
        row per sample).
      metrics: tidy metrics table (label, dataset_seed, log_pt_slope, log_pt_intercept; one row per run).
      labels: method ids, one panel each (in the paper's order of their display names).
      stem: writes stem.pdf and stem.png.
      dataset_seed: the dataset drawn; None: the smallest dataset_seed of `points`.
      title: figure title (suptitle), or None.
      points_source, metrics_source: the files' names in errors.
    Points are coloured by the number of edges (one colour bar for all panels); the line is the RANSAC fit
    of evaluate (slope Delta and intercept from the run's metrics); Pearson's r is that of the points drawn.
    Raises DataError when the table has no points, or a method has no points or no run on that dataset.
    Returns the (closed) matplotlib Figure.
    """
    if points.empty:
        raise DataError(points_source, "has no log P_T points (no run was sampled with --log-pt)")
    seed = points["dataset_seed"].min() if dataset_seed is None else dataset_seed
    names = {**display_names(metrics), **display_names(points)}
    order = sort_labels(labels, names)
    panels = []
    for label in order:
        part = points[(points.label == label) & (points.dataset_seed == seed)]
        if part.empty:
            raise DataError(points_source, f"no log P_T points of method '{label}' on dataset_seed {seed}")
        runs = metrics[(metrics.label == label) & (metrics.dataset_seed == seed)]
        if len(runs) != 1:
            raise DataError(metrics_source, f"{len(runs)} runs of method '{label}' on dataset_seed {seed}, expected 1")
        panels.append((label, part, runs.iloc[0]))
    edges = pd.to_numeric(points.loc[points.dataset_seed == seed, "num_edges"], errors="coerce")
    fig = draw_log_pt(
        [
            (
                f"{names[label]} (dataset {seed})",
                part["log_reward"].to_numpy(float),
                part["log_pt"].to_numpy(float),
                part["num_edges"].to_numpy(float),
                float(run.get("log_pt_slope", np.nan)),
                float(run.get("log_pt_intercept", np.nan)),
            )
            for label, part, run in panels
        ],
        edge_range=(edges.min(), edges.max()),
    )
    if title:
        fig.suptitle(title, fontsize=11)
    save(fig, stem)
    return fig


def draw_log_pt(panels, edge_range=None):
    """The panels of figure_log_pt, drawn and returned (an open matplotlib Figure, not saved).

    panels: one (title, log_reward float [K], log_pt float [K], num_edges [K], slope, intercept) per panel;
    slope / intercept: the RANSAC fit of evaluate (NaN: none drawn, "Δ = n/a"). edge_range: (min, max)
    number of edges of the colour bar (default: over the panels' points). Pearson's r is that of the points.
    """
    if edge_range is None:
        every = np.concatenate([np.asarray(panel[3], float) for panel in panels])
        edge_range = (np.nanmin(every), np.nanmax(every))
    low, high = edge_range
    norm = matplotlib.colors.Normalize(vmin=low, vmax=max(high, low + 1))
    fig, axes = plt.subplots(
        1, len(panels), figsize=(3.8 * len(panels) + 0.9, 3.6), squeeze=False, layout="constrained"
    )
    for ax, (panel_title, x, y, num_edges, slope, intercept) in zip(axes[0], panels):
        x, y = np.asarray(x, float), np.asarray(y, float)
        mappable = ax.scatter(x, y, c=num_edges, cmap="viridis", norm=norm, s=9, alpha=0.8, edgecolors="none")
        text = "Δ = n/a"
        if np.isfinite(slope) and np.isfinite(intercept):
            line = np.array([x.min(), x.max()])
            ax.plot(line, slope * line + intercept, color="C3", lw=1.3, label="RANSAC fit")
            text = f"Δ = {slope:.3f}"
        r = float(np.corrcoef(x, y)[0, 1]) if len(x) > 1 and np.ptp(x) > 0 and np.ptp(y) > 0 else float("nan")
        text += f"\nr = {r:.3f}" if np.isfinite(r) else "\nr = n/a"
        ax.text(
            0.04,
            0.96,
            text,
            transform=ax.transAxes,
            ha="left",
            va="top",
            fontsize=9,
            bbox={"facecolor": "white", "alpha": 0.85, "edgecolor": "0.8", "boxstyle": "round"},
        )
        ax.set_title(panel_title, fontsize=10)
        ax.set_xlabel("log R(G, θ)")
        ax.set_ylabel("log $P_T$(G, θ)")
        ax.grid(alpha=0.3)
    fig.colorbar(mappable, ax=list(axes[0]), label="number of edges")
    return fig


def figure_edge_marginals(edges, labels, stem, dataset_seed=None, title=None, source="edges table"):
    """Heatmap of the edge marginals P(i -> j | D) of one dataset, one panel per method.

    Args:
      edges: tidy edges table (aggregate_edges: label, dataset_seed, source, target, source_name, target_name,
        marginal, reference; one row per run and ordered pair i != j).
      labels: method ids, one panel each (in the paper's order of their display names).
      stem: writes stem.pdf and stem.png.
      dataset_seed: the dataset drawn; None: the smallest dataset_seed of `edges`.
      title: figure title (suptitle), or None.
      source: the table's name in errors.
    Rows are the parent (source) variables, columns the child (target) variables, both labelled with the
    variable names; the diagonal is blank. Edges of the dataset's graph.csv (`reference` = 1) are outlined.
    Raises DataError when the table has no rows or a method has none on that dataset.
    Returns the (closed) matplotlib Figure.
    """
    if edges.empty:
        raise DataError(source, "has no edge marginals (were the runs evaluated with --edge-marginals?)")
    seed = edges["dataset_seed"].min() if dataset_seed is None else dataset_seed
    names = display_names(edges)
    panels = []
    for label in sort_labels(labels, names):
        part = edges[(edges.label == label) & (edges.dataset_seed == seed)]
        if part.empty:
            raise DataError(source, f"no edge marginals of method '{label}' on dataset_seed {seed}")
        d = int(max(part["source"].max(), part["target"].max())) + 1
        matrix = np.full((d, d), np.nan)
        matrix[part["source"].to_numpy(int), part["target"].to_numpy(int)] = part["marginal"].to_numpy(float)
        variables = [""] * d
        for index, name in zip(part["source"], part["source_name"]):
            variables[int(index)] = str(name)
        for index, name in zip(part["target"], part["target_name"]):
            variables[int(index)] = str(name)
        reference = pd.to_numeric(part["reference"], errors="coerce") if "reference" in part else None
        panels.append((label, matrix, variables, part[reference == 1] if reference is not None else part.iloc[:0]))
    fig = draw_edge_marginals(
        [
            (
                f"{names[label]} (dataset {seed})",
                matrix,
                variables,
                list(zip(reference["source"].to_numpy(int), reference["target"].to_numpy(int))),
            )
            for label, matrix, variables, reference in panels
        ]
    )
    if title:
        fig.suptitle(title, fontsize=11)
    save(fig, stem)
    return fig


def draw_edge_marginals(panels, reference_note="red outline: edge of graph.csv", annotate=False):
    """The panels of figure_edge_marginals, drawn and returned (an open matplotlib Figure, not saved).

    panels: one (title, marginal float [d, d] (NaN: blank, the diagonal), the d variable names, the
    (parent, child) index pairs to outline in red: the reference graph's edges) per panel.
    reference_note: the line under the panels when any pair is outlined (None: no line). annotate: print
    each marginal in its cell (for small d).
    """
    size = max(3.2, 0.32 * max(len(p[2]) for p in panels) + 1.2)
    fig, axes = plt.subplots(1, len(panels), figsize=(size * len(panels) + 1.0, size), squeeze=False)
    for ax, (panel_title, matrix, variables, outlined) in zip(axes[0], panels):
        matrix = np.asarray(matrix, float)
        image = ax.imshow(matrix, cmap="Blues", vmin=0.0, vmax=1.0)
        ticks = np.arange(len(variables))
        fontsize = 8 if len(variables) <= 20 else 5
        ax.set_xticks(ticks, variables, rotation=90, fontsize=fontsize)
        ax.set_yticks(ticks, variables, fontsize=fontsize)
        for i, j in outlined:
            ax.add_patch(matplotlib.patches.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="C3", lw=1.2))
        if annotate:
            for (i, j), value in np.ndenumerate(matrix):
                if np.isfinite(value):
                    colour = "white" if value > 0.6 else "0.15"
                    ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=fontsize - 1, color=colour)
        ax.set_xlabel("child (target of the edge)")
        ax.set_ylabel("parent (source of the edge)")
        ax.set_title(panel_title, fontsize=10)
    fig.colorbar(image, ax=list(axes[0]), label="edge marginal P(i → j | D)", shrink=0.8)
    if reference_note and any(len(p[3]) for p in panels):
        fig.text(0.01, 0.01, reference_note, fontsize=7, color="C3")
    return fig
