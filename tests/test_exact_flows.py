"""Exact flows over every DAG (gflownet.exact_flows) against brute force and against sampling."""

import jax
import jax.numpy as jnp
import numpy as np
from scipy.special import logsumexp

from jspgfn.gflownet import exact_flows
from jspgfn.gflownet.log_pt import TrajectoryScorer, log_prob_graph_exact
from jspgfn.gflownet.networks import NetConfig, make_network
from jspgfn.gflownet.sample import sample_graphs
from jspgfn.graphs import is_dag

D = 4


def _policy(scale=3.0):
    net = make_network(NetConfig(embed_dim=16, mlp_hidden=16, theta_hidden=16, num_heads=2, key_size=8), D)
    params = net.init(jax.random.PRNGKey(0), jnp.zeros((1, D, D), jnp.uint8))
    params = jax.tree_util.tree_map(lambda p: scale * p, params)  # scale 3: a policy far from uniform
    return net, params


def _tables(net, params, lattice):
    log_edges, log_stop = TrajectoryScorer(net.apply, params, D).log_edges(lattice.graphs)
    return log_stop, log_edges.reshape(len(log_stop), -1)


def test_lattice_lists_every_dag_and_every_edge_addition():
    lattice = exact_flows.dag_lattice(D)
    assert len(lattice.graphs) == 543
    assert len({g.tobytes() for g in lattice.graphs}) == 543
    parent, action = np.nonzero(lattice.children >= 0)
    child = lattice.graphs[lattice.children[parent, action]]
    added = child.astype(int) - lattice.graphs[parent]
    assert np.all(added.reshape(len(parent), -1)[np.arange(len(parent)), action] == 1)
    assert np.all(added.sum(axis=(1, 2)) == 1)
    # every missing edge whose addition keeps a DAG is listed, and no other
    for g, row in zip(lattice.graphs[::37], lattice.children[::37]):
        for a in range(D * D):
            i, j = divmod(a, D)
            new = g.copy()
            new[i, j] = 1
            assert (row[a] >= 0) == (i != j and g[i, j] == 0 and is_dag(new))


def test_terminating_probabilities_equal_the_sum_over_orders():
    net, params = _policy()
    lattice = exact_flows.dag_lattice(D)
    log_stop, log_edges = _tables(net, params, lattice)
    log_pt, log_flow = exact_flows.terminating_log_probs(lattice, log_stop, log_edges)
    assert abs(logsumexp(log_pt)) < 1e-5  # a distribution over the 543 DAGs
    scorer = TrajectoryScorer(net.apply, params, D)
    for index in (0, 17, 200, 400, 542):
        expected = log_prob_graph_exact(scorer, lattice.graphs[index])
        np.testing.assert_allclose(log_flow[index], expected, atol=1e-4)  # float32 network, other batches


def test_terminating_probabilities_match_the_sampler():
    net, params = _policy()
    lattice = exact_flows.dag_lattice(D)
    log_pt, _ = exact_flows.terminating_log_probs(lattice, *_tables(net, params, lattice))
    num = 20_000
    graphs = sample_graphs(net.apply, params, jax.random.PRNGKey(3), num, D)
    counts = np.bincount(exact_flows.index_of(lattice, graphs), minlength=len(lattice.graphs))
    p = np.exp(log_pt)
    big = p > 0.01
    assert big.sum() >= 5
    z = (counts[big] - num * p[big]) / np.sqrt(num * p[big] * (1 - p[big]))
    assert np.max(np.abs(z)) < 4.5
    # graph-size distribution, a summary of every graph
    expected = np.bincount(lattice.num_edges, p * num)
    observed = np.bincount(lattice.num_edges, counts.astype(float))
    assert np.all(np.abs(observed - expected) < 4.5 * np.sqrt(expected + 1) + 1)


def test_optimal_flows_sample_the_target_with_the_uniform_backward_policy():
    lattice = exact_flows.dag_lattice(D)
    rng = np.random.default_rng(0)
    log_target = rng.normal(scale=5.0, size=len(lattice.graphs))
    log_target -= logsumexp(log_target)
    log_flow, log_stop = exact_flows.optimal_flows(lattice, log_target)
    assert abs(log_flow[lattice.num_edges == 0][0]) < 1e-9  # F*(empty) = total mass = 1
    assert np.all(log_stop <= 1e-12)
    complete = lattice.num_edges == D * (D - 1) // 2
    np.testing.assert_allclose(log_stop[complete], 0.0, atol=1e-12)  # forced stop
    # P*_F(G' | G) = F*(G') / (|G'| F*(G)); with P*(stop | G) the probabilities sum to 1 at every state
    parent, action = np.nonzero(lattice.children >= 0)
    child = lattice.children[parent, action]
    log_edges = np.full((len(lattice.graphs), D * D), -np.inf)
    log_edges[parent, action] = log_flow[child] - np.log(lattice.num_edges[child]) - log_flow[parent]
    total = np.logaddexp(logsumexp(log_edges, axis=1), log_stop)
    np.testing.assert_allclose(total, 0.0, atol=1e-9)
    log_pt, _ = exact_flows.terminating_log_probs(lattice, log_stop, log_edges)
    np.testing.assert_allclose(log_pt, log_target, atol=1e-9)


def test_trajectory_weights_against_the_exact_terminating_probabilities():
    """sample_trajectories' log P_F(tau), stop included, against the exact log P_T(G): the importance weight
    w = P_T(G) P_B(tau | G) / P_F(tau) (uniform P_B = 1 / |G|!) is exactly 1 on graphs of at most one edge (one
    trajectory each), and on each two-edge graph whose two orders are both drawn its mean over the sampler's
    trajectories is 1 (the two orders' weights in their frequencies). A log P_F missing its stop, or an edge's
    probability, would not pass."""
    from scipy.special import gammaln

    from jspgfn.gflownet.sample import sample_trajectories

    net, params = _policy(scale=1.5)  # both orders of a two-edge graph drawn often enough
    lattice = exact_flows.dag_lattice(D)
    log_pt, _ = exact_flows.terminating_log_probs(lattice, *_tables(net, params, lattice))
    num = 20_000
    graphs, log_pf = sample_trajectories(net.apply, params, jax.random.PRNGKey(5), num, D)
    np.testing.assert_array_equal(graphs, sample_graphs(net.apply, params, jax.random.PRNGKey(5), num, D))
    index, sizes = exact_flows.index_of(lattice, graphs), graphs.sum(axis=(1, 2))
    log_w = log_pt[index] - gammaln(sizes + 1) - log_pf
    assert np.sum(sizes <= 1) > 100
    np.testing.assert_allclose(log_w[sizes <= 1], 0.0, atol=1e-4)
    counts = np.bincount(index, minlength=len(lattice.graphs))
    tested = 0
    for g in np.flatnonzero((counts >= 50) & (lattice.num_edges == 2)):
        w = np.exp(log_w[index == g])
        if np.ptp(w) < 0.01:
            continue  # one order only drawn (the other's probability ~1e-4 here): its weight is in the tail
        assert abs(w.mean() - 1.0) < 4.5 * w.std() / np.sqrt(len(w))
        tested += 1
    assert tested >= 2
