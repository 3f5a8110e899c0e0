"""The whole-trajectory SubTB term (beyond the paper) and its trajectory buffer.

The residuals are checked against an oracle: at d=3 with data whose columns are orthogonal, every
P(theta | G, D) of the linear Gaussian model is a diagonal Gaussian, so a "network" that returns the
exact posteriors and the optimal forward policy (exact_flows.optimal_flows) satisfies every SubTB
condition exactly; the residuals of both terms must then vanish, and must not vanish for a wrong policy.
"""

import jax
import jax.numpy as jnp
import numpy as np
from scipy.special import logsumexp

from jspgfn.conjugate import local_score_table, parent_codes, posterior_theta
from jspgfn.gflownet import exact_flows
from jspgfn.gflownet import trajectories as trajlib
from jspgfn.gflownet.loss import LossConfig, subtb_loss, trajectory_loss
from jspgfn.models import get_graph_prior, get_model

D = 3


def _orthogonal_data(n=40, seed=0):
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(n, D)))
    return q * np.array([3.0, 2.0, 4.0])  # X^T X diagonal: the posterior of theta is a diagonal Gaussian


def _oracle(model, x, stop_shift=0.0):
    """apply_fn(params, adjacency, edge_rows=None) of the exact JSP-GFN for the data x."""
    lattice = exact_flows.dag_lattice(D)
    table = local_score_table(model, x)
    log_marginal = table[np.arange(D), parent_codes(lattice.graphs)].sum(-1)
    log_target = log_marginal - logsumexp(log_marginal)
    log_flow, log_stop = exact_flows.optimal_flows(lattice, log_target)
    parent, action = np.nonzero(lattice.children >= 0)
    child = lattice.children[parent, action]
    edge_logits = np.full((len(lattice.graphs), D * D), -30.0)
    edge_logits[parent, action] = log_flow[child] - np.log(lattice.num_edges[child]) - log_flow[parent]
    stop_logit = log_stop - np.log(-np.expm1(np.minimum(log_stop, -1e-12))) + stop_shift
    loc = np.zeros((len(lattice.graphs), D, D))
    scale = np.ones((len(lattice.graphs), D, D))
    for m, graph in enumerate(lattice.graphs):
        means, covs = posterior_theta(model, x, graph)  # node layout: row j = incoming weights of X_j
        loc[m] = means
        scale[m] = np.where(graph.T > 0, np.sqrt(np.maximum(np.diagonal(covs, axis1=1, axis2=2), 1e-300)), 1.0)
    codes = jnp.asarray(1 << np.arange(D * D))
    sorted_codes = jnp.asarray(lattice.graphs.reshape(len(lattice.graphs), -1).astype(np.int64) @ np.asarray(codes))
    tables = {k: jnp.asarray(v, jnp.float32) for k, v in (("stop", stop_logit), ("edge", edge_logits))}
    tables.update(loc=jnp.asarray(loc, jnp.float32), scale=jnp.asarray(scale, jnp.float32))

    def apply_fn(params, adjacency, edge_rows=None):
        index = jnp.searchsorted(sorted_codes, adjacency.reshape(len(adjacency), -1).astype(jnp.int32) @ codes)
        out = {
            "stop_logit": tables["stop"][index],
            "edge_logits": tables["edge"][index].reshape(-1, D, D),
            "loc": tables["loc"][index],
            "scale": tables["scale"][index],
        }
        if edge_rows is not None:
            out["edge_logits"] = out["edge_logits"][:edge_rows]
        return out

    return apply_fn


def _trajectories(rng, num):
    """num random trajectories of the uniform policy (some to a complete DAG): actions [K, T], length [K]."""
    lattice = exact_flows.dag_lattice(D)
    t = trajlib.max_length(D)
    actions = np.zeros((num, t), np.int32)
    length = np.zeros(num, np.int32)
    for k in range(num):
        state = 0
        while True:
            options = np.flatnonzero(lattice.children[state] >= 0)
            if len(options) == 0 or (length[k] > 0 and rng.random() < 0.2):
                break
            a = rng.choice(options)
            actions[k, length[k]] = a
            length[k] += 1
            state = lattice.children[state, a]
    return jnp.asarray(actions), jnp.asarray(length)


def _residuals(apply_fn, x, seed=0):
    model = get_model("lingauss")
    prior = get_graph_prior("uniform", D)
    cfg = LossConfig(num_theta_samples=3, huber_delta=1.0)
    rng = np.random.default_rng(seed)
    actions, length = _trajectories(rng, 32)
    xs = jnp.asarray(x, jnp.float32)
    _, traj_abs = trajectory_loss(None, apply_fn, model, prior, actions, length, jax.random.PRNGKey(1), xs, len(x), cfg)
    # the transitions of those trajectories, for the length-3 term
    states = np.asarray(trajlib.states_along(actions, length, D))
    taken = np.arange(actions.shape[1])[None, :] < np.asarray(length)[:, None]
    graphs = states[:, :-1][taken]
    acts = np.asarray(actions)[taken]
    _, metrics = subtb_loss(
        None, apply_fn, model, prior, jnp.asarray(graphs), jnp.asarray(acts), jax.random.PRNGKey(2), xs, len(x), cfg
    )
    assert int(np.sum(np.asarray(length) == 3)) > 0  # some reach a complete DAG (forced stop)
    return float(traj_abs), float(metrics["abs_delta"])


def test_residuals_vanish_for_the_exact_sampler():
    x = _orthogonal_data()
    traj_abs, step_abs = _residuals(_oracle(get_model("lingauss"), x), x)
    assert traj_abs < 5e-3  # float32 log-rewards of magnitude ~100
    assert step_abs < 5e-3


def test_residuals_do_not_vanish_for_a_wrong_stop_policy():
    x = _orthogonal_data()
    traj_abs, step_abs = _residuals(_oracle(get_model("lingauss"), x, stop_shift=2.0), x)
    assert traj_abs > 0.5
    assert step_abs > 0.5


def test_recorded_trajectories_rebuild_the_environments_graphs():
    from jspgfn.gflownet import env as envlib

    e, d = 5, 4
    traj = trajlib.init(e, 50, d)
    state = envlib.reset(e, d)
    key = jax.random.PRNGKey(0)
    finished = []
    for _ in range(60):
        key, k = jax.random.split(key)
        amask = envlib.action_mask(state, None)
        actions = jax.random.categorical(k, jnp.where(amask, 0.0, -jnp.inf)).astype(jnp.int32)
        before = np.asarray(state.adjacency)
        state, is_stop = envlib.step(state, actions)
        finished += [before[i] for i in np.flatnonzero(np.asarray(is_stop))]
        traj = trajlib.record(traj, actions, is_stop)
        rebuilt = trajlib.states_along(traj.current, traj.current_length, d)
        now = rebuilt[jnp.arange(e), traj.current_length]
        np.testing.assert_array_equal(np.asarray(now), np.asarray(state.adjacency))
    stored = int(traj.size)
    assert stored == min(len(finished), 50) and stored > 5
    expected = np.zeros((stored, d, d), np.uint8)
    for i, graph in enumerate(finished):  # a ring buffer: slot i % capacity holds the latest
        expected[i % 50] = graph
    final = trajlib.states_along(traj.actions[:stored], traj.length[:stored], d)
    final = np.asarray(final[jnp.arange(stored), traj.length[:stored]])
    np.testing.assert_array_equal(final, expected)


def test_prioritised_replay_draws_in_proportion_to_priority():
    from jspgfn.gflownet import replay as replaylib

    capacity, d = 64, 3
    replay = replaylib.init(capacity, d)
    graphs = jnp.zeros((40, d, d), jnp.uint8)
    valid = jnp.ones((40,), bool)
    priorities = replaylib.add_priorities(replaylib.init_priorities(capacity), replay, valid)
    replay = replaylib.add(replay, graphs, jnp.arange(40, dtype=jnp.int32), valid)
    assert np.all(np.asarray(priorities[:40]) == 1.0)  # new transitions: the largest priority (1 at first)
    rng = np.random.default_rng(0)
    values = rng.uniform(0.1, 3.0, size=40)
    priorities = replaylib.update_priorities(priorities, jnp.arange(40), jnp.asarray(values), floor=0.0)
    alpha = 0.7
    num = 200_000
    _, actions, idx = replaylib.sample_prioritised(replay, priorities, jax.random.PRNGKey(0), num, alpha)
    np.testing.assert_array_equal(np.asarray(actions), np.asarray(idx))
    counts = np.bincount(np.asarray(idx), minlength=capacity)
    assert counts[40:].sum() == 0  # never an empty slot
    p = values**alpha / np.sum(values**alpha)
    z = (counts[:40] - num * p) / np.sqrt(num * p * (1 - p))
    assert np.max(np.abs(z)) < 4.5
    # a later transition enters at the largest stored priority
    later = replaylib.add_priorities(priorities, replay, jnp.array([True]))
    assert float(later[40]) == float(np.max(values).astype(np.float32))
