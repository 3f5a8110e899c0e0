"""Tables and figures from aggregated tables."""

import matplotlib.collections
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from jspgfn import cli
from jspgfn.report.figures import figure_metrics
from jspgfn.report.summary import RANGES, format_interval, interval, summarise
from jspgfn.report.tables import table_d1

PAPER = pd.DataFrame(
    [
        {
            "method": "B-PC*",
            **{
                f"{f}_{m}{s}": 0.5 for f in ("edge", "path", "markov") for m in ("rmse", "pearson") for s in ("", "_ci")
            },
        }
    ]
)


def metrics_table():
    rng = np.random.default_rng(0)
    rows = []
    for label, name in (("b-pc", "B-PC*"), ("exact", "Exact (reference)")):
        for seed in range(5):
            rows.append(
                {
                    "label": label,
                    "display_name": name,
                    "dataset_seed": seed,
                    **{f"{f}_{m}": rng.random() for f in ("edge", "path", "markov") for m in ("rmse", "pearson")},
                    "theta_cross_entropy": rng.normal(),
                }
            )
    return pd.DataFrame(rows)


UNIT, CORRELATION, NON_NEGATIVE = (0.0, 1.0), (-1.0, 1.0), (0.0, np.inf)


def test_interval_of_an_unbounded_metric_is_the_student_t_interval():
    values = np.array([0.1, 0.4, 0.35, 0.2, np.nan])
    mean, low, high = interval(values)
    finite = values[:4]
    assert mean == pytest.approx(finite.mean())
    assert (low, high) == pytest.approx(stats.t.interval(0.95, 3, loc=finite.mean(), scale=stats.sem(finite)))
    assert np.isnan(interval([0.3], UNIT)[1:]).all() and interval([0.3], UNIT)[0] == 0.3  # n = 1: no interval
    assert np.isnan(interval([], UNIT)).all() and np.isnan(interval([np.nan, np.inf])).all()
    assert format_interval(0.01234, 0.0051, 0.02) == "0.012 [0.005, 0.020]"
    assert format_interval(0.01234) == "0.012" and format_interval(np.nan) == "n/a"


@pytest.mark.parametrize(
    "bounds, values",
    [
        (UNIT, [0.0, 0.9]),  # the smoke preset's edge RMSEs: Student t went down to -1
        (UNIT, [0.001, 0.002]),
        (UNIT, [0.999, 1.0]),
        (CORRELATION, [-0.9, 0.95]),  # Student t went from -4 to 4.7
        (CORRELATION, [0.9999, 1.0]),
        (NON_NEGATIVE, [0.0, 40.0]),
        (NON_NEGATIVE, [1e-9, 3.0]),
    ],
)
def test_interval_stays_in_range_for_two_values_at_the_bounds(bounds, values):
    t_low, t_high = stats.t.interval(0.95, 1, loc=np.mean(values), scale=stats.sem(values))
    assert t_low < bounds[0] or t_high > bounds[1]  # the old interval left the range here
    mean, low, high = interval(values, bounds)
    assert bounds[0] <= low <= mean <= high <= bounds[1] and low < high


def test_interval_stays_in_range_for_adversarial_small_samples():
    """Values piled on and near the bounds (U-shaped Beta, exact bound values mixed in), n from 2 to 5."""
    rng = np.random.default_rng(1)
    for bounds in (UNIT, CORRELATION, NON_NEGATIVE):
        for _ in range(300):
            n = rng.integers(2, 6)
            u = np.where(rng.random(n) < 0.3, rng.integers(0, 2, n), rng.beta(0.05, 0.05, n))
            values = bounds[0] + u * (bounds[1] - bounds[0]) if np.isfinite(bounds[1]) else 1e3 * u**8
            mean, low, high = interval(values, bounds)
            assert bounds[0] <= low <= mean <= high <= bounds[1], (bounds, values, low, high)
    assert interval([1.0, 1.0, 1.0], UNIT) == (1.0, 1.0, 1.0)  # all on the bound: no spread, no way out
    with pytest.raises(ValueError, match="outside the metric's range"):
        interval([0.5, 1.5], UNIT)
    mean, low, high = interval([0.5, 1.0 + 1e-12], CORRELATION)  # rounding past a bound is not an error
    assert mean == 0.75 and -1.0 <= low <= mean <= high <= 1.0


@pytest.mark.parametrize(
    "bounds, draw, truth",
    [
        (UNIT, lambda rng, n: rng.beta(8, 2, n), 0.8),  # AUROC-like, skewed towards 1
        (UNIT, lambda rng, n: rng.beta(2, 30, n), 2 / 32),  # feature RMSE-like, near 0
        (CORRELATION, lambda rng, n: 2 * rng.beta(18, 2, n) - 1, 0.8),  # Pearson r near 1
        (NON_NEGATIVE, lambda rng, n: rng.gamma(2.0, 3.0, n), 6.0),  # E-SHD-like, right-skewed
        ((-np.inf, np.inf), lambda rng, n: rng.normal(1.0, 2.0, n), 1.0),  # NLL-like: Student t, exact
    ],
)
@pytest.mark.parametrize("n", [3, 5])
def test_interval_has_about_the_nominal_coverage(bounds, draw, truth, n):
    """Coverage of the known mean over 3,000 seeded simulated studies of n datasets each. The tolerance,
    0.025, is 3 Monte Carlo standard errors (3 * sqrt(0.95 * 0.05 / 3000) = 0.012) plus 0.013 for the
    delta method's approximation at small n (simulating 20,000 studies, these cases lie within 0.95 +-
    0.01; the plain Student t interval covers only 0.89-0.93 on the skewed ones)."""
    rng = np.random.default_rng(n)
    covered = [low <= truth <= high for _, low, high in (interval(draw(rng, n), bounds) for _ in range(3000))]
    assert np.mean(covered) == pytest.approx(0.95, abs=0.025)


def test_every_bounded_metric_has_its_range():
    columns = [f"{f}_{m}" for f in ("edge", "path", "markov") for m in ("rmse", "pearson")]
    assert all(RANGES[c] in (UNIT, CORRELATION) for c in columns)
    assert RANGES["auroc"] == UNIT and RANGES["log_pt_pearson"] == CORRELATION
    assert RANGES["expected_shd"] == NON_NEGATIVE and RANGES["num_edges_mean"] == NON_NEGATIVE
    assert "nll_expected" not in RANGES and "theta_cross_entropy" not in RANGES  # densities: unbounded


def test_figure_draws_intervals_in_range_and_every_dataset(tmp_path):
    """Two datasets near the bounds: each error bar stays in the metric's range, one dot per dataset; a
    method with one dataset gets its mean without a bar."""
    metrics = pd.DataFrame(
        {
            "label": ["a", "a", "b", "b", "c"],
            "edge_rmse": [0.0, 0.9, 0.01, 0.02, 0.5],
            "edge_pearson": [-0.9, 0.95, 0.99, 1.0, 0.2],
        }
    )
    fig = figure_metrics(metrics, ["edge_rmse", "edge_pearson"], ["RMSE", "r"], tmp_path / "m")
    for ax, bounds in zip(fig.axes, (UNIT, CORRELATION)):
        bars = [np.concatenate(c.lines[2][0].get_segments())[:, 0] for c in ax.containers]
        assert all(bounds[0] <= x.min() and x.max() <= bounds[1] for x in bars)
        assert [np.ptp(x) > 0 for x in bars] == [True, True, False]  # c: one dataset, no interval
        dots = [c for c in ax.collections if isinstance(c, matplotlib.collections.PathCollection)]
        assert [len(c.get_offsets()) for c in dots] == [2, 2, 1]


def test_summarise_counts_per_label():
    summary = summarise(metrics_table(), ["edge_rmse", "missing_column"])
    assert set(summary.label) == {"b-pc", "exact"} and set(summary.metric) == {"edge_rmse"}
    assert (summary.n == 5).all()


def test_table_d1_puts_paper_numbers_beside_ours():
    metrics = metrics_table()
    numbers, shown = table_d1(metrics, PAPER)
    assert list(shown.method) == ["B-PC*", "Exact (reference)"]
    row = numbers[(numbers.label == "b-pc") & (numbers.metric == "edge_rmse")].iloc[0]
    assert row["mean"] == pytest.approx(metrics[metrics.label == "b-pc"].edge_rmse.mean())
    assert row["paper_mean"] == 0.5
    assert shown.loc[0, "Edge RMSE (paper)"] == "0.500 ± 0.500"  # the paper's own numbers, as it prints them
    assert shown.loc[0, "Edge RMSE (ours)"] == format_interval(*row[["mean", "low", "high"]])
    assert shown.loc[1, "Edge RMSE (paper)"] == "–"  # not in the paper: shown as such, never invented


def test_report_commands_write_files(tmp_path):
    metrics = metrics_table()
    metrics.to_csv(tmp_path / "metrics.csv", index=False)
    PAPER.to_csv(tmp_path / "paper.csv", index=False)
    features = pd.DataFrame(
        [
            {"label": "b-pc", "feature": kind, "exact": x, "estimate": x * 0.9}
            for kind in ("edge", "path", "markov")
            for x in np.linspace(0, 1, 20)
        ]
    )
    features.to_csv(tmp_path / "features.csv", index=False)
    assert (
        cli.main(
            [
                "report",
                "table-d1",
                "--metrics",
                str(tmp_path / "metrics.csv"),
                "--paper",
                str(tmp_path / "paper.csv"),
                "--out",
                str(tmp_path / "t"),
            ]
        )
        == 0
    )
    assert (
        cli.main(["report", "metrics", "--metrics", str(tmp_path / "metrics.csv"), "--out", str(tmp_path / "m")]) == 0
    )
    assert (
        cli.main(
            [
                "report",
                "features",
                "--features",
                str(tmp_path / "features.csv"),
                "--methods",
                "b-pc",
                "--kinds",
                "edge",
                "path",
                "markov",
                "--out",
                str(tmp_path / "f"),
            ]
        )
        == 0
    )
    for name in ("t.csv", "t.tex", "t.pdf", "m.pdf", "m.png", "f.pdf", "f.png"):
        assert (tmp_path / name).stat().st_size > 0, name
    assert "B-PC" in (tmp_path / "t.tex").read_text()


def test_report_bad_input_names_file(tmp_path, capsys):
    (tmp_path / "metrics.csv").write_text("label,seed\nx,0\n")
    status = cli.main(["report", "metrics", "--metrics", str(tmp_path / "metrics.csv"), "--out", str(tmp_path / "m")])
    err = capsys.readouterr().err
    assert status == 2 and "metrics.csv: missing column(s) edge_rmse" in err
    assert not list(tmp_path.glob("m.*"))
    status = cli.main(
        ["report", "features", "--features", str(tmp_path / "nope.csv"), "--methods", "x", "--out", str(tmp_path / "f")]
    )
    assert status == 2 and "nope.csv: file not found" in capsys.readouterr().err


def test_capability_table_from_probes_and_runs(tmp_path):
    from jspgfn.capabilities import capability_table, probe, probe_dag_support
    from jspgfn.report.tables import table_a1

    metrics = pd.DataFrame({"label": ["b-ges", "b-ges", "dibs"], "share_cyclic": [0.0, 0.0, 0.25]})
    assert probe_dag_support(metrics, "b-ges") == (True, "0.0% cyclic graphs over 2 runs")
    assert probe_dag_support(metrics, "dibs")[0] is False
    method = {"kind": "baseline", "name": "b-ges", "display_name": "B-GES*", "params": {"num_bootstrap": 2}}
    probes = probe(method)
    assert probes["nonlinear"][0] is False and "refused the MLP model" in probes["nonlinear"][1]
    record = {
        "label": "b-ges",
        "display_name": "B-GES*",
        "declared": {
            "joint": False,
            "nonlinear": False,
            "dag_support": True,
            "discrete": None,
            "max_parents": False,
            "sampler": False,
            "minibatch": False,
        },
        "probes": probes,
    }
    table = capability_table([record], metrics)
    assert len(table) == 7 and set(table.label) == {"b-ges"}
    cells = table.set_index("capability")
    assert cells.loc["discrete", "value"] is None and not cells.loc["discrete", "probed"]
    assert cells.loc["dag_support", "value"] and cells.loc["dag_support", "probed"]
    # The report reads the table back from its CSV, as the workflow does.
    table.to_csv(tmp_path / "capabilities.csv", index=False)
    numbers, shown = table_a1(pd.read_csv(tmp_path / "capabilities.csv"))
    assert shown.loc[0, "method"] == "B-GES*" and shown.loc[0, "Non-linear"] == "✗*"
    assert shown.loc[0, "Discrete obs."] == "?" and shown.loc[0, "Joint G & θ"] == "✗"
    assert shown.loc[0, "DAG support"] == "✓*" and len(numbers) == 7
    assert (
        cli.main(
            ["report", "table-a1", "--capabilities", str(tmp_path / "capabilities.csv"), "--out", str(tmp_path / "a1")]
        )
        == 0
    )
    assert "B-GES" in (tmp_path / "a1.tex").read_text()
