"""Fixed-capacity ring buffer of transitions G -> G + edge, as a pytree (pure JAX).

Only G (uint8 [C, d, d]) and the edge action (int32 [C]) are stored; G' and the
masks are recomputed in the loss. theta is never stored: it is drawn on-policy
when the loss is evaluated (appendix "Sampling distribution").
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp


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
    """Uniform sample (with replacement) of stored transitions: (graphs [B, d, d], actions [B])."""
    idx = jax.random.randint(key, (batch_size,), 0, jnp.maximum(replay.size, 1))
    return replay.graphs[idx], replay.actions[idx]
