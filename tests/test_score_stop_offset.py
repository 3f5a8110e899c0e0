"""benchmarks/score_stop_offset.py: its theta-free score log R(G, mu) - log q(mu | G) against closed forms.

With q(theta | G) the exact posterior (full family: its mean and the Cholesky factor of its covariance) the score
is log P(D | G) + log P(G) for every DAG on 3 nodes; with the diagonal family at the mean-field scales
1 / sqrt(diag Lambda) it is below that by 0.5 * sum_j (sum log diag Lambda_j - log det Lambda_j). The offset
moves the stop logit only, by weight * (score(G) - score(empty)), and passes no gradient to q's head.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conftest import benchmark_module
from jspgfn.conjugate import log_marginal_likelihood_graphs, posterior_theta
from jspgfn.gflownet import exact_flows
from jspgfn.gflownet.networks import NetConfig, make_network
from jspgfn.models import get_graph_prior, get_model


def _module():
    return benchmark_module("score_stop_offset")


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
    module = _module()
    x = _data()
    model = get_model("lingauss", obs_var=0.5)
    prior = get_graph_prior("erdos_renyi", 3)
    graphs = exact_flows.dag_lattice(3).graphs.astype(np.uint8)  # all 25 DAGs
    out, gap = _posterior_outputs(model, x, graphs, diagonal)
    score = np.asarray(module.theta_free_score(out, jnp.asarray(graphs), model, prior, jnp.asarray(x, jnp.float32)))
    exact = log_marginal_likelihood_graphs(model, x, graphs, graph_prior=prior)
    expected = exact - gap if diagonal else exact
    assert np.abs(score - expected).max() < 2e-3 * np.abs(exact).max()
    assert np.ptp(exact) > 10.0  # the graphs' scores differ: a constant score would not pass
    if diagonal:
        assert gap.max() > 0.05  # the mean-field gap is measurable on these correlated parents


def test_the_offset_moves_the_stop_logit_only_and_passes_no_gradient_to_q():
    module = _module()
    x = jnp.asarray(_data(), jnp.float32)
    model = get_model("lingauss", obs_var=0.5)
    prior = get_graph_prior("uniform", 3)
    base = make_network(NetConfig(embed_dim=16, mlp_hidden=16, num_heads=2, key_size=8, theta_hidden=16), 3)
    graphs = jnp.asarray(exact_flows.dag_lattice(3).graphs, jnp.uint8)
    params = base.init(jax.random.PRNGKey(0), graphs[:1])
    # Move q's mean away from 0 so that the graphs' scores differ.
    params["policy/theta_loc"]["b"] = params["policy/theta_loc"]["b"] + 0.7
    net = module.ScoreStopOffset(
        base, model, prior, np.asarray(x), 2.5, module.empty_score(model, prior, np.asarray(x))
    )
    plain, shifted = base.apply(params, graphs), net.apply(params, graphs)
    score = module.theta_free_score(plain, graphs, model, prior, x)
    empty = int(np.flatnonzero(np.asarray(graphs).sum(axis=(1, 2)) == 0)[0])
    assert abs(float(score[empty] - net.empty_score)) < 1e-3  # no parameters: the same constant
    np.testing.assert_allclose(shifted["stop_logit"] - plain["stop_logit"], 2.5 * (score - score[empty]), atol=1e-3)
    assert float(jnp.ptp(score)) > 1.0
    for key in ("edge_logits", "loc", "scale"):
        np.testing.assert_array_equal(shifted[key], plain[key])
    grads = jax.grad(lambda p: jnp.sum(net.apply(p, graphs)["stop_logit"]))(params)
    for head in ("policy/theta_loc", "policy/theta_scale"):
        assert all(float(jnp.abs(g).max()) == 0.0 for g in jax.tree_util.tree_leaves(grads[head]))
    stop_head = jax.tree_util.tree_leaves(grads["policy/stop_mlp/~/linear_1"])
    assert max(float(jnp.abs(g).max()) for g in stop_head) > 0.0
