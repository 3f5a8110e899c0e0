"""Unbiased estimate of log P_T(G, theta) (appendix D.3.2).

P_T(G, theta) = P_phi(G | G0) P_phi(stop | G) q(theta | G), where P_phi(G | G0) sums
P_phi(tau) over the K! orders tau in which the K edges of G can be added. Estimate:

  P(G | G0) ~= sum_{tau in top} P(tau) + (K! - |top|) / M * sum_m P(tau_m)

`top` = trajectories found by a beam search (beam B) whose actions are restricted
to edges of G; tau_m = M uniformly random orders (uniform backward trajectories)
outside `top` (rejection sampling). Unbiased; exact when K! <= B.
"""

import functools
import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
from scipy.special import logsumexp

from jspgfn.gflownet import env as envlib
from jspgfn.gflownet import policy


@functools.partial(jax.jit, static_argnums=(0, 3))
def _log_edges(apply_fn, params, adjacency, max_parents):
    """log P(G + (i->j) | G) [n, d, d] and log P(stop | G) [n] for graphs [n, d, d]."""
    out = apply_fn(params, adjacency)
    state = envlib.EnvState(adjacency, envlib.closure_of(adjacency))
    log_stop, log_edges = policy.log_policy_edges(
        out["stop_logit"], out["edge_logits"], envlib.edge_mask(state, max_parents)
    )
    return log_edges, log_stop


@functools.partial(jax.jit, static_argnums=(0, 1))
def _log_theta(apply_fn, model, params, adjacency, theta_nodes):
    out = apply_fn(params, adjacency)
    mask = policy.node_mask_of(model, adjacency)
    return policy.theta_log_prob(out, theta_nodes[:, None], mask)[:, 0]


def _padded(graphs):
    n = len(graphs)
    size = max(16, 1 << (n - 1).bit_length())
    pad = np.zeros((size - n,) + graphs.shape[1:], graphs.dtype)
    return jnp.asarray(np.concatenate([graphs, pad])), n


class TrajectoryScorer:
    """log P_phi of edge-addition trajectories, batched through the network."""

    def __init__(self, apply_fn, params, num_variables, max_parents=None):
        self.apply_fn, self.params, self.d, self.max_parents = apply_fn, params, num_variables, max_parents

    def log_edges(self, graphs):
        padded, n = _padded(np.asarray(graphs, np.uint8))
        log_edges, log_stop = _log_edges(self.apply_fn, self.params, padded, self.max_parents)
        return np.asarray(log_edges, np.float64)[:n], np.asarray(log_stop, np.float64)[:n]

    def trajectories(self, edges, orders, chunk=4096):
        """log P_phi(tau) for orders [M, K] of indices into edges [K, 2]: -> [M]."""
        orders = np.asarray(orders)
        m, k = orders.shape
        graphs = np.zeros((m, k, self.d, self.d), np.uint8)
        for t in range(1, k):
            graphs[:, t] = graphs[:, t - 1]
            e = edges[orders[:, t - 1]]
            graphs[np.arange(m), t, e[:, 0], e[:, 1]] = 1
        flat = graphs.reshape(m * k, self.d, self.d)
        act = edges[orders.reshape(-1)]
        total = np.empty(m * k)
        for s in range(0, m * k, chunk):
            le, _ = self.log_edges(flat[s : s + chunk])
            total[s : s + chunk] = le[np.arange(len(le)), act[s : s + chunk, 0], act[s : s + chunk, 1]]
        return total.reshape(m, k).sum(axis=1)


def beam_search(scorer, edges, beam_size):
    """Top trajectories restricted to the edges of G: list of (order tuple, log P(tau))."""
    k = len(edges)
    beams = [((), 0.0)]
    for _ in range(k):
        graphs = np.zeros((len(beams), scorer.d, scorer.d), np.uint8)
        for b, (order, _) in enumerate(beams):
            for e in order:
                graphs[b, edges[e, 0], edges[e, 1]] = 1
        log_edges, _ = scorer.log_edges(graphs)
        candidates = []
        for b, (order, lp) in enumerate(beams):
            for e in range(k):
                if e not in order:
                    candidates.append((order + (e,), lp + log_edges[b, edges[e, 0], edges[e, 1]]))
        candidates.sort(key=lambda c: -c[1])
        beams = candidates[:beam_size]
    return beams


def log_prob_graph(scorer, graph, rng, beam_size=16, num_samples=64, max_tries=100):
    """Unbiased estimate of P_phi(G | G0), returned in log space (a float)."""
    edges = np.argwhere(np.asarray(graph) > 0)
    k = len(edges)
    if k == 0:
        return 0.0
    top = beam_search(scorer, edges, beam_size)
    log_top = logsumexp([lp for _, lp in top])
    num_total = math.factorial(k) if k <= 20 else math.inf
    if len(top) >= num_total:
        return float(log_top)  # the beam holds every trajectory: exact
    in_top = {order for order, _ in top}
    if num_total <= 5040:  # sample uniformly from the complement directly (same law as rejection)
        rest = [p for p in itertools.permutations(range(k)) if p not in in_top]
        orders = np.array([rest[i] for i in rng.integers(0, len(rest), num_samples)])
    else:
        accepted = []
        for _ in range(max_tries):
            cand = np.argsort(rng.random((num_samples, k)), axis=1)
            accepted += [c for c in cand if tuple(c) not in in_top]
            if len(accepted) >= num_samples:
                break
        orders = np.array(accepted[:num_samples])
    log_mc = logsumexp(scorer.trajectories(edges, orders)) - math.log(len(orders))
    # log(k! - |top|), without forming k! (a float overflows past k = 170)
    log_rest = math.lgamma(k + 1) + math.log1p(-math.exp(math.log(len(top)) - math.lgamma(k + 1)))
    return float(np.logaddexp(log_top, log_rest + log_mc))


def log_prob_terminating(
    apply_fn, model, params, graphs, theta, seed=0, beam_size=16, num_samples=64, max_parents=None
):
    """Estimates of log P_T(G_k, theta_k) for graphs uint8 [K, d, d], theta [K, ...] (model layout): [K]."""
    graphs = np.asarray(graphs, np.uint8)
    d = graphs.shape[-1]
    scorer = TrajectoryScorer(apply_fn, params, d, max_parents)
    rng = np.random.default_rng(seed)
    log_g = np.array([log_prob_graph(scorer, g, rng, beam_size, num_samples) for g in graphs])
    log_stop = np.concatenate([scorer.log_edges(graphs[s : s + 1024])[1] for s in range(0, len(graphs), 1024)])
    theta_nodes = np.asarray(jax.vmap(model.to_node_params)(jnp.asarray(theta, jnp.float32)))
    log_q = []
    for s in range(0, len(graphs), 1024):
        g, n = _padded(graphs[s : s + 1024])
        t = np.concatenate(
            [theta_nodes[s : s + 1024], np.zeros((len(g) - n,) + theta_nodes.shape[1:], theta_nodes.dtype)]
        )
        log_q.append(np.asarray(_log_theta(apply_fn, model, params, g, jnp.asarray(t)))[:n])
    return log_g + log_stop + np.concatenate(log_q)
