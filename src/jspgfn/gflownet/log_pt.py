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


def _graphs_of(edges, orders, d):
    """Graphs holding the edges orders[:, :t] of each row: edges int [K, 2], orders int [n, t] -> uint8 [n, d, d]."""
    n, t = orders.shape
    graphs = np.zeros((n, d, d), np.uint8)
    if t:
        chosen = edges[orders.reshape(-1)]
        graphs[np.repeat(np.arange(n), t), chosen[:, 0], chosen[:, 1]] = 1
    return graphs


class TrajectoryScorer:
    """log P_phi of edge-addition trajectories, batched through the network."""

    def __init__(self, apply_fn, params, num_variables, max_parents=None, chunk=4096):
        self.apply_fn, self.params, self.d, self.max_parents = apply_fn, params, num_variables, max_parents
        self.chunk = chunk

    def log_edges(self, graphs):
        """log P(G + (i->j) | G) float64 [n, d, d] and log P(stop | G) [n], CHUNK graphs per network call."""
        graphs = np.asarray(graphs, np.uint8)
        edges, stops = [], []
        for s in range(0, max(len(graphs), 1), self.chunk):
            padded, n = _padded(graphs[s : s + self.chunk])
            log_edges, log_stop = _log_edges(self.apply_fn, self.params, padded, self.max_parents)
            edges.append(np.asarray(log_edges, np.float64)[:n])
            stops.append(np.asarray(log_stop, np.float64)[:n])
        return np.concatenate(edges)[: len(graphs)], np.concatenate(stops)[: len(graphs)]

    def trajectories(self, edges, orders):
        """log P_phi(tau) for orders [M, K] of indices into edges [K, 2]: -> [M]."""
        return self.trajectories_many([edges], [orders])[0]

    def trajectories_many(self, edge_lists, order_lists):
        """trajectories() of several graphs, their steps sharing network calls (about `chunk` graph states
        per call, so memory stays bounded): lists of [K_i, 2], [M_i, K_i] -> list of [M_i]."""
        out = [None] * len(order_lists)
        pending, size = [], 0
        for i, orders in enumerate(order_lists):
            pending.append(i)
            size += int(np.size(orders))
            if size >= self.chunk or i == len(order_lists) - 1:
                self._score_orders(edge_lists, order_lists, pending, out)
                pending, size = [], 0
        return out

    def _score_orders(self, edge_lists, order_lists, which, out):
        """out[i] = log P_phi of each order of graph i, for i in which, from one batch of graph states."""
        states = [_trajectory_states(edge_lists[i], np.asarray(order_lists[i], np.int64), self.d) for i in which]
        actions = np.concatenate([edge_lists[i][np.asarray(order_lists[i]).reshape(-1)] for i in which])
        log_edges, _ = self.log_edges(np.concatenate(states))
        per_step = log_edges[np.arange(len(actions)), actions[:, 0], actions[:, 1]]
        start = 0
        for i in which:
            m, k = np.shape(order_lists[i])
            out[i] = per_step[start : start + m * k].reshape(m, k).sum(axis=1)
            start += m * k


def _trajectory_states(edges, orders, d):
    """The graph before each step of each order, built step by step: orders [M, K] -> uint8 [M K, d, d]
    (order-major, then step)."""
    m, k = orders.shape
    graphs = np.zeros((m, k, d, d), np.uint8)
    rows = np.arange(m)
    for t in range(1, k):
        graphs[:, t] = graphs[:, t - 1]
        chosen = edges[orders[:, t - 1]]
        graphs[rows, t, chosen[:, 0], chosen[:, 1]] = 1
    return graphs.reshape(m * k, d, d)


def beam_search_many(scorer, edge_lists, beam_size):
    """Beam searches restricted to the edges of several graphs, in lockstep (one batched network call per step).

    edge_lists: list of int [K_i, 2] -> list of (orders int [B_i, K_i], log P(tau) float64 [B_i]), best first;
    candidates are ranked by log P(tau), ties kept in (beam, edge) order.
    """
    orders = [np.zeros((1, 0), np.int64) for _ in edge_lists]
    scores = [np.zeros(1) for _ in edge_lists]
    for step in range(max((len(e) for e in edge_lists), default=0)):
        live = [i for i, edges in enumerate(edge_lists) if len(edges) > step]
        graphs = np.concatenate([_graphs_of(edge_lists[i], orders[i], scorer.d) for i in live])
        log_edges, _ = scorer.log_edges(graphs)
        start = 0
        for i in live:
            edges, n = edge_lists[i], len(orders[i])
            gains = log_edges[start : start + n][:, edges[:, 0], edges[:, 1]]  # [n, K]
            start += n
            used = np.zeros(gains.shape, bool)
            used[np.arange(n)[:, None], orders[i]] = True
            flat = (scores[i][:, None] + gains).reshape(-1)
            free = np.flatnonzero(~used.reshape(-1))
            best = free[np.argsort(-flat[free], kind="stable")[:beam_size]]
            beam, edge = np.divmod(best, len(edges))
            orders[i] = np.concatenate([orders[i][beam], edge[:, None]], axis=1)
            scores[i] = flat[best]
    return list(zip(orders, scores))


def beam_search(scorer, edges, beam_size):
    """Top trajectories restricted to the edges of G: list of (order tuple, log P(tau))."""
    orders, scores = beam_search_many(scorer, [np.asarray(edges)], beam_size)[0]
    return [(tuple(int(e) for e in order), float(lp)) for order, lp in zip(orders, scores)]


def _other_orders(k, top, rng, num_samples, max_tries):
    """num_samples uniform orders of k edges outside the set `top` (tuples): int [M, k]."""
    if k <= 7:  # k! <= 5040: sample uniformly from the complement directly (same law as rejection)
        rest = [p for p in itertools.permutations(range(k)) if p not in top]
        return np.array([rest[i] for i in rng.integers(0, len(rest), num_samples)])
    accepted = []
    for _ in range(max_tries):
        cand = np.argsort(rng.random((num_samples, k)), axis=1)
        accepted += [c for c in cand if tuple(c) not in top]
        if len(accepted) >= num_samples:
            break
    return np.array(accepted[:num_samples])


def log_prob_graphs(scorer, graphs, rng, beam_size=16, num_samples=64, max_tries=100):
    """Unbiased estimates of log P_phi(G | G0) for graphs [n, d, d]: float64 [n].

    The beam searches of all graphs share their network calls, and so do the Monte Carlo trajectories;
    rng draws the orders graph after graph.
    """
    edge_lists = [np.argwhere(np.asarray(g) > 0) for g in graphs]
    tops = beam_search_many(scorer, edge_lists, beam_size)
    out = np.zeros(len(edge_lists))
    sampled, order_lists = [], []
    for i, (edges, (top_orders, top_scores)) in enumerate(zip(edge_lists, tops)):
        k = len(edges)
        if k == 0:
            continue
        out[i] = logsumexp(top_scores)
        if k <= 20 and len(top_orders) >= math.factorial(k):
            continue  # the beam holds every trajectory: exact
        top = {tuple(int(e) for e in order) for order in top_orders}
        sampled.append(i)
        order_lists.append(_other_orders(k, top, rng, num_samples, max_tries))
    log_trajectories = scorer.trajectories_many([edge_lists[i] for i in sampled], order_lists)
    for i, orders, log_tau in zip(sampled, order_lists, log_trajectories):
        k, num_top = len(edge_lists[i]), len(tops[i][0])
        log_mc = logsumexp(log_tau) - math.log(len(orders))
        # log(k! - |top|), without forming k! (a float overflows past k = 170)
        log_rest = math.lgamma(k + 1) + math.log1p(-math.exp(math.log(num_top) - math.lgamma(k + 1)))
        out[i] = np.logaddexp(out[i], log_rest + log_mc)
    return out


def log_prob_graph(scorer, graph, rng, beam_size=16, num_samples=64, max_tries=100):
    """Unbiased estimate of P_phi(G | G0), returned in log space (a float)."""
    return float(log_prob_graphs(scorer, np.asarray(graph)[None], rng, beam_size, num_samples, max_tries)[0])


def log_prob_terminating(
    apply_fn, model, params, graphs, theta, seed=0, beam_size=16, num_samples=64, max_parents=None
):
    """Estimates of log P_T(G_k, theta_k) for graphs uint8 [K, d, d], theta [K, ...] (model layout): [K]."""
    graphs = np.asarray(graphs, np.uint8)
    d = graphs.shape[-1]
    scorer = TrajectoryScorer(apply_fn, params, d, max_parents)
    rng = np.random.default_rng(seed)
    log_g = log_prob_graphs(scorer, graphs, rng, beam_size, num_samples)
    log_stop = scorer.log_edges(graphs)[1]
    theta_nodes = np.asarray(jax.vmap(model.to_node_params)(jnp.asarray(theta, jnp.float32)))
    log_q = []
    for s in range(0, len(graphs), 1024):
        g, n = _padded(graphs[s : s + 1024])
        t = np.concatenate(
            [theta_nodes[s : s + 1024], np.zeros((len(g) - n,) + theta_nodes.shape[1:], theta_nodes.dtype)]
        )
        log_q.append(np.asarray(_log_theta(apply_fn, model, params, g, jnp.asarray(t)))[:n])
    return log_g + log_stop + np.concatenate(log_q)
