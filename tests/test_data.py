import json
import subprocess
import sys

import numpy as np
import pytest

from jspgfn import cli
from jspgfn.dataset import load_dataset, read_csv_matrix, write_dataset
from jspgfn.errors import DataError
from jspgfn.generate import data_model, generate


def test_generate_is_deterministic_and_complete(tmp_path):
    a = generate("er1", "linear", 5, 100, 100, seed=7)
    b = generate("er1", "linear", 5, 100, 100, seed=7)
    np.testing.assert_array_equal(a.train, b.train)
    np.testing.assert_array_equal(a.graph, b.graph)
    assert not np.array_equal(a.train, generate("er1", "linear", 5, 100, 100, seed=8).train)
    write_dataset(tmp_path / "ds", a)
    assert sorted(p.name for p in (tmp_path / "ds").iterdir()) == ["graph.csv", "meta.json", "test.csv", "train.csv"]
    back = load_dataset(tmp_path / "ds")
    np.testing.assert_allclose(back.train, a.train, rtol=0, atol=0)  # repr() round-trips floats exactly
    np.testing.assert_array_equal(back.graph, a.graph)
    assert back.meta["seed"] == 7 and back.meta["model"] == "linear"


@pytest.mark.parametrize("model_name", ["linear", "mlp"])
def test_noise_variance_over_many_seeds(model_name):
    """Residuals around the true conditional means have variance 0.01 (pooled over 100 datasets)."""
    residuals = []
    for seed in range(100):
        ds = generate("er2", model_name, 6, 100, 0, seed=seed)
        model = data_model(model_name)
        theta = np.asarray(ds.meta["theta"])
        mean = model.mean(theta, ds.graph.astype(float), ds.train, xp=np)
        residuals.append(ds.train - mean)
    r = np.concatenate(residuals).ravel()  # 60,000 draws
    assert abs(r.mean()) < 4 * 0.1 / np.sqrt(r.size)
    # Var of the sample variance of n normals: 2 sigma^4 / (n - 1).
    assert abs(r.var() - 0.01) < 4 * np.sqrt(2 * 0.01**2 / (r.size - 1))


def test_linear_weights_standard_normal_over_seeds():
    weights = np.concatenate(
        [
            np.asarray(generate("er2", "linear", 8, 2, 0, seed=s).meta["theta"])[
                generate("er2", "linear", 8, 2, 0, seed=s).graph == 1
            ]
            for s in range(150)
        ]
    )
    assert weights.size > 1000
    assert abs(weights.mean()) < 4 / np.sqrt(weights.size)
    assert abs(weights.var() - 1) < 4 * np.sqrt(2 / weights.size)
    # Off-graph weights are exactly zero.
    ds = generate("er1", "linear", 5, 2, 0, seed=0)
    assert np.all(np.asarray(ds.meta["theta"])[ds.graph == 0] == 0)


def test_interventions_set_values_and_mask():
    ds = generate("er1", "linear", 5, 400, 100, seed=3, interventional_fraction=0.5)
    rows = ds.train_interventions.sum(axis=1)
    assert set(np.unique(rows)) <= {0, 1}
    assert 0.4 < rows.mean() < 0.6
    # An intervened root-to-child relation no longer holds in intervened rows: values ~ N(0, 1), not noise.
    assert ds.train[ds.train_interventions == 1].std() > 0.5


def test_generate_rejects_bad_arguments():
    from jspgfn.errors import JspgfnError

    with pytest.raises(JspgfnError, match="graph kind"):
        generate("sf2", "linear", 5)
    with pytest.raises(JspgfnError, match="data model"):
        generate("er1", "cubic", 5)
    with pytest.raises(JspgfnError, match="^d must be >= 2, got 1"):
        generate("er1", "linear", 1)


BAD_CSVS = {
    "missing": ("a,b,c\n1,2,3\n4,,6\n", "line 3, column 'b': missing value"),
    "nonnumeric": ("a,b,c\n1,2,3\n4,five,6\n", "line 3, column 'b': non-numeric value 'five'"),
    "ragged": ("a,b,c\n1,2,3\n4,5\n", "line 3 has 2 values, the header has 3 (ragged row)"),
    "nan": ("a,b\n1,nan\n", "missing value"),
    "inf": ("a,b\n1,inf\n", "not finite"),
    "dupnames": ("a,a\n1,2\n", "duplicate variable names"),
    "empty": ("", "empty file"),
    "header_only": ("a,b\n", "no observations"),
}


@pytest.mark.parametrize("case", sorted(BAD_CSVS))
def test_malformed_csv_names_file_and_problem(tmp_path, case):
    text, problem = BAD_CSVS[case]
    path = tmp_path / f"{case}.csv"
    path.write_text(text)
    with pytest.raises(DataError) as info:
        read_csv_matrix(path)
    message = str(info.value)
    assert str(path) in message and problem in message
    assert "\n" not in message


def test_dataset_folder_checks(tmp_path):
    ds = generate("er1", "linear", 4, 10, 10, seed=0)
    write_dataset(tmp_path / "ds", ds)
    (tmp_path / "ds" / "test.csv").write_text("X0,X1,X2,Y\n1,2,3,4\n")
    with pytest.raises(DataError, match="does not match the training data"):
        load_dataset(tmp_path / "ds")
    (tmp_path / "ds" / "test.csv").unlink()
    (tmp_path / "ds" / "graph.csv").write_text("X0,X1,X2,X3\n0,1,0,0\n1,0,0,0\n0,0,0,0\n0,0,0,0\n")
    with pytest.raises(DataError, match="not a DAG"):
        load_dataset(tmp_path / "ds")
    with pytest.raises(DataError, match="no train.csv"):
        load_dataset(tmp_path)
    with pytest.raises(DataError, match="no such file"):
        load_dataset(tmp_path / "nope")


@pytest.mark.parametrize("case", ["missing", "nonnumeric", "ragged"])
def test_cli_malformed_csv_one_line_error_no_output(tmp_path, case, capsys):
    text, problem = BAD_CSVS[case]
    data = tmp_path / "data.csv"
    data.write_text(text)
    out = tmp_path / "exact.npz"
    status = cli.main(["exact", str(data), "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert status == 2
    assert err.count("\n") == 0 and str(data) in err and problem in err
    assert not out.exists() and list(tmp_path.iterdir()) == [data]


def test_cli_subprocess_exit_status(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "jspgfn.cli", "generate", "--d", "1", "--out", str(out)], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "--d must be >= 2, got 1" in proc.stderr and not out.exists()
    assert len(proc.stderr.strip().splitlines()) == 1


def test_cli_generate_writes_dataset(tmp_path):
    out = tmp_path / "ds"
    assert (
        cli.main(
            [
                "generate",
                "--graph",
                "er2",
                "--model",
                "mlp",
                "--d",
                "6",
                "--n",
                "30",
                "--n-test",
                "10",
                "--seed",
                "4",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    ds = load_dataset(out)
    assert ds.train.shape == (30, 6) and ds.test.shape == (10, 6)
    meta = json.loads((out / "meta.json").read_text())
    assert meta["graph"] == "er2" and meta["theta_layout"]["kind"] == "mlp"
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary files left
