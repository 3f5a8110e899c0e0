"""replay_reversal (beyond the paper): a share of each batch's states with one edge reversed."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from jspgfn.errors import JspgfnError
from jspgfn.gflownet.presets import get_preset
from jspgfn.gflownet.replay import reverse_one_edge
from jspgfn.graphs import is_dag


def _batch(edges, action, d=4, size=4000):
    graph = np.zeros((d, d), np.uint8)
    for i, j in edges:
        graph[i, j] = 1
    graphs = jnp.asarray(np.repeat(graph[None], size, axis=0))
    actions = jnp.full((size,), action[0] * d + action[1], jnp.int32)
    return graph, graphs, actions


def _changed(graph, out):
    return np.any(np.asarray(out) != graph[None], axis=(1, 2))


def test_each_edge_is_reversed_uniformly():
    graph, graphs, actions = _batch([(0, 1), (2, 3)], (0, 2))
    out = np.asarray(reverse_one_edge(graphs, actions, jax.random.PRNGKey(0), 1))  # an int, as --set reads 1
    assert np.all(_changed(graph, out))  # both reversals keep a DAG and the action valid
    first = (out[:, 1, 0] == 1) & (out[:, 0, 1] == 0) & (out[:, 2, 3] == 1)
    second = (out[:, 3, 2] == 1) & (out[:, 2, 3] == 0) & (out[:, 0, 1] == 1)
    assert np.all(first ^ second)  # exactly one edge reversed, nothing else moved
    assert stats.binomtest(int(first.sum()), len(out), 0.5).pvalue > 1e-3


def test_a_reversal_that_makes_a_cycle_is_not_taken():
    graph, graphs, actions = _batch([(0, 1), (1, 2), (0, 2)], (0, 3))  # reversing 0->2 closes 0->1->2->0
    out = np.asarray(reverse_one_edge(graphs, actions, jax.random.PRNGKey(1), 1.0))
    assert all(is_dag(g) for g in out[:200])
    changed = _changed(graph, out)
    assert not np.any(out[:, 2, 0])
    assert stats.binomtest(int(changed.sum()), len(out), 2 / 3).pvalue > 1e-3


def test_a_reversal_that_makes_the_action_invalid_is_not_taken():
    # reversing 0->1 gives 2->1->0, where the action 0->2 closes a cycle; reversing 2->1 keeps it valid
    graph, graphs, actions = _batch([(0, 1), (2, 1)], (0, 2))
    out = np.asarray(reverse_one_edge(graphs, actions, jax.random.PRNGKey(2), 1.0))
    assert not np.any(out[:, 1, 0])
    changed = _changed(graph, out)
    assert np.all(out[changed, 1, 2] == 1)
    assert stats.binomtest(int(changed.sum()), len(out), 0.5).pvalue > 1e-3


def test_the_share_and_empty_graphs():
    graph, graphs, actions = _batch([(0, 1), (2, 3)], (0, 2))
    out = reverse_one_edge(graphs, actions, jax.random.PRNGKey(3), 0.25)
    assert stats.binomtest(int(_changed(graph, out).sum()), len(out), 0.25).pvalue > 1e-3
    empty = jnp.zeros((8, 4, 4), jnp.uint8)
    np.testing.assert_array_equal(np.asarray(reverse_one_edge(empty, actions[:8], jax.random.PRNGKey(4), 1.0)), 0)


def test_max_parents_is_kept():
    # action 2->3; reversing 0->1 gives node 0 the parents {1, 2, 3}, beyond max_parents = 2; reversing 2->0 makes
    # the action close 3->0->2->3; only reversing 3->0 is left
    graph, graphs, actions = _batch([(0, 1), (2, 0), (3, 0)], (2, 3))
    out = np.asarray(reverse_one_edge(graphs, actions, jax.random.PRNGKey(5), 1.0, max_parents=2))
    assert np.all(out.sum(axis=1) <= 2)
    changed = _changed(graph, out)
    assert np.all(out[changed, 0, 3] == 1) and not np.any(out[~changed, 0, 3])
    assert stats.binomtest(int(changed.sum()), len(out), 1 / 3).pvalue > 1e-3


@pytest.mark.parametrize("value", [-0.1, 1.5])
def test_the_share_is_checked(value):
    with pytest.raises(JspgfnError, match="replay_reversal"):
        get_preset("smoke", replay_reversal=value)


def test_a_run_trains_with_it(tmp_path):
    from jspgfn.cli import main as cli_main
    from jspgfn.gflownet.train import train

    data = tmp_path / "d4"
    assert cli_main(["generate", "--graph", "er1", "--model", "linear", "--d", "4", "--n", "30", "--seed", "3",
                     "--out", str(data)]) == 0  # fmt: skip
    tiny = {"num_iterations": 20, "iterations_per_dispatch": 10, "prefill": 20, "batch_size": 8, "num_envs": 2,
            "num_theta_samples": 2, "replay_capacity": 500, "replay_reversal": 0.5}  # fmt: skip
    _, state, info = train(data, "lingauss", "smoke", 0, tmp_path / "run", overrides=tiny, progress=False)
    assert info["iteration"] == 20
    assert all(np.all(np.isfinite(np.asarray(x))) for x in jax.tree_util.tree_leaves(state.params))
