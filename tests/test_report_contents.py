"""What the figures and tables show, not only that their files exist: the methods drawn (titles, tick labels),
the axis ranges (features in [0, 1], RMSE >= 0, Pearson's r in [-1, 1]) and the numbers drawn or written,
each compared with the same quantity computed here with pandas / numpy from the small synthetic input.

The paper's order of the methods used below (Table D.1, Figure 2): MH-MC3, B-PC*, JSP-GFN.
"""

import re

import matplotlib.collections
import matplotlib.colors
import matplotlib.text
import numpy as np
import pandas as pd
import pytest

from jspgfn import cli
from jspgfn.posterior import Posterior
from jspgfn.report import figures
from jspgfn.report.figures import figure_features, figure_metrics
from jspgfn.report.posterior_figures import draw_graphs, draw_training_curve, draw_weights

# (label, display name); the rows of the inputs list them out of the paper's order on purpose.
METHODS = [("jspgfn", "JSP-GFN"), ("mh-mc3", "MH-MC3"), ("b-pc", "B-PC*")]
PAPER_ORDER = ["MH-MC3", "B-PC*", "JSP-GFN"]
TEXT_NUMBER = r"(-?\d+\.\d+|nan)"


def features_table(num_datasets=2, num_pairs=12):
    """features.csv: one row per (method, dataset, feature, ordered pair), exact in [0, 1], estimate = exact
    plus a method-dependent error, clipped to [0, 1]."""
    rng = np.random.default_rng(0)
    rows = []
    for noise, (label, name) in zip((0.05, 0.3, 0.15), METHODS):
        for seed in range(num_datasets):
            for feature in ("edge", "path", "markov"):
                exact = rng.random(num_pairs)
                estimate = np.clip(exact + noise * rng.standard_normal(num_pairs), 0.0, 1.0)
                rows += [
                    {
                        "label": label,
                        "display_name": name,
                        "dataset_seed": seed,
                        "feature": feature,
                        "exact": x,
                        "estimate": y,
                    }
                    for x, y in zip(exact, estimate)
                ]
    return pd.DataFrame(rows)


def metrics_table(num_datasets=4):
    """metrics.csv: one row per (method, dataset), edge RMSE in [0, 1] and Pearson's r in [-1, 1]."""
    rng = np.random.default_rng(1)
    rows = []
    for centre, (label, name) in zip((0.2, 0.45, 0.3), METHODS):
        for seed in range(num_datasets):
            rows.append(
                {
                    "label": label,
                    "display_name": name,
                    "dataset_seed": seed,
                    "edge_rmse": centre + 0.05 * rng.random(),
                    "edge_pearson": np.clip(0.9 - centre + 0.1 * rng.standard_normal(), -1.0, 1.0),
                }
            )
    return pd.DataFrame(rows)


def scatter_points(ax):
    """The (x, y) points of the panel's scatter plots: float [n, 2], rows sorted."""
    dots = [c for c in ax.collections if isinstance(c, matplotlib.collections.PathCollection)]
    points = np.concatenate([np.asarray(c.get_offsets()) for c in dots])
    return points[np.lexsort(points.T[::-1])]


def row_names(ax):
    """The names of a panel's rows (tick labels; a panel sharing its y axis hides them but keeps them)."""
    formatter = ax.yaxis.get_major_formatter()
    return [formatter(tick, index) for index, tick in enumerate(ax.get_yticks())]


def sorted_rows(values):
    values = np.asarray(values, float)
    return values[np.lexsort(values.T[::-1])]


# --------------------------------------------------------------- Figures 2a and D.1: features against the exact


def test_feature_scatter_draws_each_method_its_points_and_their_errors(tmp_path):
    features = features_table()
    fig = figure_features(features, [label for label, _ in METHODS], ["edge", "markov"], tmp_path / "f")
    kinds = {"edge": "edge features", "markov": "Markov features"}
    label_of = {name: label for label, name in METHODS}
    panels = [(name, feature) for name in PAPER_ORDER for feature in kinds]  # one row per method
    assert [ax.get_title() for ax in fig.axes] == [f"{name}: {kinds[feature]}" for name, feature in panels]
    for ax, (name, feature) in zip(fig.axes, panels):
        part = features[(features.label == label_of[name]) & (features.feature == feature)]
        # every (exact, estimate) pair of the method and feature, over both datasets, and nothing else
        np.testing.assert_allclose(scatter_points(ax), sorted_rows(part[["exact", "estimate"]]))
        # the axes show all of [0, 1] (features are probabilities) and little beyond
        for low, high in (ax.get_xlim(), ax.get_ylim()):
            assert -0.05 <= low <= 0.0 and 1.0 <= high <= 1.05
        rmse, r = (
            float(v) for v in re.fullmatch(rf"RMSE {TEXT_NUMBER}\nr = {TEXT_NUMBER}", ax.texts[0].get_text()).groups()
        )
        assert rmse >= 0.0 and -1.0 <= r <= 1.0
        assert rmse == pytest.approx(((part.estimate - part.exact) ** 2).mean() ** 0.5, abs=5e-4)
        assert r == pytest.approx(part.exact.corr(part.estimate), abs=5e-4)
    for suffix in (".pdf", ".png"):
        assert (tmp_path / f"f{suffix}").stat().st_size > 0


def test_one_feature_puts_the_methods_side_by_side_and_leaves_out_absent_ones(tmp_path):
    features = features_table()
    features = features[features.label != "b-pc"]  # asked for below, but absent from the table
    fig = figure_features(features, ["b-pc", "jspgfn", "mh-mc3"], ["edge"], tmp_path / "f", max_columns=1)
    visible = [ax for ax in fig.axes if ax.axison]
    assert [ax.get_title() for ax in visible] == ["MH-MC3: edge features", "JSP-GFN: edge features"]
    jspgfn = features[(features.label == "jspgfn") & (features.feature == "edge")]
    np.testing.assert_allclose(scatter_points(visible[1]), sorted_rows(jspgfn[["exact", "estimate"]]))
    with pytest.raises(ValueError, match="none of the requested methods"):
        figure_features(features, ["b-pc"], ["edge"], tmp_path / "g")


# --------------------------------------------------------------- Figure 2b: metrics per method


def test_metric_panels_draw_each_method_at_its_mean_within_the_metric_range(tmp_path):
    metrics = metrics_table()
    fig = figure_metrics(metrics, ["edge_rmse", "edge_pearson"], ["RMSE", "r"], tmp_path / "m")
    for ax, column, (low, high) in zip(fig.axes, ["edge_rmse", "edge_pearson"], [(0.0, np.inf), (-1.0, 1.0)]):
        assert row_names(ax) == PAPER_ORDER
        assert not ax.texts  # no method is far off: each is drawn in its row
        expected = metrics.groupby("display_name")[column].mean()
        centres = [container.lines[0].get_xydata()[0] for container in ax.containers]  # one error bar per row
        assert [y for _, y in centres] == list(range(len(PAPER_ORDER)))
        np.testing.assert_allclose([x for x, _ in centres], expected[PAPER_ORDER].to_numpy(), rtol=1e-12)
        # every run's value is drawn, and inside the metric's range
        runs = scatter_points(ax)[:, 0]
        np.testing.assert_allclose(np.sort(runs), np.sort(metrics[column].to_numpy()))
        bars = np.concatenate([np.concatenate(c.lines[2][0].get_segments())[:, 0] for c in ax.containers])
        assert low <= min(runs.min(), bars.min()) and max(runs.max(), bars.max()) <= high


def test_report_commands_draw_and_write_what_the_tables_hold(tmp_path, monkeypatch):
    """`jspgfn report metrics` and `features` draw the input's methods and values (the Figure is caught as it
    is saved); `report table-d1` writes per method and metric the mean of the input's runs."""
    metrics = metrics_table()
    for f in ("path", "markov"):
        metrics[f"{f}_rmse"], metrics[f"{f}_pearson"] = metrics.edge_rmse / 2, metrics.edge_pearson / 2
    metrics.to_csv(tmp_path / "metrics.csv", index=False)
    features = features_table()
    features.to_csv(tmp_path / "features.csv", index=False)
    columns = [f"{f}_{m}" for f in ("edge", "path", "markov") for m in ("rmse", "pearson")]
    paper = pd.DataFrame([{"method": "B-PC*", **{c: 0.5 for c in columns}, **{f"{c}_ci": 0.1 for c in columns}}])
    paper.to_csv(tmp_path / "paper.csv", index=False)
    drawn = []
    save = figures.save
    monkeypatch.setattr(figures, "save", lambda fig, stem: (drawn.append(fig), save(fig, stem)))

    argv = ["report", "metrics", "--metrics", str(tmp_path / "metrics.csv"), "--columns", "edge_rmse"]
    assert cli.main([*argv, "--out", str(tmp_path / "m")]) == 0
    (ax,) = drawn.pop().axes
    assert [t.get_text() for t in ax.get_yticklabels()] == PAPER_ORDER
    expected = metrics.groupby("display_name").edge_rmse.mean()[PAPER_ORDER]
    np.testing.assert_allclose([c.lines[0].get_xydata()[0, 0] for c in ax.containers], expected.to_numpy())

    argv = ["report", "features", "--features", str(tmp_path / "features.csv"), "--kinds", "path"]
    assert cli.main([*argv, "--methods", "jspgfn", "b-pc", "--out", str(tmp_path / "f")]) == 0
    titles = [ax.get_title() for ax in drawn.pop().axes if ax.axison]
    assert titles == ["B-PC*: path features", "JSP-GFN: path features"]

    argv = ["report", "table-d1", "--metrics", str(tmp_path / "metrics.csv"), "--paper", str(tmp_path / "paper.csv")]
    assert cli.main([*argv, "--out", str(tmp_path / "t")]) == 0
    written = pd.read_csv(tmp_path / "t.csv")
    means = metrics.melt(id_vars=["label"], value_vars=columns)
    means = means.groupby(["label", "variable"]).value.mean()
    assert len(written) == len(means) == 3 * 6
    for row in written.itertuples():
        assert row.mean == pytest.approx(means[row.label, row.metric], rel=1e-9)
        assert row.low <= row.mean <= row.high
    assert list(dict.fromkeys(written.method)) == PAPER_ORDER
    tex = (tmp_path / "t.tex").read_text()
    assert [tex.index(name.replace("*", "")) for name in PAPER_ORDER] == sorted(
        tex.index(name.replace("*", "")) for name in PAPER_ORDER
    )
    for suffix in (".pdf", ".png"):
        assert (tmp_path / f"m{suffix}").stat().st_size > 0 and (tmp_path / f"f{suffix}").stat().st_size > 0


# --------------------------------------------------------------- the posterior page's own figures


def circle(d):
    """Where draw_graphs puts the d nodes: clockwise from the top of the unit circle, [d, 2]."""
    angles = np.pi / 2 - 2 * np.pi * np.arange(d) / d
    return np.stack([np.cos(angles), np.sin(angles)], axis=1)


def drawn_edges(ax, d):
    """{(parent, child): (rgba colour, line style)} of the arrows of one panel of draw_graphs."""
    position = circle(d)
    edges = {}
    for text in ax.texts:
        if isinstance(text, matplotlib.text.Annotation):
            head = int(np.argmin(np.linalg.norm(position - np.asarray(text.xy), axis=1)))
            tail = int(np.argmin(np.linalg.norm(position - np.asarray(text.xyann), axis=1)))
            arrow = text.arrow_patch
            edges[tail, head] = (tuple(arrow.get_edgecolor()), arrow.get_linestyle())
    return edges


def test_graph_panels_draw_every_edge_and_mark_it_against_the_reference():
    names = ["A", "B", "C", "D"]
    reference = np.zeros((4, 4), dtype=bool)
    reference[0, 1] = reference[1, 2] = reference[2, 3] = True
    graphs = np.zeros((2, 4, 4), dtype=np.uint8)
    graphs[0, 0, 1] = graphs[0, 1, 2] = graphs[0, 3, 0] = 1  # two edges of the reference, one not in it
    graphs[1, 2, 3] = 1
    fig = draw_graphs(graphs, names, ["#1", "#2"], reference=reference)
    visible = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in visible] == ["#1", "#2"]
    black, red, grey = (matplotlib.colors.to_rgba(c) for c in ("black", "C3", "0.75"))
    for ax, graph in zip(visible, graphs):
        nodes = [t.get_text() for t in ax.texts if not isinstance(t, matplotlib.text.Annotation)]
        assert nodes == names
        expected = {}
        for i, j in zip(*np.nonzero(graph | reference)):
            if graph[i, j] and reference[i, j]:
                expected[i, j] = (black, "-")
            elif graph[i, j]:
                expected[i, j] = (red, "--")
            else:  # an edge of the reference that the graph lacks
                expected[i, j] = (grey, ":")
        assert drawn_edges(ax, 4) == expected
    # without a reference every edge of the graph is drawn black, and only those
    (ax, *_) = draw_graphs(graphs[:1], names, ["#1"]).axes
    assert drawn_edges(ax, 4) == {(int(i), int(j)): (black, "-") for i, j in zip(*np.nonzero(graphs[0]))}


def test_weight_histograms_hold_the_weight_of_the_samples_with_each_edge():
    rng = np.random.default_rng(2)
    k = 40
    graphs = (rng.random((k, 3, 3)) < 0.5).astype(np.uint8) * np.triu(np.ones((3, 3), np.uint8), 1)
    theta = rng.normal(size=(k, 3, 3))
    log_weights = rng.normal(size=k)
    posterior = Posterior(graphs=graphs, theta=theta, metadata={}, log_weights=log_weights)
    weights = np.exp(log_weights) / np.exp(log_weights).sum()
    edges = pd.DataFrame(
        [
            {"parent": f"X{i + 1}", "child": f"X{j + 1}", "probability": weights[graphs[:, i, j] == 1].sum()}
            for i, j in ((0, 1), (1, 2), (0, 2), (0, 1))
        ]
    )
    fig = draw_weights(posterior, edges)
    panels = [ax for ax in fig.axes if ax.axison]
    assert len(fig.axes) == 6 and len(panels) == 4  # three per row, the empty cells switched off
    for ax, row in zip(panels, edges.itertuples()):
        i, j = int(row.parent[1:]) - 1, int(row.child[1:]) - 1
        present = graphs[:, i, j] == 1
        assert ax.get_title() == f"X{i + 1} → X{j + 1}: P = {row.probability:.2f}"
        bars = [p for p in ax.patches if p.get_width() > 0]
        assert sum(p.get_height() for p in bars) == pytest.approx(weights[present].sum())
        left, right = min(p.get_x() for p in bars), max(p.get_x() + p.get_width() for p in bars)
        values = theta[present, i, j]
        assert left == pytest.approx(values.min()) and right == pytest.approx(values.max())


def test_training_curve_draws_the_log_and_scales_it():
    rows = [{"iteration": 10 * n, "loss": 500.0 / (n + 1), "abs_delta": 2.0 + np.sin(n)} for n in range(12)]
    fig = draw_training_curve(rows)
    assert [ax.get_ylabel() for ax in fig.axes] == ["loss", "|Δ|"]
    for ax, key in zip(fig.axes, ("loss", "abs_delta")):
        (line,) = ax.lines
        np.testing.assert_array_equal(line.get_xdata(), [row["iteration"] for row in rows])
        np.testing.assert_array_equal(line.get_ydata(), [row[key] for row in rows])
    # the loss spans over a decade (500 to 38): log scale; |Δ| within one: linear
    assert [ax.get_yscale() for ax in fig.axes] == ["log", "linear"]
    rows[3].pop("abs_delta")  # not in every row: the loss alone
    assert [ax.get_ylabel() for ax in draw_training_curve(rows).axes] == ["loss"]
