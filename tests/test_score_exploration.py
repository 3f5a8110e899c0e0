"""Exploration by the closed-form score gains (option explore_score_temperature, gflownet/score_exploration.py).

The factorisation against numpy's; the gains against conjugate.py's float64 closed form (with and without
interventions); a d=20 training that once deadlocked (XLA's CPU LAPACK calls in the jitted step); the exploratory
actions' law against softmax(gain / T) with the stop at 1, alone and mixed with the uniform law
(explore_score_share, and the share that moves with epsilon, explore_score_share_end; chi-square tests); a d=3
sampler trained with it against the exact posterior (only the behaviour policy changes); groups, resume and
refusals.
"""

import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from jspgfn import conjugate
from jspgfn.dataset import write_dataset_folder
from jspgfn.errors import JspgfnError
from jspgfn.generate import generate
from jspgfn.gflownet import closed_form, core, score_exploration
from jspgfn.gflownet import env as envlib
from jspgfn.gflownet.presets import TrainConfig
from jspgfn.gflownet.sample import sample_graphs
from jspgfn.gflownet.train import train, train_group
from jspgfn.models import LinearGaussian, get_graph_prior
from test_gflownet_posterior import CONFIG, TOLERANCE, exact_edge_marginals
from test_gflownet_train import TINY, _leaves, assert_resumes_bitwise

EXPLORE = {"explore_score_temperature": 1.0}


def _random_dags(rng, num, d, p=0.4):
    graphs = np.zeros((num, d, d), np.uint8)
    for graph in graphs:
        order = rng.permutation(d)
        for a in range(d):
            for b in range(a + 1, d):
                graph[order[a], order[b]] = rng.random() < p
    return graphs


def test_the_factor_and_the_solve_are_numpy_s():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(3, 2, 6, 6))
    matrix = a @ np.swapaxes(a, -1, -2) + 6 * np.eye(6)
    vectors = rng.normal(size=(3, 2, 6, 4))
    chol, solved = closed_form.cholesky_and_solve(jnp.asarray(matrix, jnp.float32), jnp.asarray(vectors, jnp.float32))
    expected = np.linalg.cholesky(matrix)
    np.testing.assert_allclose(chol, expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(solved, np.linalg.solve(expected, vectors), rtol=1e-4, atol=1e-5)


@pytest.mark.slow  # about 20 s here
def test_it_trains_at_d20(tmp_path):
    """The d=20 step with the option finishes: with LAPACK's Cholesky batched over every (graph, node, candidate)
    this command deadlocked (no CPU used, not done after 150 s; done in 19 s with closed_form's own
    factorisation). In a subprocess, so a regression fails here after 5 minutes instead of hanging the suite."""
    data, run = tmp_path / "d20", tmp_path / "run"
    write_dataset_folder(data, generate("er2", "linear", 20, 50, 10, 0))
    args = [sys.executable, "-m", "jspgfn.cli", "train", str(data), "--preset", "smoke", "--out", str(run)]
    args += ["--no-progress", "--set", "explore_score_temperature=1", "--set", "num_iterations=20"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (run / "checkpoint.npz").is_file()


@pytest.mark.parametrize("intervened", [False, True])
def test_the_gains_are_the_closed_form_marginal_likelihood_ratios(intervened):
    rng = np.random.default_rng(0)
    d = 5
    x = rng.normal(size=(40, d)) * rng.uniform(0.2, 2.0, size=d)
    x[:, 2] += 0.9 * x[:, 0]
    interventions = (rng.random((40, d)) < 0.2).astype(np.float32) if intervened else None
    model = LinearGaussian(obs_var=0.1, prior_mean=0.3, prior_var=2.0)
    prior = get_graph_prior("erdos_renyi", d)
    graphs = _random_dags(rng, 6, d)
    gains = np.asarray(closed_form.edge_gains(model, prior, x.astype(np.float32), interventions, graphs))
    checked = 0
    for graph, gain in zip(graphs, gains):
        for i in range(d):
            for j in range(d):
                if i == j or graph[i, j]:
                    continue
                parents = list(np.nonzero(graph[:, j])[0])
                expected = (
                    conjugate.log_marginal_likelihood_local(model, x, j, parents + [i], interventions)
                    - conjugate.log_marginal_likelihood_local(model, x, j, parents, interventions)
                    + prior.log_edge_weight
                )
                assert abs(gain[i, j] - expected) < 2e-3 * max(1.0, abs(expected)), (i, j, gain[i, j], expected)
                checked += 1
    assert checked > 50


def test_the_share_moves_with_epsilon():
    """explore_score_share_end: the share goes linearly from explore_score_share to it over the first
    exploration_fraction of the run, as epsilon does, then stays; without it the share is constant."""
    cfg = TrainConfig(
        num_iterations=1000, exploration_fraction=0.4, explore_score_temperature=1.0, explore_score_share=0.9
    )
    assert core.score_share(cfg, jnp.int32(300)) == 0.9
    moving = cfg.replace(explore_score_share_end=0.5)
    steps = jnp.array([0, 100, 200, 400, 1000])
    np.testing.assert_allclose(core.score_share(moving, steps), [0.9, 0.8, 0.7, 0.5, 0.5], rtol=1e-6)
    epsilon = core.exploration(moving, steps)  # the same clock: 1 -> 0.1
    np.testing.assert_allclose((epsilon - 0.1) / 0.9, (core.score_share(moving, steps) - 0.5) / 0.4, atol=1e-6)


@pytest.mark.parametrize(("share", "share_end", "step"), [(1.0, None, 0), (0.5, None, 0), (1.0, 0.0, 4)])
def test_exploratory_actions_follow_the_score_gains(tmp_path, share, share_end, step):
    """With epsilon 1 the action at a graph is drawn from share * softmax(gain / T) + (1 - share) * uniform over
    the valid edges and the stop (whose logit is 0; share: explore_score_share, or with explore_score_share_end
    the share at that step: 1 -> 0 over TINY's first 10 steps, 0.6 at step 4); T = 20 spreads it over several
    actions. Chi-square over 6,000 environments, and against the paper's uniform law (and, for share < 1, the
    score's law alone) as negative controls."""
    ds = generate("er1", "linear", 4, 30, 10, 3)
    options = {**TINY, "explore_score_temperature": 20.0, "explore_score_share": share}
    if share_end is not None:
        options["explore_score_share_end"] = share_end
    trainer, state, _ = train(ds, "lingauss", "smoke", 0, tmp_path / "run", overrides=options, progress=False)
    share = float(core.score_share(trainer.cfg, jnp.int32(step)))
    if share_end is not None:
        assert abs(share - 0.6) < 1e-6, share  # TINY: 20 iterations, epsilon falls over the first half
    env = envlib.reset(6000, 4)
    graph = np.zeros((4, 4), np.uint8)
    graph[0, 1] = 1
    env = envlib.add_edges(env, jnp.zeros(6000, jnp.int32), jnp.ones(6000, jnp.int32))
    act = jax.jit(lambda params, env, key, share: trainer.act(params, env, key, 1.0, share=share))
    actions = np.asarray(act(state.params, env, jax.random.PRNGKey(5), core.score_share(trainer.cfg, step)))
    gains = closed_form.edge_gains(trainer.model, trainer.graph_prior, trainer.data, None, graph[None])
    mask = envlib.action_mask(env, None)[:1]
    led = np.asarray(jax.nn.softmax(score_exploration.exploration_logits(gains, mask, 20.0)[0]), np.float64)
    led = led / led.sum()
    valid = np.asarray(mask[0])
    uniform = np.where(valid, 1.0 / valid.sum(), 0.0)
    probs = share * led + (1 - share) * uniform
    assert np.all(probs[~valid] == 0) and probs[-1] > 0
    counts = np.bincount(actions, minlength=probs.size)
    assert np.all(counts[probs == 0] == 0)

    def pvalue(law):
        expected = law * actions.size
        big = expected >= 5
        assert big.sum() >= 3, "T too low for a test with several cells"
        observed = np.append(counts[big], counts[~big].sum())
        expected = np.append(expected[big], expected[~big].sum())
        keep = expected > 0
        return stats.chisquare(observed[keep], expected[keep]).pvalue

    assert pvalue(probs) > 1e-3
    assert pvalue(uniform) < 1e-6
    if share < 1:
        assert pvalue(led) < 1e-6


@pytest.mark.slow  # about a minute here
def test_a_sampler_trained_with_it_matches_the_exact_posterior(tmp_path):
    """test_gflownet_posterior's statistical test (d=3, same data, options and tolerance) with the option on."""
    ds = generate("er1", "linear", 3, 20, 10, 2)
    exact = exact_edge_marginals(ds.train)
    options = {**CONFIG, "explore_score_temperature": 1.0}
    trainer, state, _ = train(ds, "lingauss-diag", "quick", 0, tmp_path / "run", overrides=options, progress=False)
    graphs = sample_graphs(trainer.network.apply, state.params, jax.random.PRNGKey(0), 3000, 3)
    err = float(np.abs(graphs.mean(axis=0) - exact).max())
    print(f"max edge-marginal error {err:.3f} (tolerance {TOLERANCE})")
    assert err < TOLERANCE


def test_groups_resume_and_refusals(tmp_path):
    """A group of two runs is the two runs alone (each explores by its own data's gains); a run resumes bit
    for bit and differs from the paper's exploration; other likelihoods and explore_policy_stop are refused."""
    datasets = [generate("er1", "linear", 4, 30, 10, seed) for seed in (11, 12)]
    options = {**TINY, **EXPLORE}
    runs = [tmp_path / f"run{i}" for i in range(2)]
    _, states, _ = train_group(datasets, "lingauss", "smoke", [0, 1], runs, overrides=options, progress=False)
    alone = []
    for i, (ds, state) in enumerate(zip(datasets, states)):
        alone.append(train(ds, "lingauss", "smoke", i, tmp_path / f"single{i}", overrides=options, progress=False)[1])
        for a, b in zip(_leaves(state.replay), _leaves(alone[i].replay)):
            np.testing.assert_array_equal(a, b)
    ds, whole = datasets[0], alone[0]
    assert_resumes_bitwise(ds, "lingauss", options, tmp_path / "c", whole)
    _, plain, _ = train(ds, "lingauss", "smoke", 0, tmp_path / "p", overrides=TINY, progress=False)
    assert any(not np.array_equal(a, b) for a, b in zip(_leaves(plain.replay), _leaves(whole.replay)))
    with pytest.raises(JspgfnError, match="explore_score_temperature is for the linear Gaussian model only"):
        train(ds, "mlp-gauss", "smoke", 0, tmp_path / "mlp", overrides=options, progress=False)
    assert not (tmp_path / "mlp").exists()
    with pytest.raises(JspgfnError, match="exclude each other"):
        train(ds, "lingauss", "smoke", 0, tmp_path / "x", overrides={**options, "explore_policy_stop": True})
    with pytest.raises(JspgfnError, match="explore_score_share < 1 needs explore_score_temperature"):
        train(ds, "lingauss", "smoke", 0, tmp_path / "y", overrides={**TINY, "explore_score_share": 0.5})
    with pytest.raises(JspgfnError, match="explore_score_share_end needs explore_score_temperature"):
        train(ds, "lingauss", "smoke", 0, tmp_path / "z", overrides={**TINY, "explore_score_share_end": 0.5})
    with pytest.raises(JspgfnError, match=r"explore_score_share_end: 1.5 must be in \[0, 1\]"):
        train(ds, "lingauss", "smoke", 0, tmp_path / "z", overrides={**options, "explore_score_share_end": 1.5})
    assert not (tmp_path / "y").exists() and not (tmp_path / "z").exists()


def test_a_share_that_moves_resumes_and_a_still_one_is_the_constant(tmp_path):
    """With explore_score_share_end a run resumes bit for bit (the share is read from the step) and differs
    from the constant share; an end equal to the start is the constant share bit for bit."""
    ds = generate("er1", "linear", 4, 30, 10, 11)
    constant = {**TINY, **EXPLORE, "explore_score_share": 0.5}
    moving = {**constant, "explore_score_share": 1.0, "explore_score_share_end": 0.0}
    _, whole, _ = train(ds, "lingauss", "smoke", 0, tmp_path / "m", overrides=moving, progress=False)
    assert_resumes_bitwise(ds, "lingauss", moving, tmp_path / "c", whole)
    _, still, _ = train(ds, "lingauss", "smoke", 0, tmp_path / "s", overrides=constant, progress=False)
    assert any(not np.array_equal(a, b) for a, b in zip(_leaves(still.replay), _leaves(whole.replay)))
    same = {**constant, "explore_score_share_end": 0.5}
    _, same_state, _ = train(ds, "lingauss", "smoke", 0, tmp_path / "e", overrides=same, progress=False)
    for a, b in zip(_leaves(same_state), _leaves(still)):
        np.testing.assert_array_equal(a, b)
