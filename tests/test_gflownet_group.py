"""Several runs in one process (`jspgfn train DATA... --out RUN...`, train.train_group).

The runs of a group share one compiled step (Trainer.run_group_chunk: the training scan vmapped over
a leading run axis). Each run folder is written as by a run on its own and resumes on its own. The
vmapped step is another XLA program than the single run's (batched matrix products, the data an
argument instead of a constant), so a run of a group is not bitwise the single run of its dataset:
the tests compare the discrete state (replay buffer, environments, keys) exactly and the floats to
float32 tolerance after the first iterations, and the posterior against the exact one.
"""

import json

import jax
import numpy as np
import pytest

from jspgfn.cli import main as cli_main
from jspgfn.errors import JspgfnError
from jspgfn.generate import generate
from jspgfn.gflownet.sample import sample_graphs
from jspgfn.gflownet.train import train, train_group
from test_gflownet_posterior import CONFIG, TOLERANCE, exact_edge_marginals
from test_gflownet_train import TINY

SEEDS = [0, 1, 2]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """Three d=4 datasets (N=30) written by `jspgfn generate`, and a fourth with d=3."""
    root = tmp_path_factory.mktemp("data")
    paths = []
    for seed, d in ((11, 4), (12, 4), (13, 4), (14, 3)):
        path = root / f"d{d}-{seed}"
        args = ["generate", "--graph", "er1", "--model", "linear", "--d", str(d), "--n", "30", "--seed", str(seed)]
        assert cli_main(args + ["--out", str(path)]) == 0
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def group(folders, tmp_path_factory):
    """The three d=4 datasets trained as one group of three runs: (run folders, states)."""
    root = tmp_path_factory.mktemp("group")
    runs = [root / f"run{i}" for i in range(3)]
    _, states, infos = train_group(folders[:3], "lingauss", "smoke", SEEDS, runs, overrides=TINY, progress=False)
    assert [info["iteration"] for info in infos] == [20, 20, 20]
    assert all(info["finished"] and info["stop_reason"] is None for info in infos)
    return runs, states


def _leaves(state):
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(state)]


def _flat(params):
    return np.concatenate([leaf.ravel() for leaf in _leaves(params)])


def _losses(run):
    return [json.loads(line)["loss"] for line in (run / "metrics.jsonl").read_text().splitlines()]


def test_each_run_of_a_group_is_its_single_run(folders, group, tmp_path):
    runs, states = group
    for i, (data, run, state) in enumerate(zip(folders, runs, states)):
        single = tmp_path / f"single{i}"
        trainer, alone, _ = train(data, "lingauss", "smoke", SEEDS[i], single, overrides=TINY, progress=False)
        # the run folder of a group run is that of a run on its own
        assert sorted(p.name for p in run.iterdir()) == sorted(p.name for p in single.iterdir())
        assert json.loads((run / "config.json").read_text()) == json.loads((single / "config.json").read_text())
        # same random stream, same actions and replay: the discrete state is equal ...
        for a, b in zip(_leaves(state), _leaves(alone)):
            if not np.issubdtype(a.dtype, np.floating):
                np.testing.assert_array_equal(a, b)
        # ... and the losses agree to float32 rounding. Adam's first updates are about lr * sign(gradient),
        # so a parameter whose gradient is rounding noise may move the other way: the parameters are
        # compared by the distance between the two runs against the distance they moved (measured: 0.3-0.8%)
        np.testing.assert_allclose(_losses(run), _losses(single), rtol=1e-4)
        start, group_params, own = (_flat(p) for p in (trainer.init(SEEDS[i]).params, state.params, alone.params))
        assert np.linalg.norm(group_params - own) < 0.03 * np.linalg.norm(own - start)
    # the runs of the group are different runs (their own data and seed)
    assert not np.allclose(_leaves(states[0].params)[0], _leaves(states[1].params)[0])


def test_one_run_of_a_group_resumes_alone_then_with_the_group(folders, group, tmp_path, capsys):
    """A group stopped at iteration 10 is resumed: run 1 on its own, then the group, which leaves the
    finished run 1 as it is and brings runs 0 and 2 to the state of the uninterrupted group."""
    whole, states = group
    runs = [tmp_path / f"run{i}" for i in range(3)]
    sets = sum((["--set", f"{k}={v}"] for k, v in TINY.items()), [])
    base = ["train", *map(str, folders[:3]), "--preset", "smoke", "--no-progress", "--seed", *map(str, SEEDS), *sets]
    assert cli_main(base + ["--out", *map(str, runs), "--max-iterations", "10"]) == 3
    err = capsys.readouterr().err
    for run in runs:
        assert f"jspgfn: {run}: stopped at iteration 10 of 20 (max iterations)" in err
    _, alone, info = train(folders[1], "lingauss", "smoke", SEEDS[1], runs[1], overrides=TINY, progress=False)
    assert info["iteration"] == 20 and info["finished"]
    finished = (runs[1] / "checkpoint.npz").read_bytes()
    assert cli_main(base + ["--out", *map(str, runs)]) == 0
    assert "trained" in capsys.readouterr().out
    assert (runs[1] / "checkpoint.npz").read_bytes() == finished  # not trained again
    for i in (0, 2):
        assert [json.loads(line)["iteration"] for line in (runs[i] / "metrics.jsonl").read_text().splitlines()] == [
            10,
            20,
        ]
        for a, b in zip(_leaves(_state(runs[i])), _leaves(states[i])):
            np.testing.assert_array_equal(a, b)
    # and a run of the group samples as any run does
    assert cli_main(["sample", str(runs[0]), "--num", "8", "--out", str(tmp_path / "s.npz")]) == 0


def _state(run):
    from jspgfn.gflownet.train import load_run

    return load_run(run)[1]


def test_bad_groups_are_refused_before_anything_is_written(folders, tmp_path, capsys):
    a, b, other = str(folders[0]), str(folders[1]), str(folders[3])
    outs = [str(tmp_path / "x"), str(tmp_path / "y")]
    assert cli_main(["train", a, other, "--preset", "smoke", "--out", *outs]) == 2
    err = capsys.readouterr().err
    assert f"{other}/train.csv has d=3 variables but {a}/train.csv has d=4" in err
    assert cli_main(["train", a, b, "--preset", "smoke", "--out", outs[0]]) == 2
    assert "2 datasets but 1 run folders (--out)" in capsys.readouterr().err
    assert cli_main(["train", a, b, "--preset", "smoke", "--out", outs[0], outs[0]]) == 2
    assert "run folder named twice" in capsys.readouterr().err
    assert cli_main(["train", a, b, "--preset", "smoke", "--seed", "1", "2", "3", "--out", *outs]) == 2
    assert "2 datasets but 3 seeds" in capsys.readouterr().err
    assert not any((tmp_path / name).exists() for name in ("x", "y"))
    rows = generate("er1", "linear", 4, 20, 10, 0)
    with pytest.raises(JspgfnError, match="has 20 training rows but .* has 30"):
        train_group([folders[0], rows], "lingauss", "smoke", 0, outs, overrides=TINY, progress=False)
    assert not any((tmp_path / name).exists() for name in ("x", "y"))


@pytest.mark.slow  # about a minute and a half here; -m "not slow" skips it
def test_group_runs_match_their_exact_posteriors(tmp_path):
    """The statistical test of test_gflownet_posterior (d=3, same options and tolerance) for three datasets
    trained as one group: every run matches the exact edge marginals of its own dataset."""
    datasets = [generate("er1", "linear", 3, 20, 10, seed) for seed in (2, 5, 7)]
    runs = [tmp_path / f"run{i}" for i in range(3)]
    trainer, states, _ = train_group(datasets, "lingauss-diag", "quick", 0, runs, overrides=CONFIG, progress=False)
    errors = []
    for ds, state in zip(datasets, states):
        exact = exact_edge_marginals(ds.train)
        graphs = sample_graphs(trainer.network.apply, state.params, jax.random.PRNGKey(0), 3000, 3)
        errors.append(float(np.abs(graphs.mean(axis=0) - exact).max()))
    print(f"max edge-marginal errors {np.round(errors, 3).tolist()} (tolerance {TOLERANCE})")
    assert max(errors) < TOLERANCE
    # the datasets have different posteriors, so a run that learnt another run's would fail
    exacts = [exact_edge_marginals(ds.train) for ds in datasets]
    assert max(np.abs(exacts[0] - e).max() for e in exacts[1:]) > 2 * TOLERANCE
