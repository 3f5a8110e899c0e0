"""Figure 2 and Figure D.1 of the paper (seaborn), from metrics.csv and features.csv."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import seaborn as sns  # noqa: E402

from jspgfn import atomic  # noqa: E402
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
    side by side, wrapped after `max_columns` panels.
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


def figure_metrics(metrics, columns, titles, stem):
    """Mean and 95% CI across datasets per method, one panel per metric (Figure 2b)."""
    summary = summarise(metrics, columns)
    names = display_names(metrics)
    order = sort_labels(summary["label"], names)
    fig, axes = plt.subplots(
        1, len(columns), figsize=(3.3 * len(columns), 0.45 * len(order) + 1.2), sharey=True, squeeze=False
    )
    palette = dict(zip(order, sns.color_palette("tab10", len(order))))
    for ax, column, title in zip(axes[0], columns, titles):
        part = summary[summary.metric == column].set_index("label").reindex(order)
        y = np.arange(len(order))
        for i, label in enumerate(order):
            mean, ci = part.loc[label, "mean"], part.loc[label, "ci"]
            ax.errorbar(mean, y[i], xerr=0 if np.isnan(ci) else ci, fmt="o", color=palette[label], capsize=3)
        ax.set_yticks(y, [names[label] for label in order])
        ax.invert_yaxis()
        ax.set_title(title, fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    axes[0, 0].set_ylabel("")
    fig.tight_layout()
    save(fig, stem)
