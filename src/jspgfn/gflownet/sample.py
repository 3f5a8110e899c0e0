"""Sampling from a trained JSP-GFN: graphs only (the marginal over G) or pairs (G, theta).

Every graph is built from the empty graph by following P_phi(G' | G) until "stop"
(forced when no edge can be added); theta then follows P_phi(theta | G, stop).
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jspgfn.gflownet import env as envlib
from jspgfn.gflownet import policy


def policy_step(apply_fn, params, state, done, key, max_parents):
    """One step of P_phi for a batch of trajectories (traceable).

    state: EnvState [B, d, d]; done bool [B] (trajectories that have stopped keep their graph).
    Returns (next state, done after the step, actions int32 [B] (d*d = stop), log P(stop | state) [B],
    log P_phi(action | state) [B], 0 where the trajectory had stopped before).
    """
    d = state.adjacency.shape[-1]
    out = apply_fn(params, state.adjacency)
    emask = envlib.edge_mask(state, max_parents)
    logp = policy.action_log_probs(out["stop_logit"], out["edge_logits"], emask)
    amask = envlib.action_mask(state, max_parents)
    actions = jax.random.categorical(key, jnp.where(amask, logp, -jnp.inf)).astype(jnp.int32)
    log_taken = jnp.where(done, 0.0, jnp.take_along_axis(logp, actions[:, None], axis=1)[:, 0])
    actions = jnp.where(done, d * d, actions)
    safe = jnp.where(actions == d * d, 0, actions)
    added = envlib.add_edges(state, safe // d, safe % d)
    stop = done | (actions == d * d)
    keep = stop[:, None, None]
    state = envlib.EnvState(
        jnp.where(keep, state.adjacency, added.adjacency), jnp.where(keep, state.closure, added.closure)
    )
    return state, stop, actions, logp[:, -1], log_taken


@functools.partial(jax.jit, static_argnums=(0, 3, 4, 5))
def sample_trajectories_chunk(apply_fn, params, key, num, num_variables, max_parents):
    """num trajectories, each from the empty graph by P_phi(G' | G) until stop (jitted): (graphs uint8
    [num, d, d], log P_F(tau) float32 [num], the log-probability of each trajectory's actions, its stop included)."""
    d = num_variables

    def body(carry, k):
        state, stop, log_pf = carry
        state, stop, _, _, log_taken = policy_step(apply_fn, params, state, stop, k, max_parents)
        return (state, stop, log_pf + log_taken), None

    init = (envlib.reset(num, d), jnp.zeros((num,), bool), jnp.zeros((num,), jnp.float32))
    (state, _, log_pf), _ = jax.lax.scan(body, init, jax.random.split(key, d * (d - 1) // 2 + 1))
    return state.adjacency, log_pf


def sample_graphs_chunk(apply_fn, params, key, num, num_variables, max_parents):
    """num graphs uint8 [num, d, d] of `sample_trajectories_chunk` (jitted; the batch is one array, so callers
    inside jit, e.g. VBG's moment estimates, use this directly)."""
    return sample_trajectories_chunk(apply_fn, params, key, num, num_variables, max_parents)[0]


def sample_trajectories(apply_fn, params, key, num, num_variables, max_parents=None, chunk=1024):
    """num trajectories of P_phi from the empty graph: (graphs uint8 numpy [num, d, d], log P_F(tau) float64 [num],
    the log-probability of the trajectory's actions, its stop included). With the uniform backward policy,
    log P_B(tau | G) = -log |G|!, and log R(G) + log P_B(tau | G) - log P_F(tau) is an importance weight of G
    against the reward, exact in expectation over tau (benchmarks/importance_weights.py)."""
    graphs, log_pf = [], []
    for i, k in enumerate(jax.random.split(key, -(-num // chunk))):
        size = min(chunk, num - i * chunk)
        g, lp = sample_trajectories_chunk(
            apply_fn, params, k, chunk if num > chunk else size, num_variables, max_parents
        )
        graphs.append(np.asarray(g)[:size])
        log_pf.append(np.asarray(lp, np.float64)[:size])
    return np.concatenate(graphs).astype(np.uint8), np.concatenate(log_pf)


def sample_graphs(apply_fn, params, key, num, num_variables, max_parents=None, chunk=1024):
    """num graphs from the GFlowNet's marginal over G: uint8 numpy [num, d, d] (`sample_trajectories`' graphs)."""
    return sample_trajectories(apply_fn, params, key, num, num_variables, max_parents, chunk)[0]


@functools.partial(jax.jit, static_argnums=(0, 1))
def _theta_chunk(apply_fn, model, params, key, graphs):
    out = apply_fn(params, graphs)
    mask = policy.node_mask_of(model, graphs)
    theta_nodes = policy.sample_theta(key, out, mask, 1)[:, 0]  # [n, d, P]
    return jax.vmap(model.from_node_params)(theta_nodes)


def sample_theta_given(apply_fn, model, params, key, graphs, chunk=1024):
    """theta ~ P_phi(theta | G, stop) for each graph: numpy, the model's layout [K, ...]."""
    res = []
    graphs = np.asarray(graphs, np.uint8)
    for i, k in enumerate(jax.random.split(key, -(-len(graphs) // chunk))):
        part = graphs[i * chunk : (i + 1) * chunk]
        pad = (chunk if len(graphs) > chunk else len(part)) - len(part)
        padded = np.concatenate([part, np.zeros((pad,) + part.shape[1:], np.uint8)]) if pad else part
        res.append(np.asarray(_theta_chunk(apply_fn, model, params, k, jnp.asarray(padded)))[: len(part)])
    return np.concatenate(res, axis=0)


def sample_joint(apply_fn, model, params, key, num, num_variables, max_parents=None):
    """num pairs (G, theta) ~ P_phi^T: (graphs uint8 [K, d, d], theta [K, ...] model layout)."""
    k_g, k_t = jax.random.split(key)
    graphs = sample_graphs(apply_fn, params, k_g, num, num_variables, max_parents)
    return graphs, sample_theta_given(apply_fn, model, params, k_t, graphs)
