"""Backward trajectories from the sampler's graphs moved by the closed-form score (option `backward_every`,
beyond the paper; linear Gaussian only).

Every `backward_every` iterations the last graph each environment ended on makes `backward_moves` local moves of a
heat-bath chain on the closed-form marginal reward (`local_moves`: one of staying, adding, removing or reversing an
edge, each with weight R(G') / R(G)), and a uniformly random order of the result's edges gives a trajectory from the
empty graph to it whose transitions go into the replay (`backward_transitions`). The conditions the loss fits hold
at every transition, so this changes only which ones train: those leading to graphs next to the sampler's whose
reward is as high, which an on-policy replay does not hold when the sampler has settled on one side (the direction
of a pair the posterior leaves open: docs/jspgfn-beyond-d5.md, thirty-sixth session). The chain need not be exact:
it only picks graphs to train on.
"""

import jax
import jax.numpy as jnp

from jspgfn.gflownet import closed_form
from jspgfn.graphs import transitive_closure_jax, valid_actions_jax


def _one_hot_edges(d):
    """uint8 [d*d, d, d]: the graph with the single edge k = i * d + j, for every k."""
    return jnp.eye(d * d, dtype=jnp.uint8).reshape(d * d, d, d)


def neighbours(graphs, max_parents=None):
    """Every single-edge move of graphs uint8 [B, d, d]: (added, removed, reversed), each uint8 [B, d*d, d, d] (the
    graph with edge k added, removed, or reversed), and their validity bool [B, d*d] each: an addition where
    valid_actions_jax allows it, a removal where the edge is present, a reversal where the edge is present and the
    result a DAG within max_parents."""
    batch, d, _ = graphs.shape
    one = _one_hot_edges(d)[None]  # [1, K, d, d]
    present = graphs.reshape(batch, d * d) > 0
    closure = transitive_closure_jax(graphs)
    add_ok = valid_actions_jax(graphs, closure, max_parents).reshape(batch, d * d)
    base = graphs[:, None]
    added = jnp.where(add_ok[:, :, None, None], base | one, base)
    removed = jnp.where(present[:, :, None, None], base - one, base)
    reversed_ = jnp.where(present[:, :, None, None], removed + jnp.swapaxes(one, -1, -2), base)
    rev_closure = transitive_closure_jax(reversed_.reshape(batch * d * d, d, d))
    acyclic = ~jnp.any(jnp.diagonal(rev_closure, axis1=1, axis2=2) > 0, axis=1).reshape(batch, d * d)
    rev_ok = present & acyclic
    if max_parents is not None:
        rev_ok &= jnp.all(reversed_.sum(axis=-2) <= max_parents, axis=-1)
    return (added, removed, reversed_), (add_ok, present, rev_ok)


def local_moves(model, graph_prior, x, interventions, graphs, key, num_moves, max_parents=None):
    """num_moves (static) heat-bath moves of each graph uint8 [B, d, d]: at each, the next graph is drawn among the
    graph itself (weight 1) and its valid single-edge neighbours (weight R(G') / R(G), the closed-form marginal
    reward on x float [N, d]). Returns uint8 [B, d, d]."""
    batch, d, _ = graphs.shape

    def move(graphs, k):
        moved, valid = neighbours(graphs, max_parents)
        candidates = jnp.concatenate(moved, axis=1)  # [B, 3K, d, d]
        ok = jnp.concatenate(valid, axis=1)  # [B, 3K]
        base = closed_form.graph_gains(model, graph_prior, x, interventions, graphs)  # [B]
        flat = candidates.reshape(batch * 3 * d * d, d, d)
        scores = closed_form.graph_gains(model, graph_prior, x, interventions, flat).reshape(batch, 3 * d * d)
        logits = jnp.where(ok, scores - base[:, None], -jnp.inf)
        logits = jnp.concatenate([logits, jnp.zeros((batch, 1), logits.dtype)], axis=1)  # staying
        pick = jax.random.categorical(k, logits)
        everything = jnp.concatenate([candidates, graphs[:, None]], axis=1)
        return jnp.take_along_axis(everything, pick[:, None, None, None], axis=1)[:, 0], None

    graphs, _ = jax.lax.scan(move, graphs, jax.random.split(key, num_moves))
    return graphs


def backward_transitions(graphs, key):
    """The transitions of a uniformly random trajectory from the empty graph to each of graphs uint8 [B, d, d]
    (its edges added in a uniformly random order: the uniform backward policy's trajectory, read forward):
    (states uint8 [B * T, d, d], actions int32 [B * T] (edge i * d + j), valid bool [B * T]), T = d (d - 1) / 2,
    row b * T + t the t-th transition of graph b, valid for t < |G_b|."""
    batch, d, _ = graphs.shape
    steps = d * (d - 1) // 2
    flat = graphs.reshape(batch, d * d) > 0
    noise = jnp.where(flat, jax.random.uniform(key, (batch, d * d)), 2.0)  # absent edges after the present ones
    order = jnp.argsort(noise, axis=1)  # [B, K]: the edges in the order they are added
    rank = jnp.argsort(order, axis=1)  # [B, K]: when each edge is added
    t = jnp.arange(steps)
    states = flat[:, None, :] & (rank[:, None, :] < t[None, :, None])  # [B, T, K]
    valid = t[None, :] < flat.sum(axis=1)[:, None]
    return (
        states.reshape(batch * steps, d, d).astype(jnp.uint8),
        order[:, :steps].reshape(-1).astype(jnp.int32),
        valid.reshape(-1),
    )
