"""Vectorised DAG-building environment over a batch of B graphs, in pure JAX.

State: adjacency [B, d, d] (uint8, [b, i, j] = 1 means i -> j) and its transitive
closure [B, d, d] (closure[b, i, j] = 1 iff path i ~> j). Actions are integers in
[0, d*d]: a = i*d + j adds the edge i -> j, a = d*d is "stop". Stopping resets the
graph to the empty graph (Algorithm 1). All functions are pure and jit-able.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jspgfn.graphs import transitive_closure_jax, update_closure_jax, valid_actions_jax


class EnvState(NamedTuple):
    adjacency: jax.Array  # uint8 [B, d, d]
    closure: jax.Array  # uint8 [B, d, d]


def reset(batch_size, num_variables):
    """B empty graphs."""
    zeros = jnp.zeros((batch_size, num_variables, num_variables), dtype=jnp.uint8)
    return EnvState(zeros, zeros)


def closure_of(adjacency):
    """Transitive closure: [..., d, d] -> uint8 [..., d, d] (jspgfn.graphs.transitive_closure_jax)."""
    return transitive_closure_jax(adjacency)


def edge_mask(state, max_parents=None):
    """bool [B, d, d]: edges that can be added (no duplicate, no cycle, parent limit)."""
    return valid_actions_jax(state.adjacency, state.closure, max_parents)


def action_mask(state, max_parents=None):
    """bool [B, d*d + 1]: valid edge actions, then stop (always valid)."""
    edges = edge_mask(state, max_parents)
    b = edges.shape[0]
    return jnp.concatenate([edges.reshape(b, -1), jnp.ones((b, 1), dtype=bool)], axis=1)


def must_stop(mask_edges):
    """bool [B]: no edge can be added, so stopping is forced."""
    return ~jnp.any(mask_edges, axis=(-2, -1))


def add_edges(state, sources, targets):
    """Add edge sources[b] -> targets[b] to every graph b (assumed valid)."""
    d = state.adjacency.shape[-1]
    onehot = (
        jax.nn.one_hot(sources, d, dtype=jnp.uint8)[:, :, None]
        * jax.nn.one_hot(targets, d, dtype=jnp.uint8)[:, None, :]
    )
    adjacency = state.adjacency | onehot
    closure = jax.vmap(update_closure_jax)(state.closure, sources, targets)
    return EnvState(adjacency, closure)


def step(state, actions):
    """Apply actions [B] (int32 in [0, d*d]). Returns (next_state, is_stop bool [B]).

    Edge actions must be valid (see `action_mask`); stop resets that graph to empty.
    """
    d = state.adjacency.shape[-1]
    is_stop = actions == d * d
    safe = jnp.where(is_stop, 0, actions)
    sources, targets = safe // d, safe % d
    added = add_edges(state, sources, targets)
    keep = is_stop[:, None, None]
    adjacency = jnp.where(keep, jnp.zeros_like(added.adjacency), added.adjacency)
    closure = jnp.where(keep, jnp.zeros_like(added.closure), added.closure)
    return EnvState(adjacency, closure), is_stop
