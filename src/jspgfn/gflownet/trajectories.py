"""Whole trajectories of the acting environments, for the trajectory term (beyond the paper).

Each environment's trajectory from the empty graph is recorded as its edge actions; when the
environment stops, the trajectory (T = d(d-1)/2 action slots and its length K) enters a ring buffer
of `capacity` trajectories. `states_along` rebuilds the K + 1 graphs G_0 = empty, ..., G_K of a
trajectory. Pure JAX, a pytree.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp


class Trajectories(NamedTuple):
    current: jax.Array  # int32 [E, T]: the actions of each environment's trajectory so far
    current_length: jax.Array  # int32 [E]
    actions: jax.Array  # int32 [C, T]: finished trajectories (edge actions i*d + j)
    length: jax.Array  # int32 [C]: their numbers of edges
    index: jax.Array  # int32 [], next write position
    size: jax.Array  # int32 [], number stored


def max_length(num_variables):
    """The longest trajectory: a complete DAG has d(d-1)/2 edges."""
    return num_variables * (num_variables - 1) // 2


def init(num_envs, capacity, num_variables):
    t = max_length(num_variables)
    return Trajectories(
        jnp.zeros((num_envs, t), jnp.int32),
        jnp.zeros((num_envs,), jnp.int32),
        jnp.zeros((capacity, t), jnp.int32),
        jnp.zeros((capacity,), jnp.int32),
        jnp.zeros((), jnp.int32),
        jnp.zeros((), jnp.int32),
    )


def record(traj, actions, is_stop):
    """One environment step: actions int [E] were taken, is_stop bool [E] says which ended a trajectory
    (those are stored, then restart empty); the other actions are appended."""
    e, t = traj.current.shape
    capacity = traj.actions.shape[0]
    slot = jnp.minimum(traj.current_length, t - 1)
    appended = traj.current.at[jnp.arange(e), slot].set(jnp.where(is_stop, traj.current[jnp.arange(e), slot], actions))
    length = jnp.where(is_stop, traj.current_length, traj.current_length + 1)
    stop = is_stop.astype(jnp.int32)
    offsets = jnp.cumsum(stop) - stop
    positions = jnp.where(is_stop, (traj.index + offsets) % capacity, capacity)  # out of bounds: dropped
    stored_actions = traj.actions.at[positions].set(appended, mode="drop")
    stored_length = traj.length.at[positions].set(length, mode="drop")
    count = stop.sum()
    keep = ~is_stop
    return Trajectories(
        jnp.where(keep[:, None], appended, 0),
        jnp.where(keep, length, 0),
        stored_actions,
        stored_length,
        (traj.index + count) % capacity,
        jnp.minimum(traj.size + count, capacity),
    )


def sample(traj, key, batch_size):
    """Uniform sample (with replacement) of stored trajectories: (actions int32 [K, T], length int32 [K]).
    Before any trajectory has ended, the slots hold empty trajectories (length 0)."""
    idx = jax.random.randint(key, (batch_size,), 0, jnp.maximum(traj.size, 1))
    return traj.actions[idx], traj.length[idx]


def states_along(actions, length, num_variables):
    """The graphs G_0 = empty, G_1, ..., G_T after each prefix of each trajectory, frozen after its
    length: actions int [K, T], length int [K] -> uint8 [K, T + 1, d, d]."""
    k, t = actions.shape
    d = num_variables
    taken = jnp.arange(t)[None, :] < length[:, None]  # [K, T]
    onehot = jax.nn.one_hot(actions, d * d, dtype=jnp.int32) * taken[..., None]
    prefix = jnp.cumsum(onehot, axis=1)  # [K, T, d*d]
    states = jnp.concatenate([jnp.zeros((k, 1, d * d), jnp.int32), prefix], axis=1)
    return states.reshape(k, t + 1, d, d).astype(jnp.uint8)
