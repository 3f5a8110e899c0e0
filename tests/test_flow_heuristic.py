"""benchmarks/flow_heuristic.py: the relaxed best completion against brute force over every DAG on 4 nodes.

The heuristic log-flow Phi_w(G) = log R(G) + w h(G) must be (1) built on the best parent set between each node's
parents and its candidates, (2) with w = 1 an upper bound of log R over every DAG containing G, (3) changed from G
to each child exactly as the child's own Phi_w says (the incremental gathers for all d^2 children at once), and (4)
the policy over it must put log P(G + e | G) - log P(stop | G) = Phi_w(G + e) - Phi_w(G) + log P_B + w h(G) when
the network's own logits are zero (with stop_only, P(stop | G) = sigmoid(-w h(G)) and uniform edges).
"""

import itertools

import jax.numpy as jnp
import numpy as np
import pytest

from conftest import benchmark_module
from jspgfn.exact_dp import local_scores
from jspgfn.gflownet import env as envlib
from jspgfn.gflownet import exact_flows, policy
from jspgfn.graphs import valid_actions_jax
from jspgfn.models import get_model

D = 4


@pytest.fixture(scope="module")
def setup():
    module = benchmark_module("flow_heuristic")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(30, D))
    x[:, 1] += 0.9 * x[:, 0]
    x[:, 2] += 0.7 * x[:, 1] - 0.5 * x[:, 3]
    local = local_scores(get_model("lingauss", obs_var=0.3), x)
    local = np.where(np.isfinite(local), local, -1e6)
    lattice = exact_flows.dag_lattice(D)
    return module, local, module.best_superset_table(local), lattice


def _score(module, local, graphs):
    """log R(G) up to a constant, from the local scores: [M] (float64 numpy)."""
    codes = np.asarray(module.parent_codes(jnp.asarray(graphs)))
    return local[np.arange(D)[None, :], codes].sum(-1)


def _phi(module, local, best, graphs, weight):
    """Phi_w of each graph [M] from its own h and score (float64 numpy)."""
    adjacency = jnp.asarray(graphs)
    h, _ = module.heuristic_terms(local, best, adjacency, envlib.closure_of(adjacency), weight)
    return _score(module, local, graphs) + weight * np.asarray(h, np.float64)


def _zero_policy(setup, weight, stop_only=False):
    """The heuristic policy with the network at zero over every DAG: (log_stop [M], log_edges [M, D, D], edge mask,
    h [M], delta_phi [M, D, D]) as numpy arrays."""
    module, local, best, lattice = setup
    net = module.HeuristicLogits(
        module.ZeroNetwork(), local.astype(np.float32), best.astype(np.float32), weight, None, stop_only=stop_only
    )
    adjacency = jnp.asarray(lattice.graphs)
    closure = envlib.closure_of(adjacency)
    emask = valid_actions_jax(adjacency, closure, None)
    out = net.apply({}, adjacency)
    log_stop, log_edges = policy.log_policy_edges(out["stop_logit"], out["edge_logits"], emask)
    h, delta = module.heuristic_terms(local, best, adjacency, closure, weight)
    return tuple(np.asarray(a) for a in (log_stop, log_edges, emask, h, delta))


def test_best_superset_table_is_the_max_between_the_parents_and_the_candidates(setup):
    module, local, best, _ = setup
    for j, candidates in itertools.product(range(D), range(1 << D)):
        for parents in (p for p in range(1 << D) if p & ~candidates == 0):
            t = sum(3**k * (((candidates >> k) & 1) + ((parents >> k) & 1)) for k in range(D))
            between = [s for s in range(1 << D) if s & ~candidates == 0 and parents & ~s == 0]
            assert best[j, t] == pytest.approx(max(local[j, s] for s in between))


def test_phi_one_bounds_every_superset_and_is_the_score_where_no_edge_can_be_added(setup):
    module, local, best, lattice = setup
    graphs = lattice.graphs
    phi = _phi(module, local, best, graphs, 1.0)
    score = _score(module, local, graphs)
    flat = graphs.reshape(len(graphs), -1).astype(bool)
    for m in range(len(graphs)):
        supersets = np.all(flat[:, flat[m]], axis=1)
        assert phi[m] >= score[supersets].max() - 1e-3
    maximal = np.all(lattice.children < 0, axis=1)
    assert maximal.sum() == 24  # the complete DAGs of the 4! orders
    np.testing.assert_allclose(phi[maximal], score[maximal], atol=1e-3)
    assert np.any(phi - score > 1.0)  # not log R itself elsewhere


@pytest.mark.parametrize("weight", [1.0, 0.5])
def test_the_change_to_each_child_is_the_childs_own_phi(setup, weight):
    module, local, best, lattice = setup
    phi = _phi(module, local, best, lattice.graphs, weight)
    adjacency = jnp.asarray(lattice.graphs)
    _, delta = module.heuristic_terms(local, best, adjacency, envlib.closure_of(adjacency), weight)
    delta = np.asarray(delta).reshape(len(lattice.graphs), -1)
    parents, actions = np.nonzero(lattice.children >= 0)
    expected = phi[lattice.children[parents, actions]] - phi[parents]
    assert len(parents) > 1000
    np.testing.assert_allclose(delta[parents, actions], expected, atol=2e-3)


def test_the_policy_is_the_heuristic_flow_where_the_network_is_zero(setup):
    weight = 0.7
    log_stop, log_edges, emask, h, delta = _zero_policy(setup, weight)
    children_edges = setup[3].graphs.sum((1, 2))[:, None, None] + 1.0
    expected = delta - np.log(children_edges) + weight * h[:, None, None]
    mask = emask & emask.any(axis=(1, 2))[:, None, None]
    got = log_edges - log_stop[:, None, None]
    np.testing.assert_allclose(got[mask], expected[mask], rtol=1e-4, atol=2e-2)
    every_action = np.concatenate([np.where(emask, log_edges, -np.inf).reshape(len(mask), -1), log_stop[:, None]], 1)
    np.testing.assert_allclose(np.logaddexp.reduce(every_action, axis=1), 0.0, atol=1e-3)  # a distribution


def test_stop_only_offsets_the_stop_by_minus_w_h_and_leaves_the_edges_uniform(setup):
    weight = 0.7
    log_stop, log_edges, emask, h, _ = _zero_policy(setup, weight, stop_only=True)
    free = emask.any(axis=(1, 2))
    expected = -np.logaddexp(0.0, weight * h.astype(np.float64))  # log sigmoid(-w h)
    np.testing.assert_allclose(log_stop[free], expected[free], rtol=1e-4, atol=1e-4)
    uniform = np.log1p(-np.exp(expected[free])) - np.log(emask.sum((1, 2))[free])
    got = np.where(emask[free], log_edges[free], np.nan)
    np.testing.assert_allclose(np.nanmax(got, axis=(1, 2)), uniform, atol=1e-3)
    np.testing.assert_allclose(np.nanmin(got, axis=(1, 2)), uniform, atol=1e-3)


@pytest.mark.parametrize("stop_only", [False, True])
def test_edge_rows_limits_the_edge_logits_only(setup, stop_only):
    module, local, best, lattice = setup
    net = module.HeuristicLogits(module.ZeroNetwork(), local, best, 1.0, None, stop_only=stop_only)
    out = net.apply({}, jnp.asarray(lattice.graphs[:10]), edge_rows=4)
    assert out["stop_logit"].shape == (10,) and out["edge_logits"].shape == (4, D, D)
