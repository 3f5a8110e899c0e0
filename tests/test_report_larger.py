"""Figures 3a-3c and D.2 and the slope table of the larger-graph experiments, from synthetic tidy tables."""

import matplotlib.collections
import numpy as np
import pandas as pd
import pytest

from jspgfn import cli
from jspgfn.report.figures import far_off, figure_log_pt, figure_metrics, format_value
from jspgfn.report.names import sort_labels
from jspgfn.report.tables import table_slopes

# id, display name, mean of the synthetic cross-entropy (MH-MC3 far off, as in Figure 2b)
METHODS = [("mh-mc3", "MH-MC3", 65.0), ("dibs", "DiBS", 3.0), ("b-pc", "B-PC*", 2.0), ("jspgfn", "JSP-GFN", 0.5)]


def metrics_table(methods=METHODS, num_datasets=10):
    rng = np.random.default_rng(0)
    rows = []
    for label, name, mean in methods:
        for seed in range(num_datasets):
            rows.append(
                {
                    "label": label,
                    "display_name": name,
                    "dataset_seed": seed,
                    "theta_cross_entropy": mean + 0.3 * rng.standard_normal(),
                    "auroc": 0.5 + 0.1 * rng.random(),
                }
            )
    return pd.DataFrame(rows)


def _panel(fig):
    return fig.axes[0]


def _means(metrics, column):
    return metrics.groupby("label", sort=False)[column].mean()


def test_far_off_method_is_clipped_with_an_arrow_and_its_value(tmp_path):
    metrics = metrics_table()
    fig = figure_metrics(metrics, ["theta_cross_entropy"], ["cross-entropy"], tmp_path / "m")
    ax = _panel(fig)
    low, high = ax.get_xlim()
    means = _means(metrics, "theta_cross_entropy")
    assert means["mh-mc3"] > high
    others = means.drop("mh-mc3")
    assert low < others.min() and others.max() < high
    assert (others.max() - others.min()) / (high - low) > 0.3  # the close methods fill the panel
    texts = [annotation.get_text() for annotation in ax.texts]
    assert len(texts) == 1 and texts[0].startswith(f"{means['mh-mc3']:.4g} [")
    assert ax.texts[0].arrow_patch is not None
    # Every run's value is drawn as a dot: one scatter per method, one dot per dataset; the far-off method
    # is not drawn (only its arrow), so nothing of it crosses the others.
    dots = [c for c in ax.collections if isinstance(c, matplotlib.collections.PathCollection)]
    assert len(dots) == len(METHODS) - 1 and all(len(c.get_offsets()) == 10 for c in dots)
    for suffix in (".pdf", ".png"):
        assert (tmp_path / f"m{suffix}").stat().st_size > 0


def test_a_table_without_a_far_off_method_is_drawn_as_before(tmp_path):
    methods = [(label, name, mean) for label, name, mean in METHODS if label != "mh-mc3"]
    metrics = metrics_table(methods)
    fig = figure_metrics(metrics, ["theta_cross_entropy", "auroc"], ["ce", "auroc"], tmp_path / "m")
    for ax, column in zip(fig.axes, ["theta_cross_entropy", "auroc"]):
        assert not ax.texts and ax.get_autoscalex_on()  # limits left to matplotlib, no arrow
        low, high = ax.get_xlim()
        assert all(low < mean < high for mean in _means(metrics, column))
    # In the table with MH-MC3, its AUROC is not far off: that panel is not clipped either.
    fig = figure_metrics(metrics_table(), ["theta_cross_entropy", "auroc"], ["ce", "auroc"], tmp_path / "n")
    assert fig.axes[0].texts and not fig.axes[1].texts


def test_far_off_is_robust_and_conservative():
    none = [np.empty(0)] * 5

    def far(means, half, points=none):
        means = np.asarray(means)
        return far_off(means, means - half, means + half, points).tolist()

    assert far([1.0, 2.0, 3.0, 4.0, 65.0], 0.5) == [False] * 4 + [True]
    assert far([-70.0, 2.0, 3.0, 4.0, 5.0], 0.5) == [True] + [False] * 4
    assert not any(far([1.0, 2.0, 3.0, 4.0, 5.0], 0.5))  # an even spread: nothing to clip
    assert not any(far([1.0, 65.0], 0.5, none[:2]))  # two methods: no majority
    assert not any(far([1.0, 1.0, 1.0, 1.5], 0.4, none[:4]))  # within the noise
    # The others' own dots span as much as the far-off mean: clipping would not help, so it is not done.
    wide = [np.array([-60.0, 60.0])] + [np.empty(0)] * 4
    assert not any(far([1.0, 2.0, 3.0, 4.0, 65.0], 0.5, wide))
    around = [np.array([-10.0, 100.0])] + [np.empty(0)] * 4  # 65 lies among what the others draw
    assert not any(far([1.0, 2.0, 3.0, 4.0, 65.0], 0.5, around))
    assert not any(far([1.0, np.nan, 3.0, 4.0, np.nan], 0.5))
    assert format_value(65.2, 62.06, 68.3) == "65.2 [62, 68]" and format_value(65.2, np.nan, np.nan) == "65.2"
    assert format_value(1078.87, 0.0, 7116.1) == "1079 [0, 7100]" and format_value(-2.5e7, -2.5e7, -2.5e7) == (
        "-2.5e+07 [-2.5e+07, -2.5e+07]"
    )


def test_report_metrics_points_and_title_cli(tmp_path):
    metrics_table().to_csv(tmp_path / "metrics.csv", index=False)
    argv = ["report", "metrics", "--metrics", str(tmp_path / "metrics.csv"), "--columns", "theta_cross_entropy"]
    assert cli.main([*argv, "--title", "Held-out NLL: ER2, d=20", "--out", str(tmp_path / "f")]) == 0
    for suffix in (".pdf", ".png"):
        assert (tmp_path / f"f{suffix}").stat().st_size > 0
    fig = figure_metrics(metrics_table(), ["auroc"], ["AUROC"], tmp_path / "g", title="A title")
    assert fig._suptitle.get_text() == "A title"


def test_new_method_ids_are_ordered_by_display_name():
    names = {
        "jspgfn-mlp": "JSP-GFN",
        "dibs-mlp": "DiBS",
        "dibs-er2": "DiBS",
        "dibs-mixture-er2": "DiBS+",
        "gibbs-mc3-mlp": "Gibbs-MC3",
        "mh-mc3-mlp": "MH-MC3",
    }
    order = sort_labels(list(names), names)
    assert [names[label] for label in order] == ["MH-MC3", "Gibbs-MC3", "DiBS", "DiBS", "DiBS+", "JSP-GFN"]


# --------------------------------------------------------------- log P_T against log R (Figure 3c)


def log_pt_tables(seeds=(7, 3), num=60):
    """log_pt.csv (points on log P_T = 0.8 log R + 2, one outlier) and metrics.csv of one method, plus a baseline."""
    rng = np.random.default_rng(1)
    points, runs = [], []
    for seed in seeds:
        log_r = rng.uniform(-200, -100, size=num)
        log_pt = 0.8 * log_r + 2.0 + rng.normal(scale=0.5, size=num)
        for k in range(num):
            points.append(
                {
                    "preset": "test",
                    "label": "jspgfn-mlp",
                    "display_name": "JSP-GFN",
                    "method": "jspgfn",
                    "dataset_seed": seed,
                    "sample": k,
                    "num_edges": int(rng.integers(10, 40)),
                    "log_reward": log_r[k],
                    "log_pt": log_pt[k],
                }
            )
        runs.append(
            {
                "label": "jspgfn-mlp",
                "display_name": "JSP-GFN",
                "dataset_seed": seed,
                "seed": seed,
                "log_pt_slope": 0.8 + 0.01 * seed,
                "log_pt_intercept": 2.0,
                "log_pt_pearson": 0.99 - 0.001 * seed,
            }
        )
        runs.append({"label": "dibs-mlp", "display_name": "DiBS", "dataset_seed": seed, "seed": seed})
    return pd.DataFrame(points), pd.DataFrame(runs)


def test_figure_log_pt_draws_the_points_the_fit_and_the_slope(tmp_path):
    points, metrics = log_pt_tables()
    fig = figure_log_pt(points, metrics, ["jspgfn-mlp"], tmp_path / "c")
    ax = fig.axes[0]
    assert ax.get_title() == "JSP-GFN (dataset 3)"  # the smallest dataset_seed by default
    scatter = ax.collections[0]
    assert len(scatter.get_offsets()) == 60 and scatter.get_array() is not None  # coloured by edges
    assert any(other.get_label() == "<colorbar>" for other in fig.axes)
    text = ax.texts[0].get_text()
    part = points[points.dataset_seed == 3]
    r = np.corrcoef(part.log_reward, part.log_pt)[0, 1]
    assert "Δ = 0.830" in text and f"r = {r:.3f}" in text
    (line,) = ax.lines
    x, y = line.get_data()
    assert (y[1] - y[0]) / (x[1] - x[0]) == pytest.approx(0.83)
    for suffix in (".pdf", ".png"):
        assert (tmp_path / f"c{suffix}").stat().st_size > 0

    fig = figure_log_pt(points, metrics, ["jspgfn-mlp"], tmp_path / "d", dataset_seed=7, title="Figure 3c")
    assert "Δ = 0.870" in fig.axes[0].texts[0].get_text() and fig._suptitle.get_text() == "Figure 3c"


def test_report_log_pt_and_table_slopes_cli(tmp_path):
    points, metrics = log_pt_tables()
    points.to_csv(tmp_path / "log_pt.csv", index=False)
    metrics.to_csv(tmp_path / "metrics.csv", index=False)
    argv = ["report", "log-pt", "--table", str(tmp_path / "log_pt.csv"), "--metrics", str(tmp_path / "metrics.csv")]
    assert cli.main([*argv, "--methods", "jspgfn-mlp", "--dataset-seed", "7", "--out", str(tmp_path / "c")]) == 0
    argv = ["report", "table-slopes", "--metrics", str(tmp_path / "metrics.csv"), "--out", str(tmp_path / "t")]
    assert cli.main(argv) == 0
    for name in ("c.pdf", "c.png", "t.csv", "t.tex", "t.pdf"):
        assert (tmp_path / name).stat().st_size > 0, name
    numbers = pd.read_csv(tmp_path / "t.csv")
    assert set(numbers.label) == {"jspgfn-mlp"}  # the baseline has no log P_T estimate
    assert list(numbers.dataset_seed) == ["3", "7", "mean"]
    assert numbers.log_pt_slope.iloc[2] == pytest.approx((0.83 + 0.87) / 2)
    assert numbers.log_pt_slope_low.iloc[2] < 0.85 < numbers.log_pt_slope_high.iloc[2] and numbers.n.iloc[2] == 2
    assert "mean [95\\% CI]" in (tmp_path / "t.tex").read_text() and "Fisher z" in (tmp_path / "t.tex").read_text()


def test_table_slopes_rows_per_dataset_and_mean():
    _, metrics = log_pt_tables(seeds=(0, 1, 2))
    numbers, shown = table_slopes(metrics)
    assert list(shown.columns) == ["Method", "Dataset", "Slope Δ", "Pearson r"]
    assert list(shown.Dataset) == ["0", "1", "2", "mean [95% CI]"]
    values = np.array([0.80, 0.81, 0.82])
    half = 4.302652729911275 * values.std(ddof=1) / np.sqrt(3)  # t_{0.975, 2}: the slope is unbounded
    assert shown["Slope Δ"].iloc[3] == f"{values.mean():.3f} [{values.mean() - half:.3f}, {values.mean() + half:.3f}]"
    pearson = numbers.iloc[3][["log_pt_pearson_low", "log_pt_pearson", "log_pt_pearson_high"]].to_numpy(float)
    assert -1 <= pearson[0] < pearson[1] < pearson[2] <= 1


def test_bad_log_pt_input_gives_one_line_naming_the_file(tmp_path, capsys):
    points, metrics = log_pt_tables()
    metrics.to_csv(tmp_path / "metrics.csv", index=False)
    points.drop(columns="log_pt").to_csv(tmp_path / "nocol.csv", index=False)
    points.iloc[:0].to_csv(tmp_path / "empty.csv", index=False)  # header only: no run had points
    points.to_csv(tmp_path / "log_pt.csv", index=False)

    def run(*argv):
        status = cli.main(["report", *argv, "--out", str(tmp_path / "out")])
        err = capsys.readouterr().err
        assert status == 2 and err.count("\n") == 1 and err.startswith("jspgfn: error: "), err
        return err

    log_pt = ["log-pt", "--metrics", str(tmp_path / "metrics.csv"), "--methods", "jspgfn-mlp"]
    assert "nocol.csv: missing column(s) log_pt" in run(*log_pt, "--table", str(tmp_path / "nocol.csv"))
    assert "empty.csv: has no log P_T points" in run(*log_pt, "--table", str(tmp_path / "empty.csv"))
    err = run(*log_pt, "--table", str(tmp_path / "log_pt.csv"), "--dataset-seed", "5")
    assert "log_pt.csv: no log P_T points of method 'jspgfn-mlp' on dataset_seed 5" in err
    log_pt[-1] = "dibs-mlp"
    assert "log_pt.csv: no log P_T points of method 'dibs-mlp'" in run(*log_pt, "--table", str(tmp_path / "log_pt.csv"))

    metrics.drop(columns="log_pt_pearson").to_csv(tmp_path / "m2.csv", index=False)
    assert "m2.csv: missing column(s) log_pt_pearson" in run("table-slopes", "--metrics", str(tmp_path / "m2.csv"))
    metrics.iloc[:0].to_csv(tmp_path / "m3.csv", index=False)
    assert "m3.csv: the table has no rows" in run("table-slopes", "--metrics", str(tmp_path / "m3.csv"))
    assert "m3.csv: the table has no rows" in run("metrics", "--metrics", str(tmp_path / "m3.csv"), "--columns", "seed")
    metrics[metrics.label == "dibs-mlp"].to_csv(tmp_path / "m4.csv", index=False)
    assert "m4.csv: no run has a log_pt_slope" in run("table-slopes", "--metrics", str(tmp_path / "m4.csv"))
    assert not list(tmp_path.glob("out.*"))


def test_a_method_without_any_value_is_labelled_in_its_row(tmp_path):
    """DiBS with every particle cyclic has no NLL: its row says so instead of staying silently empty."""
    metrics = metrics_table()
    metrics.loc[metrics.label == "dibs", "theta_cross_entropy"] = np.nan
    fig = figure_metrics(metrics, ["theta_cross_entropy", "auroc"], ["ce", "auroc"], tmp_path / "m")
    ce, auroc = fig.axes[0], fig.axes[1]
    labelled = [text for text in ce.texts if text.get_text() == "no value"]
    row = [tick.get_text() for tick in ce.get_yticklabels()].index("DiBS")
    assert len(labelled) == 1 and labelled[0].get_position()[1] == ce.get_yticks()[row]
    assert not [text for text in auroc.texts if text.get_text() == "no value"]
