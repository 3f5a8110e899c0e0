"""Training loop: determinism, checkpoint/resume, CLI, bad input."""

import json

import jax
import numpy as np
import pytest

from jspgfn.cli import main as cli_main
from jspgfn.errors import JspgfnError
from jspgfn.gflownet.train import train
from jspgfn.samples import load_samples

TINY = {"num_iterations": 20, "iterations_per_dispatch": 10, "prefill": 20, "batch_size": 8,
        "num_envs": 2, "num_theta_samples": 2, "replay_capacity": 500, "checkpoint_every_seconds": 1e9}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "d4"
    assert cli_main(["generate", "--graph", "er1", "--model", "linear", "--d", "4", "--n", "30",
                     "--seed", "3", "--out", str(path)]) == 0
    return path


def _leaves(state):
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(state)]


def test_same_seed_same_result_and_resume(data_dir, tmp_path):
    _, a, info_a = train(data_dir, "lingauss-diag", "smoke", 0, tmp_path / "a", overrides=TINY, progress=False)
    _, b, _ = train(data_dir, "lingauss-diag", "smoke", 0, tmp_path / "b", overrides=TINY, progress=False)
    for x, y in zip(_leaves(a), _leaves(b)):
        np.testing.assert_array_equal(x, y)
    # interrupted after the first dispatch (a checkpoint on a scan boundary), then resumed
    _, c1, info_c1 = train(data_dir, "lingauss-diag", "smoke", 0, tmp_path / "c", overrides=TINY,
                           progress=False, stop_after=10)
    assert info_c1["iteration"] == 10
    _, c, info_c = train(data_dir, "lingauss-diag", "smoke", 0, tmp_path / "c", overrides=TINY, progress=False)
    assert info_c["iteration"] == info_a["iteration"] == 20
    for x, y in zip(_leaves(a), _leaves(c)):
        np.testing.assert_array_equal(x, y)
    _, d, _ = train(data_dir, "lingauss-diag", "smoke", 1, tmp_path / "d", overrides=TINY, progress=False)
    assert any(not np.array_equal(x, y) for x, y in zip(_leaves(a), _leaves(d)))


@pytest.mark.parametrize("model", ["lingauss-diag", "lingauss-full", "mlp-gauss"])
def test_cli_train_and_sample(data_dir, tmp_path, model):
    run = tmp_path / "run"
    sets = sum((["--set", f"{k}={v}"] for k, v in TINY.items()), [])
    assert cli_main(["train", str(data_dir), "--model", model, "--preset", "smoke", "--seed", "0",
                     "--no-progress", "--out", str(run)] + sets) == 0
    for name in ("config.json", "provenance.json", "checkpoint.npz", "metrics.jsonl"):
        assert (run / name).is_file()
    config = json.loads((run / "config.json").read_text())
    assert config["seed"] == 0 and config["model"] == model
    out = tmp_path / "samples.npz"
    assert cli_main(["sample", str(run), "--num", "16", "--log-pt", "--beam-size", "4", "--mc-samples", "4",
                     "--out", str(out)]) == 0
    s = load_samples(out)
    assert s.graphs.shape == (16, 4, 4) and s.share_cyclic() == 0.0
    assert s.metadata["method"] == {"lingauss-diag": "jspgfn-diag", "lingauss-full": "jspgfn-full",
                                    "mlp-gauss": "jspgfn-mlp"}[model]
    for key in ("model", "model_kwargs", "graph_prior", "seed", "wall_seconds", "hyperparameters", "provenance"):
        assert key in s.metadata
    assert np.all(np.isfinite(s.extras["log_prob_terminating"]))
    if model != "mlp-gauss":
        assert np.all(s.theta[s.graphs == 0] == 0.0)


def test_bad_input(data_dir, tmp_path, capsys):
    assert cli_main(["train", str(data_dir), "--model", "nope", "--out", str(tmp_path / "r")]) == 2
    assert "unknown model" in capsys.readouterr().err
    assert cli_main(["train", str(data_dir), "--preset", "nope", "--out", str(tmp_path / "r")]) == 2
    assert cli_main(["train", str(data_dir), "--set", "bogus=1", "--out", str(tmp_path / "r")]) == 2
    with pytest.raises(JspgfnError, match="NaN"):
        train(np.array([[0.0, np.nan], [1.0, 2.0]]), "lingauss-diag", "smoke", 0, tmp_path / "nan")
    # resuming a run folder with data of another dimension
    train(data_dir, "lingauss-diag", "smoke", 0, tmp_path / "dm", overrides=TINY, progress=False, stop_after=10)
    other = np.random.default_rng(0).standard_normal((30, 3))
    with pytest.raises(JspgfnError, match="d=4 variables, the data has d=3"):
        train(other, "lingauss-diag", "smoke", 0, tmp_path / "dm", overrides=TINY, progress=False)
    assert cli_main(["sample", str(tmp_path / "missing"), "--out", str(tmp_path / "s.npz")]) == 2


def test_minibatch_rewards_and_penalty_run(data_dir, tmp_path):
    """Mini-batch rewards (N/M scaling) and the guarded score penalty train without NaN."""
    over = dict(TINY, minibatch_rows=8, penalty=1.0)
    _, state, info = train(data_dir, "mlp-gauss", "smoke", 0, tmp_path / "mb", overrides=over, progress=False)
    assert info["iteration"] == 20
    assert all(np.all(np.isfinite(np.asarray(x))) for x in jax.tree_util.tree_leaves(state.params))
    lines = [json.loads(l) for l in (tmp_path / "mb" / "metrics.jsonl").read_text().splitlines()]
    assert all(np.isfinite(l["loss"]) for l in lines)


def test_interventional_data_trains_and_is_part_of_the_run_identity(tmp_path):
    """Interventional rows reach the loss; the same numbers without the intervention mask are other data."""
    from jspgfn.dataset import load_dataset, write_dataset
    from jspgfn.generate import generate

    ds = generate("er1", "linear", 4, 40, 0, seed=5, interventional_fraction=0.3)
    write_dataset(tmp_path / "int", ds)
    _, state, info = train(tmp_path / "int", "lingauss-diag", "smoke", 0, tmp_path / "run", overrides=TINY,
                           progress=False)
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert info["iteration"] == 20 and config["interventional"] is True
    (tmp_path / "int" / "train_interventions.csv").unlink()
    assert load_dataset(tmp_path / "int").train_interventions is None
    with pytest.raises(JspgfnError, match="differs in data"):
        train(tmp_path / "int", "lingauss-diag", "smoke", 0, tmp_path / "run", overrides=TINY, progress=False)
