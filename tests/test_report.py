"""Tables and figures from aggregated tables."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from jspgfn import cli
from jspgfn.report.summary import format_mean_ci, mean_ci, summarise
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


def test_mean_ci_is_the_student_t_interval():
    values = np.array([0.1, 0.4, 0.35, 0.2, np.nan])
    mean, half = mean_ci(values)
    finite = values[:4]
    low, high = stats.t.interval(0.95, 3, loc=finite.mean(), scale=stats.sem(finite))
    assert mean == pytest.approx(finite.mean()) and half == pytest.approx((high - low) / 2)
    assert np.isnan(mean_ci([0.3])[1]) and np.isnan(mean_ci([])[0])
    assert format_mean_ci(0.01234, 0.0051) == "0.012 ± 0.005"


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
    assert shown.loc[0, "Edge RMSE (paper)"] == "0.500 ± 0.500"
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
