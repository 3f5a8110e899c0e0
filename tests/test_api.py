"""The Python API (jspgfn.fit, Run.sample, jspgfn.baseline, Posterior) against the CLI on a d=5 dataset."""

import gc
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import jspgfn
from jspgfn.cli import main as cli_main
from jspgfn.dataset import load_dataset
from jspgfn.errors import DataError, JspgfnError
from jspgfn.posterior import Posterior
from jspgfn.samples import load_samples
from test_gflownet_train import TINY  # a few iterations of the smoke preset

K = 32


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "d5"
    args = ["generate", "--graph", "er1", "--model", "linear", "--d", "5", "--n", "50", "--seed", "0"]
    assert cli_main(args + ["--out", str(path)]) == 0
    return path


@pytest.fixture(scope="module")
def cli_samples(data_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    sets = sum((["--set", f"{k}={v}"] for k, v in TINY.items()), [])
    train = ["train", str(data_dir), "--model", "lingauss", "--preset", "smoke", "--seed", "0", "--no-progress"]
    assert cli_main(train + sets + ["--out", str(folder / "run")]) == 0
    assert cli_main(["sample", str(folder / "run"), "--num", str(K), "--out", str(folder / "s.npz")]) == 0
    return Posterior.load(folder / "s.npz")


@pytest.fixture(scope="module")
def run(data_dir):
    return jspgfn.fit(data_dir, model="lingauss", preset="smoke", seed=0, progress=False, **TINY)


@pytest.fixture(scope="module")
def posterior(run):
    return run.sample(K)


def test_import_is_light_and_exports_the_api():
    code = "import sys, jspgfn; assert 'jax' not in sys.modules and 'numpy' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
    from jspgfn import api

    assert (jspgfn.fit, jspgfn.baseline, jspgfn.Run, jspgfn.Posterior) == (api.fit, api.baseline, api.Run, Posterior)
    with pytest.raises(AttributeError):
        jspgfn.nothing  # noqa: B018


def test_fit_and_sample_equal_the_cli(data_dir, cli_samples, posterior, run):
    np.testing.assert_array_equal(posterior.graphs, cli_samples.graphs)
    np.testing.assert_array_equal(posterior.theta, cli_samples.theta)
    pd.testing.assert_frame_equal(posterior.edge_marginals(), cli_samples.edge_marginals())
    names = load_dataset(data_dir).names
    assert posterior.names == cli_samples.names == names
    assert posterior.metadata["data"] == cli_samples.metadata["data"] == str(data_dir.resolve())
    assert posterior.graphs.shape == (K, 5, 5) and posterior.metadata["iterations"] == TINY["num_iterations"]
    assert (run.folder / "checkpoint.npz").is_file()  # the temporary run folder lives with the Run


def test_run_folder_kept_or_temporary(data_dir, tmp_path):
    kept = jspgfn.fit(data_dir, preset="smoke", progress=False, out=tmp_path / "kept", **TINY)
    assert kept.folder == tmp_path / "kept" and (kept.folder / "checkpoint.npz").is_file()
    temporary = jspgfn.fit(data_dir, preset="smoke", progress=False, **TINY)
    folder = temporary.folder
    assert (folder / "checkpoint.npz").is_file()
    del temporary
    gc.collect()
    assert not folder.exists()  # removed with its Run


def test_edge_marginals_are_the_mean_adjacency(posterior):
    marginals = posterior.edge_marginals()
    np.testing.assert_allclose(marginals.to_numpy(), posterior.graphs.mean(axis=0))
    assert marginals.index.name == "parent" and marginals.columns.name == "child"
    # rows = parent, columns = child, and the samples' weights count
    graphs = np.zeros((3, 2, 2), np.uint8)
    graphs[0, 0, 1] = graphs[1, 0, 1] = graphs[2, 1, 0] = 1
    weighted = _posterior(graphs, log_weights=np.log([0.1, 0.1, 0.8]), names=["a", "b"])
    assert weighted.edge_marginals().loc["a", "b"] == pytest.approx(0.2)
    assert weighted.edge_marginals().loc["b", "a"] == pytest.approx(0.8)


def test_top_graphs_are_the_frequencies_of_the_distinct_graphs(posterior):
    top = posterior.top_graphs(k=K)
    assert top["count"].sum() == K and top["probability"].sum() == pytest.approx(1.0)
    assert top["probability"].is_monotonic_decreasing
    for row in top.itertuples():
        same = np.all(posterior.graphs == row.graph, axis=(1, 2))
        assert row.count == same.sum() and row.probability == pytest.approx(same.mean())
        names = posterior.names
        assert row.edges == tuple((names[i], names[j]) for i, j in zip(*np.nonzero(row.graph)))
    assert len(posterior.top_graphs(1)) == 1
    graphs = np.zeros((3, 2, 2), np.uint8)
    graphs[0, 0, 1] = graphs[1, 0, 1] = 1  # twice a -> b, once empty but with weight 0.8
    weighted = _posterior(graphs, log_weights=np.log([0.1, 0.1, 0.8]), names=["a", "b"]).top_graphs()
    assert weighted["edges"].tolist() == [(), (("a", "b"),)] and weighted["count"].tolist() == [1, 2]
    np.testing.assert_allclose(weighted["probability"], [0.8, 0.2])


def test_theta_summary_is_the_weight_given_the_edge():
    graphs = np.zeros((4, 2, 2), np.uint8)
    graphs[:3, 0, 1] = 1
    theta = np.zeros((4, 2, 2))
    theta[:3, 0, 1] = [1.0, 2.0, 6.0]
    summary = _posterior(graphs, theta, names=["a", "b"]).theta_summary()
    assert summary[["parent", "child"]].values.tolist() == [["a", "b"]]
    row = summary.iloc[0]
    assert row["probability"] == pytest.approx(0.75) and row["mean"] == pytest.approx(3.0)
    assert row["sd"] == pytest.approx(np.std([1.0, 2.0, 6.0]))
    with pytest.raises(JspgfnError, match="theta_summary needs a weight per edge"):
        _posterior(graphs, np.zeros((4, 7))).theta_summary()


def test_theta_summary_of_fitted_samples(posterior):
    summary = posterior.theta_summary()
    marginals = posterior.edge_marginals()
    for row in summary.itertuples():
        i, j = posterior.names.index(row.parent), posterior.names.index(row.child)
        present = posterior.graphs[:, i, j] == 1
        assert row.probability == pytest.approx(marginals.loc[row.parent, row.child])
        assert row.mean == pytest.approx(posterior.theta[present, i, j].mean())
    assert len(summary) == int((posterior.graphs.sum(axis=0) > 0).sum())


def test_save_load_round_trip_with_log_pt(run, tmp_path):
    sampled = run.sample(4, log_pt=True, seed=1, beam_size=2, mc_samples=2)
    assert sampled.log_prob_terminating.shape == (4,) and np.all(np.isfinite(sampled.log_prob_terminating))
    sampled.save(tmp_path / "s.npz")
    loaded = Posterior.load(tmp_path / "s.npz")
    for name in ("graphs", "theta"):
        np.testing.assert_array_equal(getattr(loaded, name), getattr(sampled, name))
    np.testing.assert_array_equal(loaded.log_prob_terminating, sampled.log_prob_terminating)
    assert loaded.metadata == load_samples(tmp_path / "s.npz").metadata and loaded.names == sampled.names
    assert _posterior(np.zeros((1, 3, 3), np.uint8)).log_prob_terminating is None


def test_to_networkx(posterior, monkeypatch):
    nx = pytest.importorskip("networkx")
    i = int(np.argmax(posterior.graphs.sum(axis=(1, 2))))
    g = posterior.to_networkx(i)
    assert isinstance(g, nx.DiGraph) and list(g.nodes) == list(posterior.names)
    expected = {(posterior.names[p], posterior.names[c]) for p, c in zip(*np.nonzero(posterior.graphs[i]))}
    assert set(g.edges) == expected
    for p, c in zip(*np.nonzero(posterior.graphs[i])):
        assert g.edges[posterior.names[p], posterior.names[c]]["weight"] == posterior.theta[i, p, c]
    with pytest.raises(JspgfnError, match="out of range"):
        posterior.to_networkx(K)
    monkeypatch.setitem(sys.modules, "networkx", None)
    with pytest.raises(JspgfnError, match="needs networkx, which is not installed"):
        posterior.to_networkx(0)


def test_tables_and_arrays_as_data(data_dir):
    from jspgfn.api import as_dataset

    table = pd.read_csv(data_dir / "train.csv")
    expected = load_dataset(data_dir)
    frame = as_dataset(table)
    np.testing.assert_array_equal(frame.train, expected.train)
    assert frame.names == expected.names
    array = as_dataset(expected.train)
    assert array.names == ("X1", "X2", "X3", "X4", "X5")
    np.testing.assert_array_equal(array.train, expected.train)


def test_baseline_equals_the_cli(data_dir, tmp_path):
    out = tmp_path / "b.npz"
    args = ["baseline", "b-ges", str(data_dir), "--seed", "3", "--param", "num_bootstrap=5", "--out", str(out)]
    assert cli_main(args) == 0
    cli = Posterior.load(out)
    api = jspgfn.baseline("b-ges", data_dir, seed=3, num_bootstrap=5)
    assert isinstance(api, Posterior) and api.names == cli.names == load_dataset(data_dir).names
    np.testing.assert_array_equal(api.graphs, cli.graphs)
    np.testing.assert_array_equal(api.theta, cli.theta)
    pd.testing.assert_frame_equal(api.edge_marginals(), cli.edge_marginals())


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda d: jspgfn.fit(d, model="nope", progress=False), JspgfnError, "unknown model 'nope'"),
        (lambda d: jspgfn.fit(d, preset="smoke", bogus=1, progress=False), JspgfnError, "bogus"),
        (lambda d: jspgfn.fit(np.zeros(5), progress=False), DataError, r"array: expected a table \[N, d\]"),
        (lambda d: jspgfn.baseline("nope", d), JspgfnError, "unknown baseline 'nope'"),
        (lambda d: jspgfn.baseline("b-ges", np.zeros((3, 2, 2))), DataError, "got shape"),
        (lambda d: jspgfn.baseline("b-ges", pd.DataFrame({"a": ["x", "y"]})), DataError, "not a numeric table"),
        (lambda d: jspgfn.baseline("b-ges", np.array([[1.0, np.nan]])), DataError, "not finite"),
        (lambda d: jspgfn.Run(d).sample(1), JspgfnError, "not a JSP-GFN run folder"),
    ],
)
def test_bad_input_is_one_line(data_dir, call, error, message):
    with pytest.raises(error, match=message) as info:
        call(data_dir)
    assert "\n" not in str(info.value)


def test_sample_count_checked(run):
    with pytest.raises(JspgfnError, match="n must be >= 1"):
        run.sample(0)


def _posterior(graphs, theta=None, log_weights=None, names=None):
    metadata = {"method": "test", "model": "lingauss", "seed": 0}
    if names is not None:
        metadata["variable_names"] = names
    theta = np.zeros(graphs.shape) if theta is None else theta
    return Posterior(graphs=graphs, theta=theta, metadata=metadata, log_weights=log_weights).validate()


def test_own_data_quick_start_runs(tmp_path, monkeypatch, capsys):
    """docs/own-data.md's quick start, line for line, with a few training iterations (needs cdt's table)."""
    from pathlib import Path

    from jspgfn.realdata import sachs

    try:
        sachs.cdt_data_path()
    except JspgfnError:
        pytest.skip("cdt's cyto_full_data.csv is not installed (pip install --no-deps cdt)")
    text = (Path(__file__).parents[1] / "docs" / "own-data.md").read_text()
    code = text.split("```python\n")[1].split("```")[0]
    quick = 'preset="quick", seed=0)'
    assert code.count(quick) == 1
    code = code.replace(quick, 'preset="smoke", seed=0, progress=False, **TINY)')
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "docs/own-data.md", "exec"), {"TINY": TINY})
    shown = capsys.readouterr().out
    assert "praf" in shown and "probability" in shown and "mean" in shown
    saved = Posterior.load(tmp_path / "sachs.npz")
    assert saved.graphs.shape == (1000, 11, 11) and saved.names[0] == "praf"
