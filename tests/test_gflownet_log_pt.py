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
