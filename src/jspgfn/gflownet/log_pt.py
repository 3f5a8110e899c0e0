"""Unbiased estimate of log P_T(G, theta) (appendix D.3.2).

P_T(G, theta) = P_phi(G | G0) P_phi(stop | G) q(theta | G), where P_phi(G | G0) sums
P_phi(tau) over the K! orders tau in which the K edges of G can be added. Estimate:

  P(G | G0) ~= sum_{tau in top} P(tau) + (K! - |top|) / M * sum_m P(tau_m)

`top` = trajectories found by a beam search (beam B) whose actions are restricted
to edges of G; tau_m = M uniformly random orders (uniform backward trajectories)
outside `top` (rejection sampling). Unbiased; exact when K! <= B. Beyond the paper, proposal="mixture"
draws half the orders from the policy itself (see `log_prob_graphs`); `log_prob_graph_exact` sums all
orders by a dynamic program over edge subsets, for checks on graphs of up to ~16 edges.
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

    def trajectories_many(self, edge_lists, order_lists, with_log_z=False):
        """trajectories() of several graphs, their steps sharing network calls (about `chunk` graph states
        per call, so memory stays bounded): lists of [K_i, 2], [M_i, K_i] -> list of [M_i].

        with_log_z: also return, per order, sum_t log Z_t with Z_t = the sum of P_F(e | G_t) over the edges
        of G not yet added at step t (list of [M_i]); log P(tau) - sum_t log Z_t is the log-density of the
        order under the policy restricted to G's edges (`_policy_orders`)."""
        out, out_z = [None] * len(order_lists), [None] * len(order_lists)
        pending, size = [], 0
        for i, orders in enumerate(order_lists):
            pending.append(i)
            size += int(np.size(orders))
            if size >= self.chunk or i == len(order_lists) - 1:
                self._score_orders(edge_lists, order_lists, pending, out, out_z if with_log_z else None)
                pending, size = [], 0
        return (out, out_z) if with_log_z else out

    def _score_orders(self, edge_lists, order_lists, which, out, out_z):
        """out[i] = log P_phi of each order of graph i (and out_z[i] its sum_t log Z_t unless out_z is None),
        for i in which, from one batch of graph states."""
        states = [_trajectory_states(edge_lists[i], np.asarray(order_lists[i], np.int64), self.d) for i in which]
        actions = np.concatenate([edge_lists[i][np.asarray(order_lists[i]).reshape(-1)] for i in which])
        log_edges, _ = self.log_edges(np.concatenate(states))
        per_step = log_edges[np.arange(len(actions)), actions[:, 0], actions[:, 1]]
        start = 0
        for i, state in zip(which, states):
            m, k = np.shape(order_lists[i])
            edges, block = edge_lists[i], slice(start, start + m * k)
            out[i] = per_step[block].reshape(m, k).sum(axis=1)
            if out_z is not None:
                remaining = state[:, edges[:, 0], edges[:, 1]] == 0  # [M K, K]
                log_z = logsumexp(np.where(remaining, log_edges[block][:, edges[:, 0], edges[:, 1]], -np.inf), axis=1)
                out_z[i] = log_z.reshape(m, k).sum(axis=1)
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


def log_prob_graphs(scorer, graphs, rng, beam_size=16, num_samples=64, max_tries=100, proposal="uniform"):
    """Unbiased estimates of log P_phi(G | G0) for graphs [n, d, d]: float64 [n].

    P(G | G0) = the sum over the beam's top trajectories + an estimate of the sum over the others, from
    num_samples orders drawn by `proposal`:
      "uniform" (the paper's, appendix D.3.2): uniform orders outside the top, scaled by (K! - |top|) / M;
      "mixture" (beyond the paper): half uniform orders outside the top, half orders drawn from the forward
        policy restricted to G's edges (`_policy_orders`), combined by multiple importance sampling (the
        balance heuristic: each order weighted by P(tau) / (M_u u(tau) + M_p q(tau)), orders of the top
        counting 0). Uniform orders are the right proposal where the policy is consistent (P(tau) equal
        for every order); the policy proposal covers the orders a policy favours, which uniform orders
        miss on dense graphs (at K = 190 the uniform estimate was 500 nats low; docs/decisions.md).
    Both are unbiased in probability; in log space both err low. The beam searches of all graphs share
    their network calls, and so do the Monte Carlo trajectories; rng draws the orders graph after graph.
    """
    if proposal not in ("uniform", "mixture"):
        raise ValueError(f"proposal must be 'uniform' or 'mixture', got {proposal!r}")
    edge_lists = [np.argwhere(np.asarray(g) > 0) for g in graphs]
    tops = beam_search_many(scorer, edge_lists, beam_size)
    out = np.zeros(len(edge_lists))
    sampled, top_sets = [], []
    for i, (edges, (top_orders, top_scores)) in enumerate(zip(edge_lists, tops)):
        k = len(edges)
        if k == 0:
            continue
        out[i] = logsumexp(top_scores)
        if k <= 20 and len(top_orders) >= math.factorial(k):
            continue  # the beam holds every trajectory: exact
        sampled.append(i)
        top_sets.append({tuple(int(e) for e in order) for order in top_orders})
    num_uniform = num_samples if proposal == "uniform" else max(1, num_samples // 2)
    order_lists = [
        _other_orders(len(edge_lists[i]), top, rng, num_uniform, max_tries) for i, top in zip(sampled, top_sets)
    ]
    sampled_edges = [edge_lists[i] for i in sampled]
    # log(K! - |top|), without forming K! (a float overflows past K = 170)
    log_rest = [
        math.lgamma(len(e) + 1) + math.log1p(-math.exp(math.log(len(tops[i][0])) - math.lgamma(len(e) + 1)))
        for i, e in zip(sampled, sampled_edges)
    ]
    num_policy = num_samples - num_uniform
    if proposal == "uniform" or num_policy == 0:  # a mixture of one order is the uniform estimate
        log_trajectories = scorer.trajectories_many(sampled_edges, order_lists)
        for i, rest, orders, log_tau in zip(sampled, log_rest, order_lists, log_trajectories):
            out[i] = np.logaddexp(out[i], rest + logsumexp(log_tau) - math.log(len(orders)))
        return out
    log_tau_u, log_z_u = scorer.trajectories_many(sampled_edges, order_lists, with_log_z=True)
    drawn = _policy_orders(scorer, sampled_edges, rng, num_policy)
    for n, (i, (orders, log_tau_p, log_w_p)) in enumerate(zip(sampled, drawn)):
        outside = np.array([tuple(int(e) for e in order) not in top_sets[n] for order in orders])
        log_p = np.concatenate([log_tau_u[n], np.where(outside, log_tau_p, -np.inf)])
        log_q = np.concatenate([log_tau_u[n] - log_z_u[n], log_tau_p - log_w_p])  # the policy's density
        # balance heuristic: M_u u(tau) + M_p q(tau), u = 1 / (K! - |top|) on orders outside the top
        den = np.logaddexp(math.log(len(order_lists[n])) - log_rest[n], math.log(num_policy) + log_q)
        out[i] = np.logaddexp(out[i], logsumexp(log_p - den))
    return out


def _policy_orders(scorer, edge_lists, rng, num_samples):
    """num_samples orders per graph drawn from the forward policy restricted to the graph's edges.

    Each step draws the next edge e_t with q(e_t | G_t) = P_F(e_t | G_t) / Z_t, Z_t = the sum of P_F(e | G_t)
    over G's edges not yet added, so P_phi(tau) / q(tau) = prod_t Z_t. All graphs advance in lockstep (one
    batched network call per step). Returns a list of (orders int [M, K_i], log P(tau) float64 [M],
    sum_t log Z_t = log P(tau) / q(tau) float64 [M]).
    """
    m = num_samples
    orders = [np.zeros((m, len(e)), np.int64) for e in edge_lists]
    log_w = [np.zeros(m) for _ in edge_lists]
    log_p = [np.zeros(m) for _ in edge_lists]
    used = [np.zeros((m, len(e)), bool) for e in edge_lists]
    current = [np.zeros((m, scorer.d, scorer.d), np.uint8) for _ in edge_lists]
    rows = np.arange(m)
    for step in range(max((len(e) for e in edge_lists), default=0)):
        live = [i for i, edges in enumerate(edge_lists) if len(edges) > step]
        log_edges, _ = scorer.log_edges(np.concatenate([current[i] for i in live]))
        for j, i in enumerate(live):
            edges = edge_lists[i]
            logits = np.where(used[i], -np.inf, log_edges[j * m : (j + 1) * m][:, edges[:, 0], edges[:, 1]])
            log_z = logsumexp(logits, axis=1)  # [M]
            choice = np.argmax(logits + rng.gumbel(size=logits.shape), axis=1)  # Gumbel-max: a draw of q
            log_w[i] += log_z
            log_p[i] += logits[rows, choice]
            orders[i][:, step] = choice
            used[i][rows, choice] = True
            current[i][rows, edges[choice, 0], edges[choice, 1]] = 1
    return list(zip(orders, log_p, log_w))


def log_prob_graph_exact(scorer, graph, max_edges=16):
    """log P_phi(G | G0) exactly, by a dynamic program over the 2^K subsets of G's K edges (every subset of a
    DAG's edges is a DAG): F(S) = sum over e in S of F(S - e) P_F(e | S - e), F({}) = 1. For checking the
    estimators on graphs of up to max_edges edges (2^K network evaluations)."""
    edges = np.argwhere(np.asarray(graph) > 0)
    k = len(edges)
    if k > max_edges:
        raise ValueError(f"{k} edges: the exact sum needs 2^{k} graph states (max_edges={max_edges})")
    subsets = np.arange(1 << k)
    bits = ((subsets[:, None] >> np.arange(k)) & 1).astype(bool)  # [2^K, K]
    states = np.zeros((len(subsets), scorer.d, scorer.d), np.uint8)
    for e, (i, j) in enumerate(edges):
        states[bits[:, e], i, j] = 1
    log_step = scorer.log_edges(states)[0][:, edges[:, 0], edges[:, 1]]  # [2^K, K]: log P_F(S + e | S)
    log_f = np.full(len(subsets), -np.inf)
    log_f[0] = 0.0
    for s in subsets[np.argsort(bits.sum(axis=1), kind="stable")][1:]:
        parents = s ^ (1 << np.flatnonzero(bits[s]))
        log_f[s] = logsumexp(log_f[parents] + log_step[parents, np.flatnonzero(bits[s])])
    return float(log_f[-1])


def log_prob_graph(scorer, graph, rng, beam_size=16, num_samples=64, max_tries=100, proposal="uniform"):
    """Unbiased estimate of P_phi(G | G0), returned in log space (a float)."""
    return float(log_prob_graphs(scorer, np.asarray(graph)[None], rng, beam_size, num_samples, max_tries, proposal)[0])


def log_prob_terminating(
    apply_fn,
    model,
    params,
    graphs,
    theta,
    seed=0,
    beam_size=16,
    num_samples=64,
    max_parents=None,
    proposal="uniform",
):
    """Estimates of log P_T(G_k, theta_k) for graphs uint8 [K, d, d], theta [K, ...] (model layout): [K].
    proposal: of the Monte Carlo orders, see `log_prob_graphs`."""
    graphs = np.asarray(graphs, np.uint8)
    d = graphs.shape[-1]
    scorer = TrajectoryScorer(apply_fn, params, d, max_parents)
    rng = np.random.default_rng(seed)
    log_g = log_prob_graphs(scorer, graphs, rng, beam_size, num_samples, proposal=proposal)
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
