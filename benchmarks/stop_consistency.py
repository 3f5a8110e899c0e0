"""Where a trained JSP-GFN's stop probabilities leave the detailed-balance fixed point, level by level.

For a state G with k edges, the modified detailed balance of G -> G_c (c: one valid edge addition) asks
    l_c := log P_F(G_c | G) - log P_F(stop | G)  =  t_c := Delta_c - log(k + 1) - log P_F(stop | G_c)
(Delta_c = log R(G_c) - log R(G), P_B uniform over the k + 1 edges of G_c). Given the sampler's own stop
probabilities at the children, the stop probability at G that satisfies every condition out of G is
    log P_loc(stop | G) = -log(1 + sum_c exp(t_c)),
and the sampler's is log P_F(stop | G) = -log(1 + sum_c exp(l_c)). Their difference
    D(G) = log P_F(stop | G) - log P_loc(stop | G)
is the state's local error: D < 0 means G stops less often than its children's flows warrant, so the
sampler goes on to denser graphs. With eps_c = l_c - t_c and w = softmax(t) over the children,
    log sum exp(l) - log sum exp(t) = m + J,   m = sum_c w_c eps_c,   J = log sum_c w_c exp(eps_c) - m >= 0:
m is the flow-weighted mean error of the edge logits and J the part that comes from their spread alone
(Jensen: errors of mean zero still lower P(stop) by about var(eps) / 2). A sampler that satisfies every
condition has D = 0 at every state; since the stop at the complete DAG is forced, errors D at the denser
levels pass down to the sparser ones through the children's stop terms (where P(stop) is small, about one for
one), and the table by edge count says at which levels the sampler's stops leave the fixed point.

Delta_c is the exact log marginal likelihood difference (linear Gaussian, theta integrated out, uniform
prior over DAGs), and also (`floor` columns) that difference minus the diagonal family's mean-field KL gap
(benchmarks/family_floor.py), the target JSP-GFN (diag) can reach at best. States are those the sampler
visits on --num trajectories from the empty graph (so the table is weighted by the sampler's own flow).
The last three columns say how the sampler picks its next edge: best_gain is the largest exact Delta_c of one
edge it could still add (large at the posterior's size: the graph lacks an edge the data need), P(best) the
probability it gives that edge when it goes on, P(gain<0) the probability of an edge that lowers log R.

  .venv/bin/python benchmarks/stop_consistency.py RUN_FOLDER DATA_FOLDER [--num 200] [--seed 0] [--exact EXACT.npz]

--exact also prints the edge RMSE, Pearson r and mean edges of 1,000 samples against `jspgfn exact`'s marginals,
and (where the dataset has graph.csv) their edges per sample on the true graph's edges, on their reversals and
elsewhere, beside the exact posterior's.
"""

import argparse
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from accuracy_exact_edges import compare  # noqa: E402
from family_floor import _precisions_and_gaps, mean_field_gaps  # noqa: E402
from jspgfn.conjugate import _code_masks, _log_marginals, _node_gaussians, node_statistics  # noqa: E402
from jspgfn.dataset import load_dataset  # noqa: E402
from jspgfn.exact_dp import local_scores  # noqa: E402
from jspgfn.gflownet import env as envlib  # noqa: E402
from jspgfn.gflownet import policy  # noqa: E402
from jspgfn.gflownet.sample import policy_step, sample_graphs  # noqa: E402
from jspgfn.gflownet.train import enable_compilation_cache, load_run  # noqa: E402


def visited_states(apply_fn, params, key, num, d):
    """Every non-terminal state of num trajectories of the sampler: uint8 [S, d, d] (forced stops excluded)."""
    step = jax.jit(lambda p, st, done, k: policy_step(apply_fn, p, st, done, k, None)[:2])
    state = envlib.reset(num, d)
    done = jnp.zeros((num,), bool)
    states = []
    for k in jax.random.split(key, d * (d - 1) // 2 + 1):
        emask = envlib.edge_mask(state)
        live = np.asarray(~done & jnp.any(emask, axis=(1, 2)))
        states.append(np.asarray(state.adjacency)[live])
        state, done = step(params, state, done, k)
        if bool(jnp.all(done)):
            break
    return np.concatenate(states).astype(np.uint8)


class ParentSetScores:
    """log beta_j(Pa) (uniform prior over DAGs) read as table[nodes, codes], like local_scores' float64 [d, 2^d]
    table, but computed only for the (node, parent code) pairs asked: for d where the whole table is too large
    (d=20: 10M parent sets). floor=True: less the diagonal family's mean-field gap of the parent set
    (family_floor.mean_field_gaps)."""

    def __init__(self, model, x, floor=False, batch=4096):
        self.model, self.x, self.floor, self.batch = model, np.asarray(x, np.float64), floor, batch
        self.stats = node_statistics(self.x)
        self.gram = self.x.T @ self.x / model.obs_var  # the floor's precisions
        self.known = {}  # node * 2^d + code -> score: the audit and offset_errors read the same parent sets

    def __getitem__(self, index):
        nodes, codes = (np.asarray(a, np.int64) for a in index)
        d = self.x.shape[1]
        keys, inverse = np.unique((nodes << d) | codes, return_inverse=True)
        missing = np.array([k for k in keys.tolist() if k not in self.known], np.int64)
        self.known.update(zip(missing.tolist(), self._scores(np.stack([missing >> d, missing & ((1 << d) - 1)], 1))))
        return np.array([self.known[k] for k in keys.tolist()])[inverse.ravel()].reshape(nodes.shape)

    def _scores(self, pairs):
        """The scores of pairs int64 [P, 2] (node, parent code): float64 [P]."""
        d = self.x.shape[1]
        values = np.empty(len(pairs))
        for start in range(0, len(pairs), self.batch):
            n, c = pairs[start : start + self.batch, 0], pairs[start : start + self.batch, 1]
            values[start : start + self.batch] = _log_marginals(
                self.model, self.stats, n, _node_gaussians(self.model, self.stats, n, _code_masks(c, d))
            )
        if self.floor:
            sizes = np.array([bin(int(c)).count("1") for c in pairs[:, 1]])
            for k in np.unique(sizes[sizes >= 2]):
                at = np.flatnonzero(sizes == k)
                rows = np.array([np.flatnonzero((pairs[i, 1] >> np.arange(d)) & 1) for i in at])
                values[at] -= _precisions_and_gaps(self.model, self.gram, rows)
        return values


def log_policy(apply_fn, params, graphs, chunk=None):
    """(log P(stop | G) [B], log P(G + i->j | G) [B, d, d], edge mask bool [B, d, d]) in float64 numpy; chunk:
    graphs per network call (default 4096, fewer from d=12 on, where the attention over d^2 tokens is large)."""
    d = graphs.shape[-1]
    chunk = chunk or (4096 if d < 12 else 256)

    @jax.jit
    def one(adj):
        state = envlib.EnvState(adj, envlib.closure_of(adj))
        out = apply_fn(params, adj)
        emask = envlib.edge_mask(state)
        log_stop, log_edges = policy.log_policy_edges(out["stop_logit"], out["edge_logits"], emask)
        return log_stop, log_edges, emask

    parts = [one(jnp.asarray(graphs[i : i + chunk])) for i in range(0, len(graphs), chunk)]
    return tuple(np.concatenate([np.asarray(p[j]) for p in parts]).astype(np.float64) for j in range(3))


def offset_errors(apply_fn, params, states, table, chunk=256):
    """With option stop_score_offset: the offset's score of each state (out["stop_score"], q's theta-free score or
    the closed form) less its exact log R(G) from `table` (local scores [d, 2^d] or ParentSetScores): float64 [S];
    None for a network without the offset."""
    d = states.shape[-1]
    apply = jax.jit(lambda adj: apply_fn(params, adj).get("stop_score"))
    if apply(jnp.asarray(states[:1])) is None:
        return None
    score = np.concatenate(
        [np.asarray(apply(jnp.asarray(states[i : i + chunk]))) for i in range(0, len(states), chunk)]
    )
    codes = (states.astype(np.int64) << np.arange(d)[None, :, None]).sum(axis=1)  # [S, d]
    exact = table[np.broadcast_to(np.arange(d), codes.shape), codes].sum(axis=1)
    return score.astype(np.float64) - exact


def audit(apply_fn, params, states, score_tables):
    """Per state [S]: its edge count, the sampler's log P(stop | G), for each score table [d, 2^d] the arrays
    (D, m, J) of the module docstring, and the sampler's edge choice under the first table: (the largest
    Delta_c of one edge still to add, P(that edge | continue), P(an edge with Delta_c < 0 | continue))."""
    d = states.shape[-1]
    log_stop, log_edges, emask = log_policy(apply_fn, params, states)
    src, dst = np.nonzero(np.ones((d, d)) - np.eye(d))
    counts = states.reshape(len(states), -1).sum(axis=1)
    valid = emask[:, src, dst].astype(bool)  # [S, C]
    s_idx, c_idx = np.nonzero(valid)
    children = states[s_idx].copy()
    children[np.arange(len(s_idx)), src[c_idx], dst[c_idx]] = 1
    child_stop, _, _ = log_policy(apply_fn, params, children)
    codes = (states.astype(np.int64) << np.arange(d)[None, :, None]).sum(axis=1)  # [S, d]: parent code per node
    old = codes[s_idx, dst[c_idx]]
    new = old | (1 << src[c_idx])
    logit_gap = np.full(valid.shape, -np.inf)  # l_c
    logit_gap[s_idx, c_idx] = log_edges[s_idx, src[c_idx], dst[c_idx]] - log_stop[s_idx]
    log_choice = np.full(valid.shape, -np.inf)  # log P(G_c | G, continue)
    log_choice[s_idx, c_idx] = log_edges[s_idx, src[c_idx], dst[c_idx]]
    log_choice -= np.logaddexp.reduce(log_choice, axis=1, keepdims=True)
    results, choice = [], None
    for table in score_tables:
        delta = table[dst[c_idx], new] - table[dst[c_idx], old]
        t = np.full(valid.shape, -np.inf)
        t[s_idx, c_idx] = delta - np.log(counts[s_idx] + 1) - child_stop
        lse_t = np.logaddexp.reduce(t, axis=1)
        lse_l = np.logaddexp.reduce(logit_gap, axis=1)
        w = np.exp(t - lse_t[:, None])
        eps = np.zeros(valid.shape)
        eps[s_idx, c_idx] = logit_gap[s_idx, c_idx] - t[s_idx, c_idx]
        m = (w * eps).sum(axis=1)
        jensen = lse_l - lse_t - m  # log sum_c w_c exp(eps_c) = lse_l - lse_t
        d_local = np.logaddexp(0.0, lse_t) - np.logaddexp(0.0, lse_l)
        results.append((d_local, m, jensen))
        if choice is None:
            gain = np.full(valid.shape, -np.inf)
            gain[s_idx, c_idx] = delta
            best = np.argmax(gain, axis=1)
            p_negative = np.exp(np.logaddexp.reduce(np.where(valid & (gain < 0), log_choice, -np.inf), axis=1))
            choice = (gain.max(axis=1), np.exp(log_choice[np.arange(len(states)), best]), p_negative)
    return counts, log_stop, results, choice


def edge_class_masks(graph):
    """The true graph's edges, their reversals and the other off-diagonal pairs: graph 0/1 [d, d] -> three bool
    [d, d] masks."""
    true = np.asarray(graph, bool)
    reverse = true.T & ~true
    return true, reverse, ~true & ~reverse & ~np.eye(len(true), dtype=bool)


def edge_classes(edge_frequency, graph):
    """Expected edges per sample on the true graph's edges, on their reversals and elsewhere: edge_frequency float
    [d, d] (marginals or sample means), graph 0/1 [d, d] -> (true, reversed, other) floats."""
    return tuple(float(edge_frequency[mask].sum()) for mask in edge_class_masks(graph))


def replay_sizes(name, buffer):
    """One line on the edge counts of a buffer's stored states (replay.Replay, or None): what training has seen
    (forty-third session: at d=20 the sampler at epsilon 0 ran past every state of the replay)."""
    if buffer is None:
        return f"# {name}: none"
    edges = np.asarray(buffer.graphs[: int(buffer.size)]).sum(axis=(-2, -1))
    if edges.size == 0:
        return f"# {name}: empty"
    median, p90, p99 = np.percentile(edges, [50, 90, 99])
    return (
        f"# {name}: {edges.size} states, edges median {median:.0f}, 90% {p90:.0f}, 99% {p99:.0f}, "
        f"max {edges.max()}, share with 100 or more {np.mean(edges >= 100):.3f}"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", help="a JSP-GFN run folder (jspgfn train --out), linear Gaussian")
    parser.add_argument("data", help="its dataset folder")
    parser.add_argument("--num", type=int, default=200, help="trajectories of the sampler")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--exact", type=Path, default=None, help="`jspgfn exact` .npz of the dataset")
    args = parser.parse_args(argv)
    enable_compilation_cache()
    trainer, state, info, config = load_run(args.run)
    dataset = load_dataset(args.data)
    x = dataset.train
    model = trainer.model
    if x.shape[1] <= 12:
        exact = local_scores(model, x)
        floor = exact - mean_field_gaps(model, x)[None, :]
    else:  # the whole tables would hold d 2^d scores: only the parent sets the audit reads
        exact, floor = ParentSetScores(model, x), ParentSetScores(model, x, floor=True)
    apply_fn, d = trainer.network.apply, trainer.num_variables
    states = visited_states(apply_fn, state.params, jax.random.PRNGKey(args.seed), args.num, d)
    counts, log_stop, results, choice = audit(apply_fn, state.params, states, [exact, floor])
    (d_ex, m_ex, j_ex), (d_fl, m_fl, j_fl) = results
    print(f"# {args.run} iteration {info['iteration']}: {len(states)} states on {args.num} trajectories")
    for name, buffer in (("replay", state.replay), ("backward buffer", state.backward)):
        print(replay_sizes(name, buffer))
    print(
        "edges  states  log_stop  D_exact  m_exact  J_exact  D_floor  m_floor  J_floor  best_gain  P(best)  P(gain<0)"
        "  (means over the states)"
    )
    for k in np.unique(counts):
        columns = (log_stop, d_ex, m_ex, j_ex, d_fl, m_fl, j_fl, *choice)
        row = "  ".join(f"{a[counts == k].mean():7.2f}" for a in columns)
        print(f"{k:5d}  {np.sum(counts == k):6d}  {row}")
    print(f"# all states: D_exact {d_ex.mean():.3f}, D_floor {d_fl.mean():.3f}, J {j_fl.mean():.3f}")
    errors = offset_errors(apply_fn, state.params, states, exact)
    if errors is not None:
        print("# the stop offset's score less the exact log R(G), by edge count (mean, sd over the states):")
        print(
            "  "
            + "  ".join(
                f"{k}: {errors[counts == k].mean():.1f} ({errors[counts == k].std():.1f})" for k in np.unique(counts)
            )
        )
    if args.exact is not None:
        graphs = sample_graphs(apply_fn, state.params, jax.random.PRNGKey(args.seed + 1), 1000, d)
        exact_edge = np.load(args.exact)["edge"]
        rmse, pearson = compare(graphs.mean(axis=0), exact_edge)
        edges = graphs.sum(axis=(1, 2)).mean()
        print(f"# 1,000 samples: edge RMSE {rmse:.3f}, Pearson {pearson:.3f}, edges {edges:.1f}")
        if dataset.graph is not None:
            ours = edge_classes(graphs.mean(axis=0), dataset.graph)
            truth = edge_classes(exact_edge, dataset.graph)
            print(
                "# edges per sample on the true graph's edges / their reversals / elsewhere: "
                + " / ".join(f"{a:.1f}" for a in ours)
                + "; exact posterior "
                + " / ".join(f"{a:.1f}" for a in truth)
            )


if __name__ == "__main__":
    main()
