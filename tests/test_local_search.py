"""backward_every (beyond the paper): backward trajectories from the sampler's graphs after local moves by the
closed-form score (gflownet/local_search.py)."""

import dataclasses
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from jspgfn.conjugate import log_marginal_likelihood_graphs
from jspgfn.errors import JspgfnError
from jspgfn.gflownet.local_search import apply_moves, backward_transitions, local_moves, move_gains
from jspgfn.gflownet.presets import get_preset
from jspgfn.graphs import is_dag
from jspgfn.models import get_model
from jspgfn.models.graph_prior import get_graph_prior


def _graph(edges, d):
    graph = np.zeros((d, d), np.uint8)
    for i, j in edges:
        graph[i, j] = 1
    return graph


def test_backward_transitions_build_the_graph_in_a_uniform_order():
    d = 4
    graph = _graph([(0, 1), (1, 2), (0, 3)], d)
    graphs = jnp.asarray(np.repeat(graph[None], 3000, axis=0))
    states, actions, valid = (np.asarray(a) for a in backward_transitions(graphs, jax.random.PRNGKey(0)))
    steps = d * (d - 1) // 2
    states, actions, valid = states.reshape(3000, steps, d, d), actions.reshape(3000, steps), valid.reshape(3000, steps)
    assert np.all(valid[:, :3]) and not np.any(valid[:, 3:])
    orders = []
    for b in range(3000):
        current = np.zeros((d, d), np.uint8)
        for t in range(3):
            np.testing.assert_array_equal(states[b, t], current)  # each state is the previous one plus its action
            i, j = divmod(int(actions[b, t]), d)
            assert graph[i, j] == 1 and current[i, j] == 0
            current[i, j] = 1
        np.testing.assert_array_equal(current, graph)  # the trajectory ends on the graph
        orders.append(tuple(actions[b, :3]))
    counts = [orders.count(order) for order in itertools.permutations(sorted(set(orders[0])))]
    assert stats.chisquare(counts).pvalue > 1e-3  # the 3! orders equally likely


def test_the_empty_graph_gives_no_transition():
    _, _, valid = backward_transitions(jnp.zeros((5, 3, 3), jnp.uint8), jax.random.PRNGKey(1))
    assert not np.any(np.asarray(valid))


def _brute_force_moves(graph, max_parents=None):
    """{(move, i, j): neighbour} of every valid single-edge move, by enumeration."""
    d = len(graph)
    out = {}
    for i in range(d):
        for j in range(d):
            if i == j:
                continue
            moved = graph.copy()
            if graph[i, j]:
                moved[i, j] = 0
                out[(1, i, j)] = moved.copy()
                moved[j, i] = 1
                kind = 2
            else:
                moved[i, j] = 1
                kind = 0
            if is_dag(moved) and (max_parents is None or moved.sum(axis=0).max() <= max_parents):
                out[(kind, i, j)] = moved
    return out


@pytest.mark.parametrize("max_parents", [None, 2])
def test_move_gains_are_the_reward_changes_of_every_valid_move(max_parents):
    """move_gains against enumeration: the valid moves are exactly the single-edge changes that leave a DAG (within
    max_parents), and each gain is the change of conjugate.py's float64 log P(D | G) + log P(G)."""
    rng = np.random.default_rng(4)
    d, n = 5, 40
    x = rng.normal(size=(n, d)) * rng.uniform(0.5, 2.0, size=d)
    x[:, 2] += 0.9 * x[:, 0] - 0.4 * x[:, 1]
    x[:, 4] += 0.7 * x[:, 2]
    model = get_model("lingauss", obs_var=0.3, prior_mean=0.2, prior_var=1.5)
    prior = get_graph_prior("erdos_renyi", d)
    graphs = [_graph([(0, 2), (1, 2), (2, 4), (0, 3)], d), _graph([(0, 1), (1, 2), (0, 2), (2, 4), (3, 4)], d),
              np.zeros((d, d), np.uint8)]  # fmt: skip
    gains, valid = move_gains(model, prior, x.astype(np.float32), None, jnp.asarray(np.stack(graphs)), max_parents)
    gains, valid = np.asarray(gains, np.float64), np.asarray(valid)
    for b, graph in enumerate(graphs):
        expected = _brute_force_moves(graph, max_parents)
        found = {tuple(int(v) for v in k) for k in np.argwhere(valid[b])}
        assert found == set(expected)
        keys = sorted(expected)
        neighbours = np.stack([graph] + [expected[k] for k in keys])
        scores = log_marginal_likelihood_graphs(model, x, neighbours, graph_prior=prior)
        np.testing.assert_allclose([gains[b][k] for k in keys], scores[1:] - scores[0], rtol=1e-4, atol=2e-2)
        assert np.ptp(scores[1:]) > 5.0  # the moves' gains differ: a constant would not pass


def test_apply_moves_makes_each_move():
    graph = _graph([(0, 1), (1, 2)], 3)
    graphs = jnp.asarray(np.repeat(graph[None], 4, axis=0))
    # add 0->2, remove 1->2, reverse 0->1, stay
    moves = jnp.asarray([0 * 9 + 0 * 3 + 2, 1 * 9 + 1 * 3 + 2, 2 * 9 + 0 * 3 + 1, 27])
    out = np.asarray(apply_moves(graphs, moves))
    np.testing.assert_array_equal(out[0], _graph([(0, 1), (1, 2), (0, 2)], 3))
    np.testing.assert_array_equal(out[1], _graph([(0, 1)], 3))
    np.testing.assert_array_equal(out[2], _graph([(1, 0), (1, 2)], 3))
    np.testing.assert_array_equal(out[3], graph)


def test_a_move_is_drawn_in_proportion_to_the_reward():
    """One heat-bath move from a fixed graph: each of the graph and its valid neighbours is drawn with probability
    R(G') / sum R (conjugate.py's float64 closed form), chi-square on 20,000 draws."""
    rng = np.random.default_rng(0)
    d, n = 3, 30
    x = rng.normal(size=(n, d))
    x[:, 1] += 0.3 * x[:, 0]
    x[:, 2] += 0.2 * x[:, 1]
    model = get_model("lingauss", obs_var=1.0, prior_var=1.0)
    prior = get_graph_prior("uniform", d)
    graph = _graph([(0, 1)], d)
    num = 20000
    graphs = jnp.asarray(np.repeat(graph[None], num, axis=0))
    out = np.asarray(local_moves(model, prior, x.astype(np.float32), None, graphs, jax.random.PRNGKey(2), 1))
    candidates = [graph] + list(_brute_force_moves(graph).values())
    log_r = log_marginal_likelihood_graphs(model, x, np.stack(candidates), graph_prior=prior)
    expected = np.exp(log_r - log_r.max())
    expected /= expected.sum()
    assert expected.max() < 0.9 and expected.min() > 1e-3  # a test that the draws can fail
    codes = {tuple(g.ravel()): c for c, g in enumerate(candidates)}
    drawn = np.bincount([codes[tuple(g.ravel())] for g in out], minlength=len(candidates))
    assert drawn.sum() == num  # every draw is the graph or one of its neighbours
    assert stats.chisquare(drawn, expected * num).pvalue > 1e-3


def test_moves_keep_dags_within_max_parents():
    rng = np.random.default_rng(1)
    d = 5
    x = rng.normal(size=(40, d)).astype(np.float32)
    model = get_model("lingauss", obs_var=0.5, prior_var=1.0)
    out = local_moves(model, get_graph_prior("uniform", d), x, None, jnp.zeros((200, d, d), jnp.uint8),
                      jax.random.PRNGKey(3), 6, max_parents=2)  # fmt: skip
    out = np.asarray(out)
    assert all(is_dag(g) for g in out)
    assert np.all(out.sum(axis=1) <= 2)
    assert out.sum() > 0  # they moved


def test_the_options_are_checked():
    with pytest.raises(JspgfnError, match="backward_every"):
        get_preset("smoke", backward_every=-1)
    with pytest.raises(JspgfnError, match="backward_every needs replay_priority 0"):
        get_preset("smoke", backward_every=5, replay_priority=0.5)
    with pytest.raises(JspgfnError, match="backward_batch needs backward_every > 0"):
        get_preset("smoke", backward_batch=0.5)
    with pytest.raises(JspgfnError, match="must leave at least one transition to each buffer"):
        get_preset("smoke", backward_every=5, backward_batch=1.0)
    with pytest.raises(JspgfnError, match="backward_batch and replay_anchor exclude each other"):
        get_preset("smoke", backward_every=5, backward_batch=0.5, replay_anchor=0.25)
    with pytest.raises(JspgfnError, match="backward_batch"):
        get_preset("smoke", backward_every=5, backward_batch=1.5)


def test_sample_mixed_falls_back_to_the_replay_while_the_second_buffer_is_empty():
    from jspgfn.gflownet import replay as replaylib

    d = 4
    graph = _graph([(0, 1)], d)
    replay = replaylib.add(replaylib.init(50, d), jnp.asarray(np.repeat(graph[None], 40, axis=0)),
                           jnp.full(40, 2 * d + 3, jnp.int32), jnp.ones(40, bool))  # fmt: skip
    empty = replaylib.init(20, d)
    graphs, actions = replaylib.sample_mixed(replay, empty, jax.random.PRNGKey(0), 16, 6, fallback=True)
    assert np.all(np.asarray(graphs).sum(axis=(1, 2)) == 1) and np.all(np.asarray(actions) == 2 * d + 3)
    # once it holds a transition, its share comes from it
    two = _graph([(0, 1), (1, 2)], d)
    second = replaylib.add(empty, jnp.asarray(two[None]), jnp.array([3], jnp.int32), jnp.ones(1, bool))
    graphs, actions = replaylib.sample_mixed(replay, second, jax.random.PRNGKey(0), 16, 6, fallback=True)
    np.testing.assert_array_equal(np.asarray(graphs).sum(axis=(1, 2)), [1] * 10 + [2] * 6)
    np.testing.assert_array_equal(np.asarray(actions)[10:], 3)


def _data(tmp_path, model="linear"):
    from jspgfn.cli import main as cli_main

    data = tmp_path / "d4"
    assert cli_main(["generate", "--graph", "er1", "--model", model, "--d", "4", "--n", "30", "--seed", "3",
                     "--out", str(data)]) == 0  # fmt: skip
    return data


def test_a_run_trains_with_it_and_fills_the_replay(tmp_path):
    from jspgfn.gflownet.train import train

    tiny = {"num_iterations": 20, "iterations_per_dispatch": 10, "prefill": 20, "batch_size": 8, "num_envs": 2,
            "num_theta_samples": 2, "replay_capacity": 500}  # fmt: skip
    sizes = {}
    for every in (0, 5):
        _, state, info = train(_data(tmp_path / str(every)), "lingauss", "smoke", 0, tmp_path / f"run{every}",
                               overrides={**tiny, "backward_every": every}, progress=False)  # fmt: skip
        assert info["iteration"] == 20
        assert all(np.all(np.isfinite(np.asarray(x))) for x in jax.tree_util.tree_leaves(state.params))
        sizes[every] = int(state.replay.size)
        stored = np.asarray(state.replay.graphs[: sizes[every]])
        assert all(is_dag(g) for g in stored)
    assert sizes[5] > sizes[0]  # four rounds of backward trajectories went in


def test_it_resumes_bit_for_bit_with_its_terminal_graphs(tmp_path):
    """The last graph of each environment is part of the state (checkpointed): a run stopped and resumed ends bit
    for bit as the run trained in one go."""
    from jspgfn.gflownet.train import train
    from test_gflownet_train import assert_resumes_bitwise

    data = _data(tmp_path)
    options = {"num_iterations": 20, "iterations_per_dispatch": 5, "prefill": 20, "batch_size": 8, "num_envs": 2,
               "num_theta_samples": 2, "replay_capacity": 500, "backward_every": 3}  # fmt: skip
    _, whole, _ = train(data, "lingauss", "smoke", 0, tmp_path / "a", overrides=options, progress=False)
    assert whole.terminals is not None and int(np.asarray(whole.terminals).sum()) > 0
    assert_resumes_bitwise(data, "lingauss", options, tmp_path / "b", whole)


def test_with_backward_batch_they_go_to_a_buffer_of_their_own(tmp_path):
    """backward_batch: the replay holds the sampler's transitions only (states it visited: each one edge short of
    an environment's later state, none beyond its terminal), the backward trajectories fill the second buffer, and
    the run resumes bit for bit with it."""
    from jspgfn.gflownet.train import train
    from test_gflownet_train import assert_resumes_bitwise

    data = _data(tmp_path)
    options = {"num_iterations": 20, "iterations_per_dispatch": 5, "prefill": 20, "batch_size": 8, "num_envs": 2,
               "num_theta_samples": 2, "replay_capacity": 500, "backward_every": 3, "backward_batch": 0.5}  # fmt: skip
    trainer, whole, _ = train(data, "lingauss", "smoke", 0, tmp_path / "a", overrides=options, progress=False)
    assert whole.backward is not None and int(whole.backward.size) > 0
    stored = np.asarray(whole.backward.graphs[: int(whole.backward.size)])
    assert all(is_dag(g) for g in stored)
    # one iteration where the trajectories are due, with backward_moves 0 (the terminal graphs kept as they are):
    # one trajectory to each environment's terminal graph goes into the second buffer, its edges' worth of
    # transitions, and at most one transition per environment (the sampler's) into the replay
    trainer = dataclasses.replace(trainer, cfg=trainer.cfg.replace(backward_moves=0))
    terminals = jnp.asarray(np.stack([_graph([(0, 1), (1, 2), (0, 3)], 4), _graph([(3, 2), (2, 1), (1, 0)], 4)]))
    state = whole._replace(step=jnp.asarray(21, jnp.int32), terminals=terminals)
    new, _ = jax.jit(trainer.iteration)(state)
    assert int(new.backward.size) - int(state.backward.size) == int(np.asarray(new.terminals).sum()) >= 3
    assert int(new.replay.size) - int(state.replay.size) <= 2
    assert_resumes_bitwise(data, "lingauss", options, tmp_path / "b", whole)


def test_it_is_refused_for_the_mlp_model(tmp_path):
    from jspgfn.gflownet.train import train

    with pytest.raises(JspgfnError, match="backward_every is for the linear Gaussian model only"):
        train(_data(tmp_path, "mlp"), "mlp", "smoke", 0, tmp_path / "run", overrides={"backward_every": 5},
              progress=False)  # fmt: skip
