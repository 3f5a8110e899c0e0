"""benchmarks/marginal_reward_oracle.py: its residual vanishes exactly at the sampler of the exact posterior.

The oracle trains the library's network on DAG-GFlowNet's modified detailed balance with the exact linear
Gaussian score; the diagnosis in docs/jspgfn-beyond-d5.md rests on its solution being the exact posterior
over graphs. At d=3 every DAG is listed: the oracle's tabular network (its --tabular mode) holding the
logits of that posterior's optimal policy (exact_flows.optimal_flows) must give zero residual on every edge
addition, and a wrong one must not. The same holds for its sibling term (--sibling), whose siblings are drawn
uniformly over the valid edges (checked by a chi-square test).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import logsumexp

from conftest import benchmark_module
from jspgfn.conjugate import log_marginal_likelihood_graphs
from jspgfn.gflownet import env as envlib
from jspgfn.gflownet import exact_flows, policy
from jspgfn.gflownet.loss import next_graphs
from jspgfn.gflownet.presets import get_preset
from jspgfn.graphs import valid_actions_jax
from jspgfn.models import get_graph_prior, get_model


def _oracle_module():
    return benchmark_module("marginal_reward_oracle")


def _setup(module, d=3, n=20, seed=0):
    """Data, model, the oracle's tabular network over the DAGs on d nodes, the optimal policy's logits as its
    parameters, and every edge addition (graphs, actions)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    x[:, 1] += 0.8 * x[:, 0]
    x[:, 2] += 0.5 * x[:, 1]
    model = get_model("lingauss", obs_var=0.5)
    lattice = exact_flows.dag_lattice(d)
    log_marginal = log_marginal_likelihood_graphs(model, x, lattice.graphs)
    log_flow, log_stop = exact_flows.optimal_flows(lattice, log_marginal - logsumexp(log_marginal))
    m = len(lattice.graphs)
    edge_logits = np.full((m, d * d), -1e4)
    parents, actions = np.nonzero(lattice.children >= 0)
    children = lattice.children[parents, actions]
    edge_logits[parents, actions] = log_flow[children] - np.log(lattice.num_edges[children]) - log_flow[parents]
    stop_logit = log_stop - np.log(-np.expm1(np.minimum(log_stop, -1e-12)))  # logit of P(stop | G)
    table = module._Table.of(lattice, model.theta_shape(d)[-1])
    params = {"stop": jnp.asarray(stop_logit, jnp.float32), "edges": jnp.asarray(edge_logits.reshape(m, d, d))}
    return x, model, table, params, lattice.graphs[parents].astype(np.uint8), actions.astype(np.int32)


def _mean_abs_residual(module, x, model, table, params, graphs, actions):
    class Fixed(module.MarginalRewardTrainer):
        network = table

    cfg = get_preset("smoke")
    trainer = Fixed(cfg, model, get_graph_prior("uniform", x.shape[1]), "diag", x.astype(np.float32))
    key = jax.random.PRNGKey(0)
    _, metrics = trainer.loss(params, jnp.asarray(graphs), jnp.asarray(actions), key, jnp.asarray(x))
    return float(metrics["abs_delta"])


def test_the_residual_vanishes_at_the_exact_posteriors_sampler_and_not_elsewhere():
    module = _oracle_module()
    x, model, table, params, graphs, actions = _setup(module)
    assert len(graphs) == 48  # every edge addition between the 25 DAGs on 3 nodes
    assert _mean_abs_residual(module, x, model, table, params, graphs, actions) < 1e-3

    every_third = jnp.where(jnp.arange(len(params["stop"])) % 3 == 0, 1.0, 0.0)
    wrong = {**params, "stop": params["stop"] + every_third}
    assert _mean_abs_residual(module, x, model, table, wrong, graphs, actions) > 0.1


def _trainer(module, x, model, network, trainer_class=None):
    base = trainer_class or module.MarginalRewardTrainer

    class Fixed(base):
        pass

    Fixed.network = network
    cfg = get_preset("smoke")
    return Fixed(cfg, model, get_graph_prior("uniform", x.shape[1]), "diag", x.astype(np.float32))


def _random_trajectories(lattice, num, seed=1):
    """Whole trajectories from the empty graph along the lattice: actions int32 [K, T], length int32 [K]."""
    rng = np.random.default_rng(seed)
    d = lattice.graphs.shape[-1]
    t = d * (d - 1) // 2
    actions = np.zeros((num, t), np.int32)
    length = np.zeros(num, np.int32)
    for k in range(num):
        node = int(np.flatnonzero(lattice.num_edges == 0)[0])
        stop_at = rng.integers(1, t + 1)
        while length[k] < stop_at and np.any(lattice.children[node] >= 0):
            action = rng.choice(np.flatnonzero(lattice.children[node] >= 0))
            actions[k, length[k]] = action
            length[k] += 1
            node = int(lattice.children[node, action])
    return actions, length


def test_the_trajectory_term_vanishes_at_the_exact_posteriors_sampler_and_not_elsewhere():
    module = _oracle_module()
    x, model, table, params, _, _ = _setup(module)
    actions, length = _random_trajectories(exact_flows.dag_lattice(3), 12)
    assert length.max() == 3 and length.min() >= 1
    trainer = _trainer(module, x, model, table)
    _, exact_residual = trainer.trajectory_term(params, jnp.asarray(actions), jnp.asarray(length))
    assert float(exact_residual) < 1e-3
    every_third = jnp.where(jnp.arange(len(params["stop"])) % 3 == 0, 1.0, 0.0)
    wrong = {**params, "stop": params["stop"] + every_third}
    _, wrong_residual = trainer.trajectory_term(wrong, jnp.asarray(actions), jnp.asarray(length))
    assert float(wrong_residual) > 0.1


def test_the_child_gradient_options_keep_the_loss_and_scale_or_cut_the_childs_stop_gradient():
    module = _oracle_module()
    x, model, table, params, graphs, actions = _setup(module)
    lattice = exact_flows.dag_lattice(3)
    complete = lattice.num_edges == 3  # complete DAGs are only ever children here, and stop there is forced
    two_edges = np.flatnonzero(lattice.num_edges == 2)  # children of one-edge graphs, parents of complete ones
    keep = lattice.num_edges[[int(np.flatnonzero((lattice.graphs == g).all(axis=(1, 2)))[0]) for g in graphs]] == 1
    graphs, actions = jnp.asarray(graphs[keep]), jnp.asarray(actions[keep])  # G: 1 edge, G': 2 edges
    assert not complete[two_edges].any()
    wrong = {**params, "stop": params["stop"] + 0.7 * jnp.sin(jnp.arange(len(params["stop"])))}
    key = jax.random.PRNGKey(0)

    def loss_and_child_grad(**options):
        trainer = _trainer(module, x, model, table)
        for name, value in options.items():
            setattr(trainer, name, value)
        loss_fn = lambda p: trainer.loss(p, graphs, actions, key, jnp.asarray(x))  # noqa: E731
        (loss, metrics), grads = jax.value_and_grad(loss_fn, has_aux=True)(wrong)
        return float(loss), np.asarray(grads["stop"])[two_edges], np.asarray(metrics["per_transition"])

    loss, full, _ = loss_and_child_grad()
    assert np.abs(full).max() > 1e-3  # the two-edge graphs appear here as children only
    half_loss, half, _ = loss_and_child_grad(child_gradient=0.5)
    semi_loss, semi, _ = loss_and_child_grad(child_gradient=0.0)
    assert half_loss == loss and semi_loss == loss
    np.testing.assert_allclose(half, 0.5 * full, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(semi, 0.0)
    cut_loss, cut, _ = loss_and_child_grad(inflow_cut=True)
    assert cut_loss == loss
    # Under the cut a child's stop is only pushed up (residual > 0: too little inflow), never down.
    assert np.all(cut <= 1e-7) and np.abs(cut).max() > 1e-3
    assert full.max() > 1e-3  # the paper's gradient also pushes some children's stops down: the cut removed those

    # Centred: only the batch mean of the children's stops carries gradient, d loss / d s_g summed over the
    # children g = -(1/B^2) sum_t huber'(delta_t) sum_u (1 - sigmoid(s_G'_u)).
    centred_loss, centred, residuals = loss_and_child_grad(centred_semi_gradient=True)
    assert centred_loss == pytest.approx(loss, rel=1e-6)  # + mean - mean: rounding only
    index = {g.tobytes(): k for k, g in enumerate(lattice.graphs)}
    children = [index[c.tobytes()] for c in np.asarray(next_graphs(graphs, actions))]
    stop = np.asarray(wrong["stop"], np.float64)
    signed = _signed_residuals(module, x, model, table, wrong, graphs, actions)
    assert np.allclose(np.abs(signed), residuals, atol=1e-4)
    b = len(children)
    expected = -np.clip(signed, -1.0, 1.0).sum() * (1.0 - 1.0 / (1.0 + np.exp(-stop[children]))).sum() / b**2
    np.testing.assert_allclose(centred.sum(), expected, rtol=1e-4, atol=1e-7)


def _signed_residuals(module, x, model, table, params, graphs, actions):
    """The oracle's signed residuals [B], recomputed here from the table's policy and the full log marginal
    likelihood of each graph."""
    b = graphs.shape[0]
    both = jnp.concatenate([graphs, next_graphs(graphs, actions)], axis=0)
    out = table.apply(params, both, b)
    emask = valid_actions_jax(both, envlib.closure_of(both), None)
    log_stop = policy.log_stop_prob(out["stop_logit"], emask)
    _, log_edges = policy.log_policy_edges(out["stop_logit"][:b], out["edge_logits"], emask[:b])
    log_pf = log_edges.reshape(b, -1)[jnp.arange(b), actions]
    log_pb = -np.log(np.asarray(both[b:]).sum(axis=(1, 2)))
    log_r = log_marginal_likelihood_graphs(model, x, np.asarray(both))
    return log_r[b:] - log_r[:b] + log_pb + np.asarray(log_stop[:b]) - np.asarray(log_pf) - np.asarray(log_stop[b:])


def test_the_score_gain_policy_has_the_soft_bellman_residual():
    """With the network's u = softplus(0) = log 2 everywhere, the residual of G -> G' is
    -log 2 + log(1 + sum_e' exp(s(G' + e') - s(G') + log P_B(G' | G' + e') + log 2)), computed here from the full
    log marginal likelihood of every DAG (not the local-score table the network reads)."""
    module = _oracle_module()
    x, model, table, params, graphs, actions = _setup(module)
    lattice = exact_flows.dag_lattice(3)
    zero = {"stop": jnp.zeros_like(params["stop"]), "edges": jnp.zeros_like(params["edges"])}
    trainer = _trainer(module, x, model, table, module.ScoreGainTrainer)
    trainer.network = module._ScoreGainLogits(table, trainer.local_table, None)
    _, metrics = trainer.loss(zero, jnp.asarray(graphs), jnp.asarray(actions), jax.random.PRNGKey(0), jnp.asarray(x))

    score = log_marginal_likelihood_graphs(model, x, lattice.graphs)
    index = {g.tobytes(): k for k, g in enumerate(lattice.graphs)}
    expected = []
    for g, a in zip(graphs, actions):
        child = g.copy()
        child.reshape(-1)[a] = 1
        c = index[child.tobytes()]
        grandchildren = lattice.children[c][lattice.children[c] >= 0]
        gains = score[grandchildren] - score[c] - np.log(lattice.num_edges[c] + 1) + np.log(2.0)
        expected.append(-np.log(2.0) + np.log1p(np.exp(gains).sum()))
    np.testing.assert_allclose(np.asarray(metrics["per_transition"]), np.abs(expected), rtol=1e-4, atol=2e-3)


def test_the_sibling_term_vanishes_at_the_exact_posteriors_sampler_and_not_for_wrong_edge_logits():
    module = _oracle_module()
    x, model, table, params, graphs, actions = _setup(module)

    class WithSibling(module.MarginalRewardTrainer):
        sibling = 1.0

    trainer = _trainer(module, x, model, table, WithSibling)
    key = jax.random.PRNGKey(3)
    _, metrics = trainer.loss(params, jnp.asarray(graphs), jnp.asarray(actions), key, jnp.asarray(x))
    assert float(metrics["sibling_abs_gap"]) < 1e-3
    assert float(metrics["loss"]) == pytest.approx(float(metrics["subtb_loss"] + metrics["sibling_loss"]))
    # One edge logit in three moved by 1 nat: siblings' gaps change, the stop logits are the same.
    d = x.shape[1]
    every_third = jnp.where(jnp.arange(d * d) % 3 == 0, 1.0, 0.0).reshape(d, d)
    wrong = {**params, "edges": params["edges"] + every_third[None]}
    _, metrics = trainer.loss(wrong, jnp.asarray(graphs), jnp.asarray(actions), key, jnp.asarray(x))
    assert float(metrics["sibling_abs_gap"]) > 0.1


def test_sibling_actions_are_uniform_over_the_valid_edges():
    module = _oracle_module()
    lattice = exact_flows.dag_lattice(3)
    graphs = np.repeat(lattice.graphs.astype(np.uint8), 400, axis=0)  # [25 * 400, 3, 3]
    drawn = np.asarray(module.sibling_actions(jnp.asarray(graphs), jax.random.PRNGKey(0), None))
    valid = np.asarray(valid_actions_jax(jnp.asarray(graphs), envlib.closure_of(jnp.asarray(graphs)), None))
    has_edge = valid.reshape(len(graphs), -1).any(axis=1)
    assert valid.reshape(len(graphs), -1)[has_edge, drawn[has_edge]].all()
    empty = lattice.graphs.sum(axis=(1, 2)) == 0
    counts = np.bincount(drawn.reshape(25, 400)[np.flatnonzero(empty)[0]], minlength=9)
    off = ~np.eye(3, dtype=bool).reshape(-1)
    assert counts[~off].sum() == 0
    chi2 = ((counts[off] - 400 / 6) ** 2 / (400 / 6)).sum()  # 5 degrees of freedom: P(chi2 > 20.5) = 0.001
    assert chi2 < 20.5


def test_the_table_stop_offset_is_the_exact_score_and_composes_with_the_target_network():
    """--stop-offset adds log P(D | G) - log P(D | empty) to the stop logit, summed from the local-score table:
    against the closed-form marginal likelihood of every DAG on 3 nodes; with a target network (the child's stop
    scored again in the step, which the Cholesky form could not do on CPU) equal to the online one the loss is the
    plain one, and a moved target changes it."""
    module = _oracle_module()
    x, model, table, params, graphs, actions = _setup(module)
    lattice = exact_flows.dag_lattice(3)

    class Tabular(module.MarginalRewardTrainer):
        network = table

    class Offset(module.WithStopOffset, Tabular):  # the offset on the tabular network
        pass

    trainer = Offset(get_preset("smoke"), model, get_graph_prior("uniform", 3), "diag", x.astype(np.float32))
    shifted = trainer.network.apply(params, jnp.asarray(lattice.graphs))
    plain = table.apply(params, jnp.asarray(lattice.graphs))
    score = log_marginal_likelihood_graphs(model, x, lattice.graphs)
    empty = int(np.flatnonzero(lattice.num_edges == 0)[0])
    np.testing.assert_allclose(
        np.asarray(shifted["stop_logit"] - plain["stop_logit"]), score - score[empty], rtol=1e-4, atol=1e-3
    )
    assert np.ptp(score - score[empty]) > 1.0  # the offset is not a constant here

    key = jax.random.PRNGKey(0)
    g, a, xj = jnp.asarray(graphs), jnp.asarray(actions), jnp.asarray(x)
    loss, _ = trainer.loss(params, g, a, key, xj)
    with_target, _ = trainer.loss(params, g, a, key, xj, target_params=params)
    np.testing.assert_allclose(float(with_target), float(loss), rtol=1e-6)
    every_third = jnp.where(jnp.arange(len(params["stop"])) % 3 == 0, 1.0, 0.0)
    moved_target, _ = trainer.loss(
        params, g, a, key, xj, target_params={**params, "stop": params["stop"] + every_third}
    )
    assert abs(float(moved_target) - float(loss)) > 1e-3  # the target's child stops, offset included, enter the loss
