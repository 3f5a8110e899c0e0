"""The real-data report pieces (Figure 4): edge marginals (evaluate -> aggregate -> heatmap) and the table
of E-SHD and AUROC against graph.csv (the Sachs consensus table), from small synthetic inputs."""

import json

import matplotlib.patches
import numpy as np
import pandas as pd
import pytest

from jspgfn import cli
from jspgfn.aggregate import aggregate_edges
from jspgfn.dataset import Dataset
from jspgfn.errors import DataError
from jspgfn.evaluate import edge_marginals
from jspgfn.report.figures import figure_edge_marginals
from jspgfn.report.tables import table_graph
from jspgfn.samples import PosteriorSamples

NAMES = ("Raf", "Mek", "Erk")
REFERENCE = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]], dtype=np.uint8)


def samples_and_dataset():
    graphs = np.zeros((4, 3, 3), dtype=np.uint8)
    graphs[:, 0, 1] = 1  # Raf -> Mek in every sample
    graphs[:2, 1, 2] = 1  # Mek -> Erk in half of them
    graphs[3, 2, 0] = 1  # Erk -> Raf in one
    samples = PosteriorSamples(graphs=graphs, theta=np.zeros((4, 3, 3)), metadata={"model": "lingauss"})
    dataset = Dataset(train=np.zeros((5, 3)), names=NAMES, graph=REFERENCE)
    return samples, dataset


def test_edge_marginals_of_samples():
    samples, dataset = samples_and_dataset()
    edges = edge_marginals(samples, dataset)
    assert edges["names"] == list(NAMES) and edges["reference"] == REFERENCE.tolist()
    marginal = np.array(edges["marginal"])
    assert marginal[0, 1] == 1.0 and marginal[1, 2] == 0.5 and marginal[2, 0] == 0.25 and marginal[1, 0] == 0.0
    json.dumps(edges)  # JSON-ready


def write_edges_json(path, label="jspgfn", seed=0, reference=True):
    samples, dataset = samples_and_dataset()
    edges = edge_marginals(samples, dataset)
    if not reference:
        edges["reference"] = None
    path.write_text(
        json.dumps({"label": label, "display_name": "JSP-GFN", "dataset_seed": seed, "edge_marginals": edges})
    )
    return path


def test_aggregate_edges_long_table(tmp_path):
    paths = [write_edges_json(tmp_path / "a.json"), write_edges_json(tmp_path / "b.json", seed=1, reference=False)]
    (tmp_path / "c.json").write_text(json.dumps({"label": "mh-mc3"}))  # no marginals: no rows
    table = aggregate_edges([*paths, tmp_path / "c.json"], tmp_path / "edges.csv", {"experiment": "sachs"})
    assert len(table) == 2 * 6 and set(table["dataset_seed"]) == {0, 1}
    row = table[(table.dataset_seed == 0) & (table.source == 1) & (table.target == 2)].iloc[0]
    assert (row.source_name, row.target_name, row.marginal, row.reference) == ("Mek", "Erk", 0.5, 1)
    assert table[table.dataset_seed == 1]["reference"].isna().all()
    assert pd.read_csv(tmp_path / "edges.csv").shape == table.shape
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"label": "x", "edge_marginals": {"names": ["a"], "marginal": [[0, 1]]}}))
    with pytest.raises(DataError, match="bad.json"):
        aggregate_edges([bad], tmp_path / "e2.csv")


def test_edge_marginal_heatmap_names_and_reference(tmp_path):
    table = aggregate_edges([write_edges_json(tmp_path / "a.json")], tmp_path / "edges.csv")
    fig = figure_edge_marginals(table, ["jspgfn"], tmp_path / "heat", title="Sachs")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == list(NAMES)
    assert [t.get_text() for t in ax.get_yticklabels()] == list(NAMES)
    image = ax.images[0].get_array()
    assert image[0, 1] == 1.0 and image[1, 2] == 0.5
    assert np.ma.is_masked(image[0, 0]) or np.isnan(image[0, 0])  # the diagonal is blank
    outlined = [p for p in ax.patches if isinstance(p, matplotlib.patches.Rectangle)]
    assert len(outlined) == int(REFERENCE.sum())
    for suffix in (".pdf", ".png"):
        assert (tmp_path / f"heat{suffix}").stat().st_size > 0
    with pytest.raises(DataError, match="no edge marginals of method 'vbg'"):
        figure_edge_marginals(table, ["vbg"], tmp_path / "x")
    with pytest.raises(DataError, match="--edge-marginals"):
        figure_edge_marginals(table.iloc[:0], ["jspgfn"], tmp_path / "x")


def test_table_graph_one_row_per_method():
    metrics = pd.DataFrame(
        [
            {"label": "jspgfn-sachs", "display_name": "JSP-GFN", "expected_shd": 20.0, "auroc": 0.7},
            {"label": "mh-mc3-sachs", "display_name": "MH-MC3", "expected_shd": 30.0, "auroc": 0.55},
            {"label": "gibbs-mc3-sachs", "display_name": "Gibbs-MC3", "expected_shd": 25.0, "auroc": np.nan},
        ]
    )
    numbers, shown = table_graph(metrics)
    assert list(numbers["method"]) == ["MH-MC3", "Gibbs-MC3", "JSP-GFN"]  # the paper's order
    assert list(shown.columns) == ["Method", "E-SHD", "AUROC", "Datasets"]
    assert shown.iloc[2].tolist() == ["JSP-GFN", "20.000", "0.700", "1"]
    assert shown.iloc[1]["AUROC"] == "n/a"
    with pytest.raises(ValueError, match="graph.csv"):
        table_graph(pd.DataFrame([{"label": "x", "nll_expected": 1.0}]))


def test_report_cli_table_graph_and_heatmap(tmp_path, capsys):
    metrics = pd.DataFrame([{"label": "jspgfn", "display_name": "JSP-GFN", "expected_shd": 20.0, "auroc": 0.7}])
    metrics.to_csv(tmp_path / "metrics.csv", index=False)
    note = "The consensus network is a REFERENCE, not a ground truth."
    argv = ["report", "table-graph", "--metrics", str(tmp_path / "metrics.csv"), "--note", note]
    assert cli.main([*argv, "--out", str(tmp_path / "table")]) == 0
    for suffix in (".csv", ".tex", ".pdf"):
        assert (tmp_path / f"table{suffix}").stat().st_size > 0
    assert "REFERENCE" in (tmp_path / "table.tex").read_text()
    aggregate_edges([write_edges_json(tmp_path / "a.json")], tmp_path / "edges.csv")
    argv = ["report", "edge-marginals", "--table", str(tmp_path / "edges.csv"), "--methods", "jspgfn"]
    assert cli.main([*argv, "--out", str(tmp_path / "heat")]) == 0
    assert (tmp_path / "heat.png").stat().st_size > 0
    # A metrics table without E-SHD or AUROC: one line, nothing written.
    pd.DataFrame([{"label": "x", "nll_expected": 1.0}]).to_csv(tmp_path / "nll.csv", index=False)
    capsys.readouterr()
    assert (
        cli.main(["report", "table-graph", "--metrics", str(tmp_path / "nll.csv"), "--out", str(tmp_path / "t2")]) == 2
    )
    assert capsys.readouterr().err.count("\n") == 1 and not (tmp_path / "t2.csv").exists()
