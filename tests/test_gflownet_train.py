"""Training loop: determinism, checkpoint/resume, CLI, bad input."""

import dataclasses
import json
import re

import jax
import numpy as np
import pytest

from jspgfn.cli import main as cli_main
from jspgfn.errors import JspgfnError
from jspgfn.gflownet import env as envlib
from jspgfn.gflownet.presets import get_preset
from jspgfn.gflownet.train import train
from jspgfn.samples import load_samples

TINY = {
    "num_iterations": 20,
    "iterations_per_dispatch": 10,
    "prefill": 20,
    "batch_size": 8,
    "num_envs": 2,
    "num_theta_samples": 2,
    "replay_capacity": 500,
    "checkpoint_every_seconds": 1e9,
}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "d4"
    assert (
        cli_main(
            [
                "generate",
                "--graph",
                "er1",
                "--model",
                "linear",
                "--d",
                "4",
                "--n",
                "30",
                "--seed",
                "3",
                "--out",
                str(path),
            ]
        )
        == 0
    )
    return path


def _leaves(state):
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(state)]


def assert_resumes_bitwise(data, model, options, folder, whole):
    """The run of seed 0 with `options` (smoke preset), stopped after 10 iterations in `folder` and resumed there,
    ends bit for bit as `whole`, its state trained in one go."""
    train(data, model, "smoke", 0, folder, overrides=options, progress=False, max_iterations=10)
    _, resumed, _ = train(data, model, "smoke", 0, folder, overrides=options, progress=False)
    for x, y in zip(_leaves(resumed), _leaves(whole)):
        np.testing.assert_array_equal(x, y)


def test_same_seed_same_result_and_resume(data_dir, tmp_path):
    _, a, info_a = train(data_dir, "lingauss-diag", "smoke", 0, tmp_path / "a", overrides=TINY, progress=False)
    _, b, _ = train(data_dir, "lingauss-diag", "smoke", 0, tmp_path / "b", overrides=TINY, progress=False)
    for x, y in zip(_leaves(a), _leaves(b)):
        np.testing.assert_array_equal(x, y)
    # interrupted after the first dispatch (a checkpoint on a scan boundary), then resumed
    _, c1, info_c1 = train(
        data_dir, "lingauss-diag", "smoke", 0, tmp_path / "c", overrides=TINY, progress=False, max_iterations=10
    )
    assert info_c1["iteration"] == 10 and not info_c1["finished"]
    assert info_c1["stop_reason"] == "max iterations"
    _, c, info_c = train(data_dir, "lingauss-diag", "smoke", 0, tmp_path / "c", overrides=TINY, progress=False)
    assert info_c["iteration"] == info_a["iteration"] == 20
    assert info_c["finished"] and info_a["finished"] and info_c["stop_reason"] is None
    for x, y in zip(_leaves(a), _leaves(c)):
        np.testing.assert_array_equal(x, y)
    _, d, _ = train(data_dir, "lingauss-diag", "smoke", 1, tmp_path / "d", overrides=TINY, progress=False)
    assert any(not np.array_equal(x, y) for x, y in zip(_leaves(a), _leaves(d)))


def test_beyond_paper_replay_options_resume_bit_for_bit(data_dir, tmp_path):
    """Prioritised replay, the trajectory term and the stop target keep their state (priorities, trajectory
    buffer, target network) in the checkpoint: an interrupted run resumes to the same result, and the
    options change the result."""
    options = {**TINY, "replay_priority": 1.0, "trajectory_balance": 1.0, "trajectory_batch": 2, "stop_target_tau": 0.5}
    trainer, a, _ = train(data_dir, "lingauss-diag", "smoke", 0, tmp_path / "a", overrides=options, progress=False)
    assert a.priorities is not None and a.trajectories is not None and int(a.trajectories.size) > 0
    # the target network is the Polyak average tau * new + (1 - tau) * target after each update
    states = [trainer.init(0)]
    for _ in range(3):
        states.append(trainer.run_chunk(states[-1], 1)[0])
        new, old, target = (_leaves(t) for t in (states[-1].params, states[-2].target_params, states[-1].target_params))
        for n, o, t in zip(new, old, target):
            np.testing.assert_allclose(t, 0.5 * n + 0.5 * o, rtol=1e-5, atol=1e-7)
    assert any(not np.allclose(x, y) for x, y in zip(_leaves(states[-1].params), _leaves(states[-1].target_params)))
    assert_resumes_bitwise(data_dir, "lingauss-diag", options, tmp_path / "c", a)
    _, plain, _ = train(data_dir, "lingauss-diag", "smoke", 0, tmp_path / "p", overrides=TINY, progress=False)
    assert plain.priorities is None and plain.trajectories is None and plain.target_params is None
    assert any(not np.array_equal(x, y) for x, y in zip(_leaves(plain.params), _leaves(a.params)))


def test_stop_target_after_a_share_of_the_run(data_dir, tmp_path):
    """stop_target_after: until that share of the run the target is a copy of the network (the paper's
    loss and gradient), then a Polyak average."""
    options = {**TINY, "num_iterations": 4, "stop_target_tau": 0.5, "stop_target_after": 0.5}
    trainer, _, _ = train(data_dir, "lingauss-diag", "smoke", 0, tmp_path / "a", overrides=options, progress=False)
    plain, _, _ = train(
        data_dir, "lingauss-diag", "smoke", 0, tmp_path / "p", overrides={**TINY, "num_iterations": 4}, progress=False
    )
    states, papers = [trainer.init(0)], [plain.init(0)]
    for _ in range(4):
        states.append(trainer.run_chunk(states[-1], 1)[0])
        papers.append(plain.run_chunk(papers[-1], 1)[0])
    for step in (1, 2):  # before the switch at step 2: the target follows the network, the paper's updates
        for p, t, q in zip(
            *(_leaves(x) for x in (states[step].params, states[step].target_params, papers[step].params))
        ):
            np.testing.assert_array_equal(t, p)
            np.testing.assert_allclose(p, q, rtol=1e-5, atol=1e-6)
    for step in (3, 4):  # from step 2 on: Polyak averages, and updates that differ from the paper's
        new, old, target = (
            _leaves(t) for t in (states[step].params, states[step - 1].target_params, states[step].target_params)
        )
        for n, o, t in zip(new, old, target):
            np.testing.assert_allclose(t, 0.5 * n + 0.5 * o, rtol=1e-5, atol=1e-7)
    assert any(not np.allclose(x, y) for x, y in zip(_leaves(states[4].params), _leaves(papers[4].params)))


def test_stop_target_until_a_share_of_the_run(data_dir, tmp_path):
    """stop_target_until: the target network (Polyak average) only before that share of the run; after it the
    target is a copy of the network again (the paper's loss and gradient). Refused where it leaves no step."""
    options = {**TINY, "num_iterations": 4, "stop_target_tau": 0.5, "stop_target_until": 0.5}
    trainer, _, _ = train(data_dir, "lingauss-diag", "smoke", 0, tmp_path / "a", overrides=options, progress=False)
    states = [trainer.init(0)]
    for _ in range(4):
        states.append(trainer.run_chunk(states[-1], 1)[0])
    for step in (1, 2):  # steps 0 and 1: Polyak averages
        new, old, target = (
            _leaves(t) for t in (states[step].params, states[step - 1].target_params, states[step].target_params)
        )
        for n, o, t in zip(new, old, target):
            np.testing.assert_allclose(t, 0.5 * n + 0.5 * o, rtol=1e-5, atol=1e-7)
    # after step 1 (the warm-up's first non-zero step) the average trails the network
    assert any(not np.array_equal(t, p) for p, t in zip(_leaves(states[2].params), _leaves(states[2].target_params)))
    for step in (3, 4):  # from step 2 on: the target follows the network (step size 1)
        for p, t in zip(_leaves(states[step].params), _leaves(states[step].target_params)):
            np.testing.assert_array_equal(t, p)
    with pytest.raises(JspgfnError, match="stop_target_until"):
        get_preset("smoke", stop_target_tau=0.1, stop_target_after=0.5, stop_target_until=0.5)


EXPECTED = {
    "lingauss-diag": ("lingauss", "diag"),
    "lingauss-full": ("lingauss", "full"),
    "mlp-gauss": ("mlp-gauss", "diag"),
}


def test_exploration_with_the_policy_stop(data_dir, tmp_path):
    """explore_policy_stop (beyond the paper): with epsilon 1 the actions' law is the policy's stop and a
    uniform valid edge (a statistical test on 4,000 environments at the empty graph); the prefill acts so
    (its trajectories are as short as the initial network's stop makes them, not uniform ones, which run
    to the complete DAG); a run with it resumes bit for bit and differs from the paper's exploration."""
    from scipy import stats

    options = {**TINY, "explore_policy_stop": True}
    trainer, a, _ = train(data_dir, "lingauss-diag", "smoke", 0, tmp_path / "a", overrides=options, progress=False)
    d = trainer.num_variables
    env = envlib.reset(4000, d)
    actions = np.asarray(trainer.act(a.params, env, jax.random.PRNGKey(3), 1.0))
    out = trainer.network.apply(a.params, env.adjacency[:1])
    p_stop = float(jax.nn.sigmoid(out["stop_logit"][0]))
    num_stop = int(np.sum(actions == d * d))
    assert stats.binomtest(num_stop, actions.size, p_stop).pvalue > 1e-3
    edges = np.bincount(actions[actions < d * d], minlength=d * d).reshape(d, d)
    assert np.all(np.diag(edges) == 0)
    off = edges[~np.eye(d, dtype=bool)]
    assert stats.chisquare(off).pvalue > 1e-3
    # the paper's exploration, same network: the stop is one action of d * (d - 1) + 1, and the test sees it
    uniform_trainer = dataclasses.replace(trainer, cfg=get_preset("smoke", **TINY))
    assert abs(p_stop - 1 / (d * (d - 1) + 1)) > 0.1
    uniform_actions = np.asarray(uniform_trainer.act(a.params, env, jax.random.PRNGKey(3), 1.0))
    assert stats.binomtest(int(np.sum(uniform_actions == d * d)), actions.size, p_stop).pvalue < 1e-6

    # the prefill: mean edges of the replayed states below the uniform prefill's
    ours, uniform = trainer.init(0).replay, uniform_trainer.init(0).replay
    size = min(int(ours.size), int(uniform.size))
    mean_edges = [float(np.asarray(r.graphs[:size]).sum(axis=(-2, -1)).mean()) for r in (ours, uniform)]
    assert mean_edges[0] < mean_edges[1]

    assert_resumes_bitwise(data_dir, "lingauss-diag", options, tmp_path / "c", a)
    _, p, _ = train(data_dir, "lingauss-diag", "smoke", 0, tmp_path / "p", overrides=TINY, progress=False)
    assert any(not np.array_equal(x, y) for x, y in zip(_leaves(p.params), _leaves(a.params)))


@pytest.mark.parametrize("model", sorted(EXPECTED))
def test_cli_train_and_sample(data_dir, tmp_path, model):
    run = tmp_path / "run"
    sets = sum((["--set", f"{k}={v}"] for k, v in TINY.items()), [])
    assert (
        cli_main(
            [
                "train",
                str(data_dir),
                "--model",
                model,
                "--preset",
                "smoke",
                "--seed",
                "0",
                "--no-progress",
                "--out",
                str(run),
            ]
            + sets
        )
        == 0
    )
    for name in ("config.json", "provenance.json", "checkpoint.npz", "metrics.jsonl"):
        assert (run / name).is_file()
    config = json.loads((run / "config.json").read_text())
    assert config["seed"] == 0 and (config["model"], config["family"]) == EXPECTED[model]
    out = tmp_path / "samples.npz"
    assert (
        cli_main(
            ["sample", str(run), "--num", "16", "--log-pt", "--beam-size", "4", "--mc-samples", "4", "--out", str(out)]
        )
        == 0
    )
    s = load_samples(out)
    assert s.graphs.shape == (16, 4, 4) and s.share_cyclic() == 0.0
    assert s.metadata["method"] == "jspgfn"
    assert (s.metadata["model"], s.metadata["family"]) == EXPECTED[model]
    assert s.metadata["display_name"] == f"JSP-GFN ({s.metadata['family']})"
    for key in ("model", "model_kwargs", "graph_prior", "seed", "wall_seconds", "hyperparameters", "provenance"):
        assert key in s.metadata
    assert np.all(np.isfinite(s.extras["log_prob_terminating"]))
    assert s.metadata["log_pt"] == {"beam_size": 4, "mc_samples": 4, "proposal": "uniform"}
    mixed = tmp_path / "mixture.npz"
    args = ["sample", str(run), "--num", "16", "--log-pt", "--beam-size", "4", "--mc-samples", "4"]
    assert cli_main(args + ["--log-pt-proposal", "mixture", "--out", str(mixed)]) == 0
    m = load_samples(mixed)  # the same samples (same seed), another estimate of log P_T
    np.testing.assert_array_equal(m.graphs, s.graphs)
    assert np.all(np.isfinite(m.extras["log_prob_terminating"])) and m.metadata["log_pt"]["proposal"] == "mixture"
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
    train(data_dir, "lingauss-diag", "smoke", 0, tmp_path / "dm", overrides=TINY, progress=False, max_iterations=10)
    other = np.random.default_rng(0).standard_normal((30, 3))
    with pytest.raises(JspgfnError, match="d=4 variables, the data has d=3"):
        train(other, "lingauss-diag", "smoke", 0, tmp_path / "dm", overrides=TINY, progress=False)
    assert cli_main(["sample", str(tmp_path / "missing"), "--out", str(tmp_path / "s.npz")]) == 2
    capsys.readouterr()
    for option in (["--max-iterations", "0"], ["--time-limit", "0"], ["--time-limit", "-5"]):
        assert cli_main(["train", str(data_dir), "--out", str(tmp_path / "lim")] + option) == 2
        assert "must be" in capsys.readouterr().err
    assert not (tmp_path / "lim").exists()
    with pytest.raises(JspgfnError, match="max_iterations"):
        train(data_dir, "lingauss-diag", "smoke", 0, tmp_path / "lim", max_iterations=2.5)


def _checkpoint_arrays(run):
    with np.load(run / "checkpoint.npz") as data:
        return {k: data[k] for k in data.files if k != "info"}


def test_cli_time_limit_stops_with_status_3_and_resumes(data_dir, tmp_path, capsys):
    """--time-limit/--max-iterations stop an unfinished run with exit status 3; the same command
    again finishes it with the checkpoint and samples of an uninterrupted run."""
    sets = sum((["--set", f"{k}={v}"] for k, v in TINY.items()), [])
    base = [
        "train",
        str(data_dir),
        "--model",
        "lingauss-diag",
        "--preset",
        "smoke",
        "--seed",
        "0",
        "--no-progress",
    ] + sets
    cut, whole = tmp_path / "cut", tmp_path / "whole"
    # A tiny limit: stop after the first chunk (10 iterations).
    assert cli_main(base + ["--out", str(cut), "--time-limit", "1e-6"]) == 3
    err = capsys.readouterr().err
    assert "jspgfn: stopped at iteration 10 of 20 (time limit); run the same command again to resume" in err
    assert cli_main(base + ["--out", str(cut), "--max-iterations", "10"]) == 3  # at iteration 10 already
    assert "stopped at iteration 10 of 20 (max iterations)" in capsys.readouterr().err
    config = (cut / "config.json").read_text()
    assert "time_limit" not in config and "max_iterations" not in config
    assert cli_main(base + ["--out", str(cut)]) == 0
    assert cli_main(base + ["--out", str(whole)]) == 0
    a, b = _checkpoint_arrays(cut), _checkpoint_arrays(whole)
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    samples = []
    for run in (cut, whole):
        assert cli_main(["sample", str(run), "--num", "16", "--out", str(run / "s.npz")]) == 0
        samples.append(load_samples(run / "s.npz"))
    np.testing.assert_array_equal(samples[0].graphs, samples[1].graphs)
    np.testing.assert_array_equal(samples[0].theta, samples[1].theta)


def test_minibatch_rewards_and_penalty_run(data_dir, tmp_path):
    """Mini-batch rewards (N/M scaling) and the guarded score penalty train without NaN."""
    over = dict(TINY, minibatch_rows=8, penalty=1.0)
    _, state, info = train(data_dir, "mlp-gauss", "smoke", 0, tmp_path / "mb", overrides=over, progress=False)
    assert info["iteration"] == 20
    assert all(np.all(np.isfinite(np.asarray(x))) for x in jax.tree_util.tree_leaves(state.params))
    rows = [json.loads(line) for line in (tmp_path / "mb" / "metrics.jsonl").read_text().splitlines()]
    assert all(np.isfinite(row["loss"]) for row in rows)


def test_interventional_data_trains_and_is_part_of_the_run_identity(tmp_path):
    """Interventional rows reach the loss; the same numbers without the intervention mask are other data."""
    from jspgfn.dataset import load_dataset, write_dataset
    from jspgfn.generate import generate

    ds = generate("er1", "linear", 4, 40, 0, seed=5, interventional_fraction=0.3)
    write_dataset(tmp_path / "int", ds)
    _, state, info = train(
        tmp_path / "int", "lingauss-diag", "smoke", 0, tmp_path / "run", overrides=TINY, progress=False
    )
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert info["iteration"] == 20 and config["interventional"] is True
    (tmp_path / "int" / "train_interventions.csv").unlink()
    assert load_dataset(tmp_path / "int").train_interventions is None
    with pytest.raises(JspgfnError, match="differs in data"):
        train(tmp_path / "int", "lingauss-diag", "smoke", 0, tmp_path / "run", overrides=TINY, progress=False)


def test_model_names_old_and_new_give_the_same_run(data_dir, tmp_path, capsys):
    """`--model lingauss --family full` is `--model lingauss-full`; a run folder written before the
    split (config.json with a combined model name and no family) still resumes."""
    sets = sum((["--set", f"{k}={v}"] for k, v in TINY.items()), [])
    base = ["train", str(data_dir), "--preset", "smoke", "--no-progress"] + sets
    assert cli_main(base + ["--model", "lingauss", "--family", "full", "--out", str(tmp_path / "new")]) == 0
    assert cli_main(base + ["--model", "lingauss-full", "--out", str(tmp_path / "old")]) == 0
    new, old = (json.loads((tmp_path / name / "config.json").read_text()) for name in ("new", "old"))
    assert {k: v for k, v in new.items() if k != "data"} == {k: v for k, v in old.items() if k != "data"}
    assert cli_main(base + ["--model", "lingauss-diag", "--family", "full", "--out", str(tmp_path / "x")]) == 2
    assert "names the family 'diag'" in capsys.readouterr().err
    # A run folder from before the split: its config.json says model lingauss-full and no family.
    legacy = {**old, "model": "lingauss-full"}
    del legacy["family"]
    (tmp_path / "old" / "config.json").write_text(json.dumps(legacy))
    assert cli_main(base + ["--model", "lingauss-full", "--out", str(tmp_path / "old")]) == 0
    assert cli_main(["sample", str(tmp_path / "old"), "--num", "4", "--out", str(tmp_path / "s.npz")]) == 0
    assert load_samples(tmp_path / "s.npz").metadata["family"] == "full"


def test_fit_has_the_interface_of_the_baselines(data_dir, tmp_path):
    """jspgfn.gflownet.method.fit: a Dataset in, PosteriorSamples out, like a baseline's fit()."""
    from jspgfn.dataset import load_dataset
    from jspgfn.gflownet.method import CAPABILITIES, fit

    samples = fit(
        load_dataset(data_dir),
        "lingauss",
        0,
        family="full",
        preset="smoke",
        num_samples=12,
        overrides=TINY,
        run_dir=tmp_path / "run",
    )
    assert samples.graphs.shape == (12, 4, 4) and samples.share_cyclic() == 0.0
    assert samples.metadata["display_name"] == "JSP-GFN (full)" and samples.metadata["iterations"] == 20
    assert (tmp_path / "run" / "checkpoint.npz").is_file()  # the run folder is kept when one is given
    assert set(CAPABILITIES) == {"joint", "nonlinear", "dag_support", "discrete", "max_parents", "sampler", "minibatch"}


def test_set_values_parse_exponents_as_numbers():
    """YAML 1.1 reads 1e-4 as a string; --set / --param read it as the float a user means."""
    from jspgfn.gflownet.cli import parse_value

    assert parse_value("1e-4") == 1e-4 and isinstance(parse_value("1e-4"), float)
    assert parse_value("-2E5") == -2e5
    assert parse_value("3") == 3 and isinstance(parse_value("3"), int)
    assert parse_value("abc") == "abc" and parse_value("[1, 2]") == [1, 2] and parse_value("null") is None


CLOSED_FORM = {
    "theta_elbo": 1.0,
    "stop_score_offset": 1.0,
    "stop_score_closed_form": True,
    "explore_score_temperature": 1.0,
    "explore_score_share": 0.75,
}


@pytest.mark.parametrize("family", ["diag", "full"])
def test_the_training_step_calls_no_lapack(data_dir, tmp_path, family):
    """On CPU a batched LAPACK call inside the step blocks an intra-op pool thread until its batch is done; two at
    once on 2 cores deadlocked (twenty-ninth session's Cholesky, thirty-sixth session's triangular solve of the
    full family: gdb showed both pool threads in ParallelBatchMap). So the compiled step, with every option that
    adds linear algebra, must hold no LAPACK custom call."""
    over = {**TINY, **CLOSED_FORM, "backward_every": 5, "num_iterations": 10}
    trainer, state, _ = train(
        data_dir, "lingauss", "smoke", 0, tmp_path / "run", overrides=over, family=family, progress=False
    )
    hlo = type(trainer).run_chunk.lower(trainer, state, 10).compile().as_text()
    targets = set(re.findall(r'custom_call_target="([^"]+)"', hlo))
    assert not {t for t in targets if "lapack" in t.lower()}, targets


def test_theta_elbo_trains_the_full_family_with_the_closed_form_options(data_dir, tmp_path):
    """The combination that hung with LAPACK's triangular solve (thirty-fifth session) trains to the end."""
    over = {**TINY, **CLOSED_FORM}
    _, state, info = train(
        data_dir, "lingauss", "smoke", 0, tmp_path / "run", overrides=over, family="full", progress=False
    )
    assert info["iteration"] == 20
    assert all(np.all(np.isfinite(np.asarray(x))) for x in jax.tree_util.tree_leaves(state.params))


def test_theta_elbo_trains_the_full_family(data_dir, tmp_path):
    """The auxiliary ELBO term reparameterises the full family too (loss.reparameterised): a run finishes with
    the term in its metrics and finite parameters."""
    over = {**TINY, "theta_elbo": 1.0}
    _, state, info = train(
        data_dir, "lingauss", "smoke", 0, tmp_path / "run", overrides=over, family="full", progress=False
    )
    assert info["iteration"] == 20
    assert json.loads((tmp_path / "run" / "config.json").read_text())["family"] == "full"
    assert all(np.all(np.isfinite(np.asarray(x))) for x in jax.tree_util.tree_leaves(state.params))
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert rows and all(np.isfinite(row["neg_elbo"]) for row in rows)


def test_likelihood_settings_are_options_recorded_and_checked(data_dir, tmp_path, capsys):
    """--param obs_var=... (the likelihood's settings, as for the baselines) reaches the model: config.json
    and the samples record it, the trained model has it; a wrong name or value is refused in one line
    before anything is written, a resume with other settings is refused, and so is a config.json whose
    settings are not the model's."""
    sets = sum((["--set", f"{k}={v}"] for k, v in TINY.items()), [])
    base = ["train", str(data_dir), "--model", "lingauss", "--preset", "smoke", "--no-progress", *sets]
    run = tmp_path / "run"
    assert cli_main(base + ["--param", "obs_var=0.1", "--set", "prior_var=2", "--out", str(run)]) == 0
    config = json.loads((run / "config.json").read_text())
    assert config["model_kwargs"] == {"obs_var": 0.1, "prior_mean": 0.0, "prior_var": 2.0}
    assert config["overrides"] == TINY  # the settings are not training options
    assert cli_main(["sample", str(run), "--num", "4", "--out", str(tmp_path / "s.npz")]) == 0
    assert load_samples(tmp_path / "s.npz").metadata["model_kwargs"]["obs_var"] == 0.1
    trainer, _, _ = train(data_dir, "lingauss", "smoke", 0, run, TINY, False, model_kwargs=config["model_kwargs"])
    assert trainer.model.obs_var == 0.1 and trainer.model.prior_var == 2.0  # resumed: the same run
    with pytest.raises(JspgfnError, match="differs in model settings"):
        train(data_dir, "lingauss", "smoke", 0, run, TINY, False)  # the default obs_var 0.01
    capsys.readouterr()

    for option, problem in (
        ("obs_var=-1", "model 'lingauss' setting obs_var=-1: must be > 0"),
        ("obs_var=abc", "model 'lingauss' setting obs_var='abc': not a number"),
        ("hidden=8", "model 'lingauss' has no setting hidden (its settings: obs_var, prior_mean, prior_var)"),
    ):
        assert cli_main(base + ["--param", option, "--out", str(tmp_path / "bad")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and problem in err, err
    assert not (tmp_path / "bad").exists()

    (run / "config.json").write_text(json.dumps({**config, "model_kwargs": {"obs_var": 0}}))
    assert cli_main(["sample", str(run), "--num", "4", "--out", str(tmp_path / "t.npz")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "config.json" in err and "obs_var=0: must be > 0" in err, err


def test_onpolicy_envs_act_with_the_policy_alone(data_dir, tmp_path):
    """onpolicy_envs (beyond the paper): with epsilon 1 the first k environments draw the policy's actions (the same
    draws as epsilon 0 with the same key), the others the exploration's; a statistical test on 4,000 environments at
    the empty graph that the on-policy ones stop at the policy's rate, not the uniform exploration's; the option's
    checks."""
    from scipy import stats

    options = {**TINY, "onpolicy_envs": 2}
    trainer, a, _ = train(data_dir, "lingauss-diag", "smoke", 0, tmp_path / "a", overrides=options, progress=False)
    d = trainer.num_variables
    env = envlib.reset(4000, d)
    key = jax.random.PRNGKey(3)
    many = dataclasses.replace(trainer, cfg=trainer.cfg.replace(num_envs=4000, onpolicy_envs=3000))
    plain = dataclasses.replace(trainer, cfg=trainer.cfg.replace(num_envs=4000, onpolicy_envs=0))
    mixed = np.asarray(many.act(a.params, env, key, 1.0))
    np.testing.assert_array_equal(mixed[:3000], np.asarray(plain.act(a.params, env, key, 0.0))[:3000])
    np.testing.assert_array_equal(mixed[3000:], np.asarray(plain.act(a.params, env, key, 1.0))[3000:])
    p_stop = float(jax.nn.sigmoid(trainer.network.apply(a.params, env.adjacency[:1])["stop_logit"][0]))
    assert abs(p_stop - 1 / (d * (d - 1) + 1)) > 0.1  # the policy's stop differs from the uniform exploration's
    assert stats.binomtest(int(np.sum(mixed[:3000] == d * d)), 3000, p_stop).pvalue > 1e-3
    assert stats.binomtest(int(np.sum(mixed[3000:] == d * d)), 1000, p_stop).pvalue < 1e-6
    with pytest.raises(JspgfnError, match="onpolicy_envs 9 is more than num_envs 8"):
        get_preset("smoke", num_envs=8, onpolicy_envs=9)
    with pytest.raises(JspgfnError, match="onpolicy_envs"):
        get_preset("smoke", onpolicy_envs=-1)
