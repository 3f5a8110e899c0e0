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


def move_gains(model, graph_prior, x, interventions, graphs, max_parents=None):
    """The single-edge moves of graphs uint8 [B, d, d] on x float [N, d]: (gains float [B, 3, d, d], valid bool
    [B, 3, d, d]), moves 0, 1, 2 = adding, removing, reversing edge i -> j (entry [b, m, i, j]), gains the change
    of the closed-form log R. Adding: where valid_actions_jax allows it. Removing: where the edge is present.
    Reversing: where the edge is present, no other path i ~> j exists (else j -> i closes a cycle) and node i has
    room for a parent; its gain is the removal's plus adding j -> i, whose gain is the same in G as in G - (i -> j)
    (node i's parents do not change)."""
    closure = transitive_closure_jax(graphs)
    add_ok = valid_actions_jax(graphs, closure, max_parents)
    adds = closed_form.edge_gains(model, graph_prior, x, interventions, graphs)
    removals = closed_form.removal_gains(model, graph_prior, x, interventions, graphs)
    present = graphs > 0
    other_path = jnp.einsum("bik,bkj->bij", graphs.astype(jnp.int32), closure.astype(jnp.int32)) > 0
    reverse_ok = present & ~other_path
    if max_parents is not None:
        reverse_ok &= (graphs.sum(axis=-2) < max_parents)[:, :, None]  # node i's parents
    gains = jnp.stack([adds, removals, removals + jnp.swapaxes(adds, -1, -2)], axis=1)
    return gains, jnp.stack([add_ok, present, reverse_ok], axis=1)


def apply_moves(graphs, moves):
    """graphs uint8 [B, d, d] after moves int [B] in [0, 3 d^2]: m * d^2 + i * d + j is move m (0 add, 1 remove,
    2 reverse) of edge i -> j, 3 d^2 is staying."""
    batch, d, _ = graphs.shape
    kind, edge = moves // (d * d), moves % (d * d)
    one = jax.nn.one_hot(edge, d * d, dtype=graphs.dtype).reshape(batch, d, d)
    kind = kind[:, None, None]
    added = jnp.where(kind == 0, graphs | one, graphs)
    removed = jnp.where((kind == 1) | (kind == 2), added - one, added)
    return jnp.where(kind == 2, removed + jnp.swapaxes(one, -1, -2), removed)


def local_moves(model, graph_prior, x, interventions, graphs, key, num_moves, max_parents=None):
    """num_moves (static) heat-bath moves of each graph uint8 [B, d, d]: at each, the next graph is drawn among the
    graph itself (weight 1) and its valid single-edge neighbours (weight R(G') / R(G), the closed-form marginal
    reward on x float [N, d]; `move_gains`). Returns uint8 [B, d, d]."""
    batch = graphs.shape[0]

    def move(graphs, k):
        gains, valid = move_gains(model, graph_prior, x, interventions, graphs, max_parents)
        logits = jnp.where(valid, gains, -jnp.inf).reshape(batch, -1)
        logits = jnp.concatenate([logits, jnp.zeros((batch, 1), logits.dtype)], axis=1)  # staying
        return apply_moves(graphs, jax.random.categorical(k, logits)), None

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
