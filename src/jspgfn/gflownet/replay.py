"""Fixed-capacity ring buffer of transitions G -> G + edge, as a pytree (pure JAX).

Only G (uint8 [C, d, d]) and the edge action (int32 [C]) are stored; G' and the
masks are recomputed in the loss. theta is never stored: it is drawn on-policy
when the loss is evaluated (appendix "Sampling distribution").

Sampling is uniform (the paper's), or prioritised (beyond the paper): with `priorities` float [C]
(the last mean |residual| of each transition, new ones at the largest so far), a transition is drawn
with probability proportional to priority ** alpha. The SubTB conditions have the same solution under
any sampling distribution of full support (section 3.3 of the paper), so no importance weights are
needed; see docs/decisions.md, "JSP-GFN beyond d=5".

With `replay_reversal` (beyond the paper) a share of each batch's states has one edge reversed
(`reverse_one_edge`).

With `replay_anchor` (beyond the paper) the prefill's transitions are also kept in a second buffer for
the whole run, and a fixed share of every batch is drawn from it (`with_recent`, `sample_mixed`). With
`backward_batch` (beyond the paper) the backward trajectories of `backward_every` go to a second buffer, and a fixed
share of every batch is drawn from it the same way.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jspgfn.graphs import transitive_closure_jax, valid_actions_jax


class Replay(NamedTuple):
    graphs: jax.Array  # uint8 [C, d, d]
    actions: jax.Array  # int32 [C]
    index: jax.Array  # int32 [], next write position
    size: jax.Array  # int32 [], number of stored transitions


def init(capacity, num_variables):
    return Replay(
        jnp.zeros((capacity, num_variables, num_variables), jnp.uint8),
        jnp.zeros((capacity,), jnp.int32),
        jnp.zeros((), jnp.int32),
        jnp.zeros((), jnp.int32),
    )


def add(replay, graphs, actions, valid):
    """Insert the transitions with valid[b] = True (graphs [B, d, d], actions [B])."""
    capacity = replay.actions.shape[0]
    valid = valid.astype(jnp.int32)
    offsets = jnp.cumsum(valid) - valid  # position among the valid ones
    positions = jnp.where(valid > 0, (replay.index + offsets) % capacity, capacity)  # OOB = dropped
    new_graphs = replay.graphs.at[positions].set(graphs.astype(jnp.uint8), mode="drop")
    new_actions = replay.actions.at[positions].set(actions.astype(jnp.int32), mode="drop")
    count = valid.sum()
    return Replay(
        new_graphs, new_actions, (replay.index + count) % capacity, jnp.minimum(replay.size + count, capacity)
    )


def sample(replay, key, batch_size):
    """Uniform sample (with replacement) of stored transitions: (graphs [B, d, d], actions [B], indices [B])."""
    idx = jax.random.randint(key, (batch_size,), 0, jnp.maximum(replay.size, 1))
    return replay.graphs[idx], replay.actions[idx], idx


def with_recent(replay, source):
    """`replay` after inserting the most recent min(source.size, C) transitions of `source`, a buffer that
    has not wrapped (its transitions at positions 0 .. size - 1, in insertion order)."""
    capacity = replay.actions.shape[0]
    positions = jnp.arange(source.actions.shape[0])
    recent = (positions < source.size) & (positions >= source.size - capacity)
    return add(replay, source.graphs, source.actions, recent)


def sample_mixed(replay, anchor, key, batch_size, anchor_size, fallback=False):
    """A uniform sample of batch_size - anchor_size transitions of `replay` followed by anchor_size of
    `anchor` (both with replacement): (graphs [B, d, d], actions [B]). anchor_size is static. fallback: while
    `anchor` is empty, its part from `replay` too (else an empty buffer would give its zero entries)."""
    graphs, actions, _ = sample(replay, key, batch_size - anchor_size)
    kept_graphs, kept_actions, _ = sample(anchor, jax.random.fold_in(key, 2), anchor_size)
    if fallback:
        more_graphs, more_actions, _ = sample(replay, jax.random.fold_in(key, 3), anchor_size)
        empty = anchor.size == 0
        kept_graphs = jnp.where(empty, more_graphs, kept_graphs)
        kept_actions = jnp.where(empty, more_actions, kept_actions)
    return jnp.concatenate([graphs, kept_graphs]), jnp.concatenate([actions, kept_actions])


def init_priorities(capacity):
    return jnp.ones((capacity,), jnp.float32)


def add_priorities(priorities, replay, valid):
    """The priorities after `add(replay, ..., valid)`: new transitions get the largest stored priority.
    priorities float [C]; replay: the buffer BEFORE the add; valid bool [B]."""
    capacity = priorities.shape[0]
    valid = valid.astype(jnp.int32)
    offsets = jnp.cumsum(valid) - valid
    positions = jnp.where(valid > 0, (replay.index + offsets) % capacity, capacity)
    stored = jnp.arange(capacity) < replay.size
    top = jnp.max(jnp.where(stored, priorities, 1.0))
    return priorities.at[positions].set(top, mode="drop")


def sample_prioritised(replay, priorities, key, batch_size, alpha):
    """Sample (with replacement) with probability proportional to priorities ** alpha among the stored
    transitions: (graphs [B, d, d], actions [B], indices [B]). O(C) per call (a cumulative sum)."""
    capacity = priorities.shape[0]
    weights = jnp.where(jnp.arange(capacity) < jnp.maximum(replay.size, 1), priorities**alpha, 0.0)
    cumulative = jnp.cumsum(weights)
    u = jax.random.uniform(key, (batch_size,)) * cumulative[-1]
    idx = jnp.minimum(jnp.searchsorted(cumulative, u, side="right"), jnp.maximum(replay.size, 1) - 1)
    return replay.graphs[idx], replay.actions[idx], idx


def update_priorities(priorities, indices, residuals, floor=1e-3):
    """Set the priorities of the sampled transitions indices [B] to their mean |residual| [B] (+ floor)."""
    return priorities.at[indices].set(jnp.abs(residuals) + floor)


def reverse_one_edge(graphs, actions, key, share, max_parents=None):
    """Replayed transitions moved to a neighbouring state (option `replay_reversal`, beyond the paper).

    For each row with probability `share`, one present edge of graphs uint8 [B, d, d], chosen uniformly, is
    reversed, where the result is a DAG (within max_parents) on which the row's action int32 [B] (an edge
    i * d + j) is still valid; the other rows are returned unchanged. The loss holds at every transition, so
    this changes only which transitions train: those one reversal away from the sampler's, which an on-policy
    replay otherwise rarely holds (the other direction of a pair the sampler has settled on).
    Returns graphs uint8 [B, d, d].
    """
    batch, d, _ = graphs.shape
    k_row, k_edge = jax.random.split(key)
    flat = graphs.reshape(batch, d * d)
    has_edge = flat.sum(axis=1) > 0
    edge = jax.random.categorical(k_edge, jnp.where(flat > 0, 0.0, -jnp.inf))  # a present edge (any row with one)
    forward = jax.nn.one_hot(edge, d * d, dtype=graphs.dtype).reshape(batch, d, d) * has_edge[:, None, None]
    reversed_graphs = graphs - forward + jnp.swapaxes(forward, 1, 2)
    closure = transitive_closure_jax(reversed_graphs)
    acyclic = ~jnp.any(jnp.diagonal(closure, axis1=1, axis2=2) > 0, axis=1)
    valid = valid_actions_jax(reversed_graphs, closure, max_parents).reshape(batch, d * d)
    action_ok = jnp.take_along_axis(valid, actions[:, None], axis=1)[:, 0]
    if max_parents is not None:
        action_ok &= jnp.all(reversed_graphs.sum(axis=1) <= max_parents, axis=1)
    share = jnp.float32(share)  # may be an int (--set replay_reversal=1)
    keep = jax.random.bernoulli(k_row, share, (batch,)) & has_edge & acyclic & action_ok
    return jnp.where(keep[:, None, None], reversed_graphs, graphs)
