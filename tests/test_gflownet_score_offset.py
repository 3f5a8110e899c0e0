"""The stop logit shifted by JSP-GFN's own score (option stop_score_offset, gflownet/score_offset.py).

The theta-free score log R(G, mu) - log q(mu | G) against closed forms.
With q(theta | G) the exact posterior (full family: its mean and the Cholesky factor of its covariance) the score
is log P(D | G) + log P(G) for every DAG on 3 nodes; with the diagonal family at the mean-field scales
1 / sqrt(diag Lambda) it is below that by 0.5 * sum_j (sum log diag Lambda_j - log det Lambda_j). The offset
moves the stop logit only, by weight * (score(G) - score(empty)), and passes no gradient to q's head.
Trained with the option, a d=3 sampler matches the exact posterior (and, as a negative control, the same network
without the offset does not); each run of a group reads its own data; a run folder keeps the training data that
sampling needs. With stop_score_closed_form the offset is the closed-form score (closed_form.graph_gains, against
conjugate.py's float64 one, with interventions and a prior mean), whatever q is, and a d=3 sampler trained with
it matches the exact posterior too.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jspgfn.cli import main as cli_main
from jspgfn.conjugate import log_marginal_likelihood_graphs, posterior_theta
from jspgfn.errors import JspgfnError
from jspgfn.generate import generate
from jspgfn.gflownet import closed_form, exact_flows
from jspgfn.gflownet.networks import NetConfig, make_network
from jspgfn.gflownet.presets import TrainConfig
from jspgfn.gflownet.sample import sample_graphs
from jspgfn.gflownet.score_offset import ScoreOffsetNetwork, theta_free_score
from jspgfn.gflownet.train import load_run, train, train_group
from jspgfn.models import get_graph_prior, get_model
from test_gflownet_posterior import CONFIG, TOLERANCE, exact_edge_marginals
from test_gflownet_train import TINY

OFFSET = {"stop_score_offset": 1.0, "theta_elbo": 1.0}


def _data(d=3, n=30, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    x[:, 1] += 0.8 * x[:, 0]
    x[:, 2] += 0.5 * x[:, 1] - 0.7 * x[:, 0]
    return x


def _posterior_outputs(model, x, graphs, diagonal):
    """The network outputs of q(theta | G) = the exact posterior (or its mean-field diagonal) per graph, in
    node layout: loc [K, d, d], and tril [K, d, d, d] (full) or scale [K, d, d] (diagonal); plus the exact
    log det gap 0.5 * sum_j (sum log diag Lambda_j - log det Lambda_j) per graph [K]."""
    k, d, _ = graphs.shape
    loc = np.zeros((k, d, d))
    tril = np.tile(np.eye(d), (k, d, 1, 1))
    scale = np.ones((k, d, d))
    gap = np.zeros(k)
    for g, graph in enumerate(graphs):
        means, covs = posterior_theta(model, x, graph)
        loc[g] = means
        for j in range(d):
            parents = np.nonzero(graph[:, j])[0]
            if len(parents) == 0:
                continue
            block = covs[j][np.ix_(parents, parents)]
            precision = np.linalg.inv(block)
            tril[g, j][np.ix_(parents, parents)] = np.linalg.cholesky(block)
            scale[g, j, parents] = 1.0 / np.sqrt(np.diag(precision))
            gap[g] += 0.5 * (np.sum(np.log(np.diag(precision))) - np.linalg.slogdet(precision)[1])
    out = {"loc": jnp.asarray(loc, jnp.float32)}
    if diagonal:
        out["scale"] = jnp.asarray(scale, jnp.float32)
    else:
        out["scale"] = jnp.asarray(np.sqrt(np.diagonal(tril @ np.swapaxes(tril, -1, -2), axis1=-2, axis2=-1)))
        out["tril"] = jnp.asarray(tril, jnp.float32)
    return out, gap


@pytest.mark.parametrize("diagonal", [False, True])
def test_the_score_is_the_marginal_likelihood_when_q_is_the_posterior(diagonal):
    x = _data()
    model = get_model("lingauss", obs_var=0.5)
    prior = get_graph_prior("erdos_renyi", 3)
    graphs = exact_flows.dag_lattice(3).graphs.astype(np.uint8)  # all 25 DAGs
    out, gap = _posterior_outputs(model, x, graphs, diagonal)
    score = np.asarray(theta_free_score(out, jnp.asarray(graphs), model, prior, jnp.asarray(x, jnp.float32)))
    exact = log_marginal_likelihood_graphs(model, x, graphs, graph_prior=prior)
    expected = exact - gap if diagonal else exact
    assert np.abs(score - expected).max() < 2e-3 * np.abs(exact).max()
    assert np.ptp(exact) > 10.0  # the graphs' scores differ: a constant score would not pass
    if diagonal:
        assert gap.max() > 0.05  # the mean-field gap is measurable on these correlated parents


def _small_network(prior_name):
    """(x float32 [30, 3], model, graph prior, an untrained small network, all 25 DAGs on 3 nodes, its params)."""
    model = get_model("lingauss", obs_var=0.5)
    base = make_network(NetConfig(embed_dim=16, mlp_hidden=16, num_heads=2, key_size=8, theta_hidden=16), 3)
    graphs = jnp.asarray(exact_flows.dag_lattice(3).graphs, jnp.uint8)
    params = base.init(jax.random.PRNGKey(0), graphs[:1])
    return jnp.asarray(_data(), jnp.float32), model, get_graph_prior(prior_name, 3), base, graphs, params


def test_the_offset_moves_the_stop_logit_only_and_passes_no_gradient_to_q():
    x, model, prior, base, graphs, params = _small_network("uniform")
    # Move q's mean away from 0 so that the graphs' scores differ.
    params["policy/theta_loc"]["b"] = params["policy/theta_loc"]["b"] + 0.7
    net = ScoreOffsetNetwork(base, model, prior, 2.5, x)
    plain, shifted = base.apply(params, graphs), net.apply(params, graphs)
    score = theta_free_score(plain, graphs, model, prior, x)
    empty = int(np.flatnonzero(np.asarray(graphs).sum(axis=(1, 2)) == 0)[0])
    np.testing.assert_allclose(shifted["stop_logit"] - plain["stop_logit"], 2.5 * (score - score[empty]), atol=1e-3)
    assert float(jnp.ptp(score)) > 1.0
    for key in ("edge_logits", "loc", "scale"):
        np.testing.assert_array_equal(shifted[key], plain[key])
    grads = jax.grad(lambda p: jnp.sum(net.apply(p, graphs)["stop_logit"]))(params)
    for head in ("policy/theta_loc", "policy/theta_scale"):
        assert all(float(jnp.abs(g).max()) == 0.0 for g in jax.tree_util.tree_leaves(grads[head]))
    stop_head = jax.tree_util.tree_leaves(grads["policy/stop_mlp/~/linear_1"])
    assert max(float(jnp.abs(g).max()) for g in stop_head) > 0.0
    # on other data the offset is another one
    other = net.on_data(x[::-1] * 1.5).apply(params, graphs)["stop_logit"]
    assert float(jnp.abs(other - shifted["stop_logit"]).max()) > 1.0


def test_the_elimination_gives_numpy_s_logdet_and_quadratic_form():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(3, 2, 7, 7))
    matrix = a @ np.swapaxes(a, -1, -2) + 7 * np.eye(7)
    vector = rng.normal(size=(3, 2, 7)) * 5
    logdet, quadratic = closed_form.logdet_and_quadratic(
        jnp.asarray(matrix, jnp.float32), jnp.asarray(vector, jnp.float32)
    )
    np.testing.assert_allclose(logdet, np.linalg.slogdet(matrix)[1], rtol=1e-5)
    expected = np.einsum("...i,...i->...", vector, np.linalg.solve(matrix, vector[..., None])[..., 0])
    np.testing.assert_allclose(quadratic, expected, rtol=1e-4)


@pytest.mark.parametrize("intervened", [False, True])
def test_the_closed_form_gains_are_conjugate_s_scores(intervened):
    """graph_gains = log P(D | G) + log P(G) - (the same for the empty graph), conjugate.py's float64 closed
    form, on random DAGs of 6 nodes (the empty and the complete one among them)."""
    rng = np.random.default_rng(3)
    d, n = 6, 50
    x = rng.normal(size=(n, d)) * rng.uniform(0.3, 2.0, size=d)
    x[:, 3] += 0.8 * x[:, 1] - 0.5 * x[:, 0]
    interventions = (rng.random((n, d)) < 0.2).astype(np.float32) if intervened else None
    model = get_model("lingauss", obs_var=0.2, prior_mean=0.3, prior_var=2.0)
    prior = get_graph_prior("erdos_renyi", d)
    graphs = np.zeros((40, d, d), np.uint8)
    for graph in graphs[1:]:
        order = rng.permutation(d)
        p = rng.uniform(0.1, 1.0)
        for a in range(d):
            for b in range(a + 1, d):
                graph[order[a], order[b]] = rng.random() < p
    graphs[-1] = np.triu(np.ones((d, d), np.uint8), 1)
    gains = closed_form.graph_gains(model, prior, x.astype(np.float32), interventions, jnp.asarray(graphs))
    exact = log_marginal_likelihood_graphs(model, x, graphs, interventions, graph_prior=prior)
    expected = exact - exact[0]
    assert np.ptp(expected) > 100.0  # the graphs' scores differ: a constant would not pass
    np.testing.assert_allclose(np.asarray(gains, np.float64), expected, rtol=1e-4, atol=2e-2)


def test_the_closed_form_offset_is_the_exact_score_whatever_q():
    """With stop_score_closed_form the stop logit moves by weight * (log R(G) - log R(empty)), the closed-form
    score, whatever q's mean (which moves the theta-free score), with no gradient to q; "stop_score" is the
    absolute score."""
    x, model, prior, base, graphs, params = _small_network("erdos_renyi")
    net = ScoreOffsetNetwork(base, model, prior, 2.5, x, closed_form=True)
    exact = log_marginal_likelihood_graphs(model, _data(), np.asarray(graphs), graph_prior=prior)
    empty = int(np.flatnonzero(np.asarray(graphs).sum(axis=(1, 2)) == 0)[0])
    plain = base.apply(params, graphs)
    for shift in (0.0, 0.7):
        moved = {**params, "policy/theta_loc": {**params["policy/theta_loc"]}}
        moved["policy/theta_loc"]["b"] = params["policy/theta_loc"]["b"] + shift
        out = net.apply(moved, graphs)
        np.testing.assert_allclose(out["stop_logit"] - plain["stop_logit"], 2.5 * (exact - exact[empty]), atol=2e-3)
        np.testing.assert_allclose(out["stop_score"], exact, rtol=1e-5, atol=2e-3)
    free = ScoreOffsetNetwork(base, model, prior, 2.5, x).apply(moved, graphs)["stop_logit"]
    assert float(jnp.abs(free - out["stop_logit"]).max()) > 1.0  # q's score is another offset
    grads = jax.grad(lambda p: jnp.sum(net.apply(p, graphs)["stop_logit"]))(params)
    for head in ("policy/theta_loc", "policy/theta_scale"):
        assert all(float(jnp.abs(g).max()) == 0.0 for g in jax.tree_util.tree_leaves(grads[head]))


def test_the_closed_form_needs_the_offset():
    with pytest.raises(JspgfnError, match="stop_score_closed_form needs stop_score_offset > 0"):
        TrainConfig().replace(stop_score_closed_form=True)
    assert TrainConfig().replace(stop_score_offset=1.0, stop_score_closed_form=True).stop_score_closed_form


@pytest.mark.slow  # about a minute here, each
@pytest.mark.parametrize("closed", [False, True])
def test_a_sampler_trained_with_the_offset_matches_the_exact_posterior(tmp_path, closed):
    """test_gflownet_posterior's statistical test (d=3, same data, options and tolerance) with the option on (q's
    score, or the closed form), its samples drawn through the run folder as `jspgfn sample` draws them; negative
    control: the trained network without the offset (its own stop logit alone) must miss the exact marginals."""
    ds = generate("er1", "linear", 3, 20, 10, 2)
    exact = exact_edge_marginals(ds.train)
    run = tmp_path / "run"
    options = {**CONFIG, **OFFSET, "stop_score_closed_form": closed}
    trained, state, _ = train(ds, "lingauss-diag", "quick", 0, run, overrides=options, progress=False)
    trainer, loaded, _, _ = load_run(run)
    assert trainer.network.closed_form == closed
    graphs = sample_graphs(trainer.network.apply, loaded.params, jax.random.PRNGKey(0), 3000, 3)
    without = sample_graphs(trainer.network.base.apply, loaded.params, jax.random.PRNGKey(0), 3000, 3)
    err, err_without = (float(np.abs(g.mean(axis=0) - exact).max()) for g in (graphs, without))
    print(f"max edge-marginal error {err:.3f}, without the offset {err_without:.3f} (tolerance {TOLERANCE})")
    assert err < TOLERANCE
    assert err_without > TOLERANCE, "the offset made no difference: the negative control cannot fail"


def test_each_run_of_a_group_scores_its_own_data(tmp_path):
    """A group of two runs with the option is the two runs trained alone: the same actions and replay (which
    the offset steers from the first prefill step), so each run's offset read its own data, not run 0's."""
    datasets = [generate("er1", "linear", 4, 30, 10, seed) for seed in (11, 12)]
    options = {**TINY, **OFFSET, "explore_policy_stop": True}
    runs = [tmp_path / f"run{i}" for i in range(2)]
    _, states, _ = train_group(datasets, "lingauss", "smoke", [0, 1], runs, overrides=options, progress=False)
    for i, (ds, state) in enumerate(zip(datasets, states)):
        _, alone, _ = train(ds, "lingauss", "smoke", i, tmp_path / f"single{i}", overrides=options, progress=False)
        for a, b in zip(jax.tree_util.tree_leaves(state.replay), jax.tree_util.tree_leaves(alone.replay)):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_the_run_folder_keeps_the_data_its_sampler_reads(tmp_path, capsys):
    ds = generate("er1", "linear", 3, 20, 10, 2)
    run = tmp_path / "run"
    trained, state, _ = train(ds, "lingauss", "smoke", 0, run, overrides={**TINY, **OFFSET}, progress=False)
    trainer, loaded, _, _ = load_run(run)
    np.testing.assert_array_equal(trainer.data, ds.train.astype(np.float32))
    graphs = jnp.asarray(exact_flows.dag_lattice(3).graphs, jnp.uint8)
    np.testing.assert_allclose(
        trainer.network.apply(loaded.params, graphs)["stop_logit"],
        trained.network.apply(state.params, graphs)["stop_logit"],
        rtol=1e-6,
    )
    assert cli_main(["sample", str(run), "--num", "8", "--out", str(tmp_path / "s.npz")]) == 0
    data = run / "train_data.npz"
    np.savez(data, x=ds.train.astype(np.float32) + 1.0)
    assert cli_main(["sample", str(run), "--num", "8", "--out", str(tmp_path / "t.npz")]) == 2
    assert f"{data}: is not the data this run trained on" in capsys.readouterr().err
    data.unlink()
    assert cli_main(["sample", str(run), "--num", "8", "--out", str(tmp_path / "t.npz")]) == 2
    assert f"{data}: missing" in capsys.readouterr().err
    assert not (tmp_path / "t.npz").exists()


def test_the_offset_is_refused_for_other_likelihoods(tmp_path):
    ds = generate("er1", "linear", 3, 20, 10, 2)
    with pytest.raises(JspgfnError, match="stop_score_offset is for the linear Gaussian model only"):
        train(ds, "mlp-gauss", "smoke", 0, tmp_path / "run", overrides={**TINY, **OFFSET}, progress=False)
    assert not (tmp_path / "run").exists()
