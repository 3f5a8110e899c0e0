"""JSP-GFN environment: masks and closures against the numpy reference (jspgfn.graphs)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jspgfn.gflownet import env as envlib
from jspgfn.gflownet import policy
from jspgfn.graphs import is_dag, transitive_closure


def _random_rollout(d, batch, steps, seed, max_parents=None):
    """Random valid actions; yields (state, numpy adjacency) after every step."""
    rng = np.random.default_rng(seed)
    state = envlib.reset(batch, d)
    step = jax.jit(envlib.step)
    for _ in range(steps):
        mask = np.asarray(envlib.action_mask(state, max_parents))
        actions = np.array(
            [rng.choice(np.flatnonzero(m[:-1])) if m[:-1].any() and rng.random() < 0.9 else d * d for m in mask],
            dtype=np.int32,
        )
        state, _ = step(state, jnp.asarray(actions))
        yield state


@pytest.mark.parametrize("d", [3, 5, 8])
def test_closure_and_mask_match_numpy(d):
    for state in _random_rollout(d, batch=6, steps=30, seed=d):
        adj = np.asarray(state.adjacency)
        assert is_dag(adj).all()
        np.testing.assert_array_equal(np.asarray(state.closure), transitive_closure(adj))
        np.testing.assert_array_equal(np.asarray(envlib.closure_of(state.adjacency)), transitive_closure(adj))
        mask = np.asarray(envlib.edge_mask(state))
        for b in range(adj.shape[0]):
            for i in range(d):
                for j in range(d):
                    g = adj[b].copy()
                    ok = i != j and g[i, j] == 0
                    if ok:
                        g[i, j] = 1
                        ok = bool(is_dag(g))
                    assert mask[b, i, j] == ok


def test_max_parents():
    d = 5
    for state in _random_rollout(d, batch=4, steps=20, seed=1, max_parents=2):
        adj = np.asarray(state.adjacency)
        assert adj.sum(axis=1).max() <= 2  # parents of each node, per graph


def test_stop_resets_and_is_forced_on_complete_graph():
    d = 4
    full = np.triu(np.ones((d, d), np.uint8), k=1)[None]
    state = envlib.EnvState(jnp.asarray(full), jnp.asarray(transitive_closure(full)))
    emask = envlib.edge_mask(state)
    assert not np.asarray(emask).any()
    assert bool(envlib.must_stop(emask)[0])
    log_stop, log_edges = policy.log_policy_edges(jnp.array([-5.0]), jnp.zeros((1, d, d)), emask)
    assert float(log_stop[0]) == 0.0  # forced stop: probability 1 whatever the logit
    assert np.all(np.asarray(log_edges) < -1e8)
    new, is_stop = envlib.step(state, jnp.array([d * d], jnp.int32))
    assert bool(is_stop[0]) and int(new.adjacency.sum()) == 0 and int(new.closure.sum()) == 0
