"""benchmarks/complete_leak.py's per-level audit of the states lacking a pair the posterior is sure of. At d=4 every
DAG is listed: with the exact posterior's optimal policy as the sampler and the exact score as the ELBO, the
sampler's columns equal the optimal ones and every residual vanishes; a sampler that goes on without the pair more
often than the optimal one at one level shows there, with residuals of the sign the leak of the lab notes has."""

import numpy as np
from scipy.special import logsumexp

from conftest import benchmark_module
from jspgfn.gflownet import exact_flows

D = 4


def _target():
    """A target over the 543 DAGs on 4 nodes that is sure of the pair 1-2 (either direction): log R [M]."""
    lattice = exact_flows.dag_lattice(D)
    rng = np.random.default_rng(0)
    weights = rng.normal(0.0, 1.0, (D, D))
    weights[1, 2] = weights[2, 1] = 12.0  # joined with probability > 0.99
    log_r = np.einsum("mij,ij->m", lattice.graphs.astype(float), weights)
    return lattice, log_r


def _optimal_sampler(lattice, log_r):
    log_exact = log_r - logsumexp(log_r)
    opt_flow, opt_stop = exact_flows.optimal_flows(lattice, log_exact)
    child = lattice.children
    c = np.maximum(child, 0)
    log_edges = np.where(
        child >= 0, opt_flow[c] - np.log(np.maximum(lattice.num_edges[c], 1)) - opt_flow[:, None], -np.inf
    )
    return log_exact, opt_flow, opt_stop, log_edges


def _pair(lattice, log_exact):
    marginals = np.einsum("m,mij->ij", np.exp(log_exact), lattice.graphs)
    return marginals + marginals.T


def test_the_optimal_sampler_matches_the_optimal_columns_and_meets_every_condition():
    leak = benchmark_module("complete_leak")
    lattice, log_r = _target()
    log_exact, opt_flow, opt_stop, log_edges = _optimal_sampler(lattice, log_r)
    pair = _pair(lattice, log_exact)
    assert pair[1, 2] > 0.99 and np.sum(np.triu(pair > 0.99, 1)) == 1
    _, log_flow = exact_flows.terminating_log_probs(lattice, opt_stop, log_edges)
    levels = leak.sure_pair_levels(lattice, pair, log_flow, opt_stop, log_edges, opt_flow, opt_stop, D)
    assert [row[1] for row in levels] == list(range(5))  # 0 to 4 edges (5 and 6 always hold the pair)
    for _, _, sampler, optimal in levels:
        np.testing.assert_allclose(sampler, optimal, rtol=1e-6, atol=1e-12)
        np.testing.assert_allclose(sum(sampler[1:]), 1.0, atol=1e-9)  # stop, add it, go on: all that leaves
    rows = leak.sure_pair_residuals(lattice, pair, log_r, log_r, log_flow, opt_stop, log_edges, opt_flow, D)
    assert len(rows) == 2 * 4  # 1 to 4 edges, two kinds each
    for row in rows:
        np.testing.assert_allclose(row[5:], 0.0, atol=1e-6)  # residuals, ELBO gap, log P_F against optimal


def test_going_on_without_the_pair_at_one_level_shows_there():
    leak = benchmark_module("complete_leak")
    lattice, log_r = _target()
    log_exact, opt_flow, opt_stop, log_edges = _optimal_sampler(lattice, log_r)
    pair = _pair(lattice, log_exact)
    edited = log_edges.copy()
    stops = opt_stop.copy()
    at = np.flatnonzero((leak.joined_pairs(lattice)[:, 1, 2] == 0) & (lattice.num_edges == 3))
    others = ~leak.pair_actions(1, 2, D)
    for g in at:  # 10 times the optimal odds of every edge but the pair, renormalised with the stop
        logits = np.concatenate([[stops[g]], np.where(others, edited[g] + np.log(10.0), edited[g])])
        logits -= logsumexp(logits)
        stops[g], edited[g] = logits[0], logits[1:]
    _, log_flow = exact_flows.terminating_log_probs(lattice, stops, edited)
    levels = {
        row[1]: row for row in leak.sure_pair_levels(lattice, pair, log_flow, stops, edited, opt_flow, opt_stop, D)
    }
    np.testing.assert_allclose(levels[2][2], levels[2][3], rtol=1e-6, atol=1e-12)  # untouched below
    assert levels[3][2][3] > 2 * levels[3][3][3]  # goes on without it more often
    assert levels[4][2][0] > 2 * levels[4][3][0]  # and more flow lacks it one level up
    rows = {(row[1], row[2]): row for row in
            leak.sure_pair_residuals(lattice, pair, log_r, log_r, log_flow, stops, edited, opt_flow, D)}  # fmt: skip
    # from the edited states the residual of each transition that goes on is exactly -log 10 (its odds against the
    # stop raised tenfold, the children untouched); those that add the pair keep theirs
    np.testing.assert_allclose(rows[3, "others"][5:7], -np.log(10.0), atol=1e-6)
    np.testing.assert_allclose(rows[3, "adds it"][5:7], 0.0, atol=1e-6)
    assert rows[3, "others"][8] > 0.5  # log P_F over the optimal one
    # one level down only the transitions into the edited states move (their stop is lower), and below, nothing
    assert rows[2, "others"][5] > 0.1
    np.testing.assert_allclose(rows[2, "adds it"][5:7], 0.0, atol=1e-6)
    np.testing.assert_allclose([rows[1, "others"][5], rows[1, "adds it"][5]], 0.0, atol=1e-6)
