"""log P_T(G, theta): beam search + Monte Carlo against brute force over all K! orders."""

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
from scipy.special import logsumexp

from jspgfn.gflownet.log_pt import TrajectoryScorer, log_prob_graph, log_prob_terminating
from jspgfn.gflownet.networks import NetConfig, make_network
from jspgfn.models import get_model

D = 4
GRAPH = np.array([[0, 1, 1, 0], [0, 0, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]], np.uint8)  # K = 4 edges: 24 orders


def _setup():
    net = make_network(NetConfig(embed_dim=16, mlp_hidden=16, theta_hidden=16, num_heads=2, key_size=8), D)
    params = net.init(jax.random.PRNGKey(0), jnp.zeros((1, D, D), jnp.uint8))
    # sharpen the policy so that trajectories differ a lot in probability
    params = jax.tree_util.tree_map(lambda p: 3.0 * p, params)
    return net, params


def _brute_force(scorer):
    edges = np.argwhere(GRAPH > 0)
    orders = np.array(list(itertools.permutations(range(len(edges)))))
    return float(logsumexp(scorer.trajectories(edges, orders)))


def test_exact_when_beam_covers_all_orders():
    net, params = _setup()
    scorer = TrajectoryScorer(net.apply, params, D)
    exact = _brute_force(scorer)
    est = log_prob_graph(scorer, GRAPH, np.random.default_rng(0), beam_size=math.factorial(4), num_samples=8)
    np.testing.assert_allclose(est, exact, rtol=0, atol=1e-4)  # float32 network


def test_unbiased_with_small_beam():
    net, params = _setup()
    scorer = TrajectoryScorer(net.apply, params, D)
    exact = _brute_force(scorer)
    rng = np.random.default_rng(1)
    estimates = np.array([log_prob_graph(scorer, GRAPH, rng, beam_size=3, num_samples=4) for _ in range(300)])
    mean_prob = np.exp(logsumexp(estimates) - np.log(len(estimates)))  # unbiased in probability space
    assert abs(mean_prob / np.exp(exact) - 1) < 0.05
    # the beam alone is a lower bound
    edges = np.argwhere(GRAPH > 0)
    from jspgfn.gflownet.log_pt import beam_search

    top = beam_search(scorer, edges, 3)
    assert logsumexp([lp for _, lp in top]) <= exact + 1e-9


def test_empty_graph_and_full_estimate_is_finite():
    net, params = _setup()
    model = get_model("lingauss-diag")
    graphs = np.stack([np.zeros((D, D), np.uint8), GRAPH])
    theta = np.zeros((2, D, D))
    theta[1][GRAPH > 0] = 0.5
    out = log_prob_terminating(net.apply, model, params, graphs, theta, beam_size=4, num_samples=8)
    assert out.shape == (2,) and np.all(np.isfinite(out))


class _UniformScorer:
    """Every edge addition has log-probability 0, so log P(G) = log(K!) exactly (K! orders of probability 1)."""

    def __init__(self, d):
        self.d = d

    def log_edges(self, graphs):
        return np.zeros((len(graphs), self.d, self.d)), np.zeros(len(graphs))

    def trajectories_many(self, edge_lists, order_lists):
        return [np.zeros(len(orders)) for orders in order_lists]


def test_graphs_with_more_than_170_edges_do_not_overflow():
    """K! overflows a float past K = 170 (a dense d=20 DAG has up to 190 edges): the estimate stays in log space."""
    d = 20
    complete = np.triu(np.ones((d, d), np.uint8), 1)  # 190 edges
    est = log_prob_graph(_UniformScorer(d), complete, np.random.default_rng(0), beam_size=2, num_samples=4)
    assert abs(est - math.lgamma(191)) < 1e-9


def test_batched_estimates_equal_one_graph_at_a_time():
    """log_prob_graphs shares network calls across graphs (beam searches in lockstep, Monte Carlo trajectories
    together): its estimates equal those of one graph at a time with the same random stream."""
    from jspgfn.gflownet.log_pt import log_prob_graphs

    net, params = _setup()
    scorer = TrajectoryScorer(net.apply, params, D)
    graphs = []
    for k in range(5):  # k <= 2: the beam of 4 covers every order (exact); k = 3, 4: Monte Carlo
        edges = np.argwhere(GRAPH > 0)[:k]
        g = np.zeros((D, D), np.uint8)
        g[edges[:, 0], edges[:, 1]] = 1
        graphs.append(g)
    graphs.append(np.triu(np.ones((D, D), np.uint8), 1))  # 6 edges, 720 orders
    together = log_prob_graphs(scorer, np.stack(graphs), np.random.default_rng(0), beam_size=4, num_samples=8)
    one_rng = np.random.default_rng(0)
    alone = [log_prob_graph(scorer, g, one_rng, beam_size=4, num_samples=8) for g in graphs]
    np.testing.assert_allclose(together, alone, rtol=1e-6, atol=1e-6)
    assert together[0] == 0.0 and np.all(np.isfinite(together))
    # network calls of at most 16 graph states (many chunk boundaries): the same estimates
    small = TrajectoryScorer(net.apply, params, D, chunk=16)
    chunked = log_prob_graphs(small, np.stack(graphs), np.random.default_rng(0), beam_size=4, num_samples=8)
    np.testing.assert_allclose(chunked, together, rtol=1e-6, atol=1e-6)


def test_exact_subset_sum_equals_brute_force_over_orders():
    """log_prob_graph_exact (a dynamic program over the 2^K edge subsets) = the sum over all K! orders."""
    from jspgfn.gflownet.log_pt import log_prob_graph_exact

    net, params = _setup()
    scorer = TrajectoryScorer(net.apply, params, D)
    np.testing.assert_allclose(
        log_prob_graph_exact(scorer, GRAPH), _brute_force(scorer), rtol=0, atol=1e-4
    )  # float32 network
    complete = np.triu(np.ones((D, D), np.uint8), 1)  # 6 edges: 720 orders
    orders = np.array(list(itertools.permutations(range(6))))
    brute = float(logsumexp(scorer.trajectories(np.argwhere(complete > 0), orders)))
    np.testing.assert_allclose(log_prob_graph_exact(scorer, complete), brute, rtol=0, atol=1e-4)
    assert log_prob_graph_exact(scorer, np.zeros((D, D), np.uint8)) == 0.0


def _sharp_setup(d, scale):
    net = make_network(NetConfig(embed_dim=16, mlp_hidden=16, theta_hidden=16, num_heads=2, key_size=8), d)
    params = net.init(jax.random.PRNGKey(3), jnp.zeros((1, d, d), jnp.uint8))
    return net, jax.tree_util.tree_map(lambda p: scale * p, params)


def test_both_proposals_unbiased_on_a_dense_graph():
    """A complete DAG on 5 nodes (10 edges, 3,628,800 orders) under a random policy: the mean of P-hat over
    200 estimates matches the exact sum within 4 standard errors, for the paper's uniform orders and for the
    mixture. (With a sharper policy both stay unbiased but their tails are too heavy for 200 estimates.)"""
    from jspgfn.gflownet.log_pt import log_prob_graph_exact, log_prob_graphs

    d = 5
    net, params = _sharp_setup(d, 1.0)
    scorer = TrajectoryScorer(net.apply, params, d)
    complete = np.triu(np.ones((d, d), np.uint8), 1)[[2, 0, 4, 1, 3]][:, [2, 0, 4, 1, 3]]  # a shuffled order
    exact = log_prob_graph_exact(scorer, complete)
    graphs = np.repeat(complete[None], 200, axis=0)  # 200 independent estimates in one batched call
    for proposal in ("uniform", "mixture"):
        est = log_prob_graphs(scorer, graphs, np.random.default_rng(7), beam_size=4, num_samples=16, proposal=proposal)
        ratios = np.exp(est - exact)  # P-hat / P
        standard_error = ratios.std() / np.sqrt(len(ratios))
        assert abs(ratios.mean() - 1) < 4 * standard_error, (proposal, ratios.mean(), standard_error)
        assert standard_error < 0.1


def test_mixture_recovers_a_policy_that_favours_few_orders():
    """A policy that adds the edges of G in one fixed order with probability 0.9 at each step: P(G | G0)
    is about 0.9^K, but a uniform order has probability about (0.1 / K)^K. At K = 12 the uniform
    estimate is tens of nats low in log space; the mixture's policy-drawn orders find the favoured ones."""
    from jspgfn.gflownet.log_pt import log_prob_graph_exact, log_prob_graphs

    d = 6
    graph = np.triu(np.ones((d, d), np.uint8), 1)
    graph[0, 5] = graph[1, 4] = graph[2, 5] = 0  # 12 edges
    edges = np.argwhere(graph > 0)

    class FixedOrderScorer(TrajectoryScorer):
        def log_edges(self, graphs):
            out = np.full((len(graphs), d, d), -np.inf)
            for n, g in enumerate(np.asarray(graphs)):
                missing = [e for e in range(len(edges)) if g[edges[e, 0], edges[e, 1]] == 0]
                for rank, e in enumerate(missing):
                    p = 0.9 if rank == 0 else 0.1 / max(len(missing) - 1, 1)
                    out[n, edges[e, 0], edges[e, 1]] = np.log(p)
            return out, np.zeros(len(graphs))

    scorer = FixedOrderScorer(None, None, d)
    exact = log_prob_graph_exact(scorer, graph)
    assert exact > 12 * np.log(0.9) - 1e-9  # at least the favoured order
    rng = np.random.default_rng(0)
    # beam 1 + 8 orders: the beam finds the favoured order, so the check is on what the Monte Carlo adds
    uniform = log_prob_graphs(scorer, graph[None], rng, beam_size=1, num_samples=8, proposal="uniform")[0]
    mixture = log_prob_graphs(scorer, graph[None], rng, beam_size=1, num_samples=8, proposal="mixture")[0]
    assert exact - mixture < 0.5, (exact, mixture)
    assert exact - mixture < exact - uniform


def test_unknown_proposal_is_refused():
    import pytest

    from jspgfn.gflownet.log_pt import log_prob_graphs

    net, params = _setup()
    with pytest.raises(ValueError, match="proposal"):
        log_prob_graphs(TrajectoryScorer(net.apply, params, D), GRAPH[None], np.random.default_rng(0), proposal="x")
