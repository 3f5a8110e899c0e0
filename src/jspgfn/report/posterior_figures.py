"""The figures of the posterior page (posterior_report.py), each returned as an open matplotlib Figure
(the page embeds it with html_page.figure_image, which closes it): the most probable graphs drawn on a
circle, the weight histograms of the most probable edges, the training curve of a run folder. The
edge-marginal heatmap and log P_T against log R are report.figures' drawings.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def draw_graphs(graphs, names, titles, reference=None, columns=3):
    """Small multiples of directed graphs on a circle, returned as an open matplotlib Figure.

    graphs: uint8 [M, d, d] (graphs[m, i, j] = 1: i -> j); names: the d variable names; titles: M panel
    titles; reference: uint8 [d, d] or None. With a reference, an edge of it is drawn black, an edge not in
    it red and dashed, and an edge of the reference missing from the graph light grey and dotted.
    """
    graphs = np.asarray(graphs)
    count, d = graphs.shape[0], graphs.shape[1]
    columns = max(1, min(columns, count))
    rows = -(-count // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3.5 * columns, 3.7 * rows), squeeze=False)
    angles = np.pi / 2 - 2 * np.pi * np.arange(d) / d
    position = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    fontsize = 9 if d <= 12 else 7
    for index, ax in enumerate(axes.flat):
        ax.axis("off")
        if index >= count:
            continue
        graph = graphs[index]
        nodes = [
            ax.text(
                *position[i],
                str(names[i]),
                ha="center",
                va="center",
                fontsize=fontsize,
                zorder=3,
                bbox={"boxstyle": "round,pad=0.3", "facecolor": "#e8f0fb", "edgecolor": "#4a6fa5"},
            )
            for i in range(d)
        ]
        edges = [(i, j, "black", "-") for i, j in zip(*np.nonzero(graph))]
        if reference is not None:
            edges = [
                (i, j, "black" if reference[i, j] else "C3", "-" if reference[i, j] else "--") for i, j, *_ in edges
            ]
            edges += [(i, j, "0.75", ":") for i, j in zip(*np.nonzero(reference & ~graph.astype(bool)))]
        for i, j, colour, style in edges:
            ax.annotate(
                "",
                xy=position[j],
                xytext=position[i],
                arrowprops={
                    "arrowstyle": "-|>",
                    "color": colour,
                    "linestyle": style,
                    "lw": 1.2,
                    "mutation_scale": 12,
                    "patchA": nodes[i].get_bbox_patch(),
                    "patchB": nodes[j].get_bbox_patch(),
                    "shrinkA": 2,
                    "shrinkB": 2,
                    "connectionstyle": "arc3,rad=0.08",
                },
                zorder=2,
            )
        ax.set(xlim=(-1.35, 1.35), ylim=(-1.3, 1.3), aspect="equal")
        ax.set_title(titles[index], fontsize=10)
    fig.tight_layout()
    return fig


def draw_weights(posterior, edges):
    """Weighted histograms of theta[i, j] over the samples that have the edge i -> j, one panel per edge.

    posterior: a Posterior whose theta is [K, d, d] (a weight per edge); edges: rows with `parent`, `child`
    (variable names) and `probability` (Posterior.theta_summary's rows), one panel each, three per row.
    """
    index = {name: i for i, name in enumerate(posterior.names)}
    weights = posterior.weights()
    columns = min(3, len(edges))
    rows = -(-len(edges) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3.4 * columns, 2.6 * rows), squeeze=False)
    for ax, row in zip(axes.flat, edges.itertuples()):
        i, j = index[row.parent], index[row.child]
        present = posterior.graphs[:, i, j].astype(bool)
        ax.hist(posterior.theta[present, i, j], bins=30, weights=weights[present], color="C0", alpha=0.8)
        ax.axvline(0.0, color="0.5", lw=0.8)
        ax.set_title(f"{row.parent} → {row.child}: P = {row.probability:.2f}", fontsize=10)
        ax.set_xlabel("weight θ")
        ax.set_yticks([])
    for ax in list(axes.flat)[len(edges) :]:
        ax.axis("off")
    fig.tight_layout()
    return fig


def draw_training_curve(rows):
    """The loss (and |Δ| when every row has `abs_delta`) against the iteration, one panel each.

    rows: the training log's rows (posterior_inputs.read_training_log), dicts with `iteration` and `loss`.
    A panel whose positive values span over a decade has a log y axis.
    """
    iteration = np.array([row["iteration"] for row in rows], float)
    panels = [("loss", "loss")] + [(key, "|Δ|") for key in ("abs_delta",) if all(key in row for row in rows)]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.0), squeeze=False)
    for ax, (key, name) in zip(axes[0], panels):
        values = np.array([row[key] for row in rows], float)
        ax.plot(iteration, values, marker="o" if len(rows) <= 30 else None, ms=3, lw=1.2, color="C0")
        finite = values[np.isfinite(values)]
        if finite.size and finite.min() > 0 and finite.max() > 10 * finite.min():  # over a decade: log scale
            ax.set_yscale("log")
        ax.set_xlabel("iteration")
        ax.set_ylabel(name)
        ax.set_title(f"{name} per dispatch", fontsize=10)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig
