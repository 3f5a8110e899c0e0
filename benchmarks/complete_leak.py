"""Where a trained d=5 sampler's mass on complete DAGs comes from: the states one edge short of complete, exactly.

  .venv/bin/python benchmarks/complete_leak.py RUN_FOLDER DATA_FOLDER [--top 8]

For a JSP-GFN run folder on a d=5 linear Gaussian dataset, the sampler's exact state flows F(G) and stops
(exact_flows.terminating_log_probs over all 29,281 DAGs, no sampling) beside the optimal ones for the exact
posterior (exact_flows.optimal_flows, the run's model and graph prior). Prints the complete DAGs' mass under both and,
for the 9-edge states that send the most flow on to a complete DAG, that flow, F(G) against F*(G), P(stop | G)
against P*(stop | G), the exact gain log R(G + e) - log R(G) of the missing edge (the larger of the two directions
when both can be added), and the exact posterior's marginal of that pair (either direction); then the same flow
split by whether that gain exceeds log 10 (where the optimal policy itself goes on more often than it stops). Also,
the 8-edge states that send the most flow into those 9-edge states, with their flow against the optimal. Forty-third
session, docs/jspgfn-beyond-d5.md. Forty-fourth session: for each pair the posterior is sure of, the flow through the
states that lack it by edge count and what they do next (stop, add the pair, go on without it), against the optimal,
and the transitions from such states in the run's buffers; with --residuals S, the loss's mean residual on their
transitions (ELBO under the run's q by S theta draws), weighted by the sampler's flow (where the loss is not met on
the path the leak takes), and the theta noise of those residuals (its SD, and how far the Huber loss's fit sits from
the mean).
"""

import argparse
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from jspgfn.conjugate import log_marginal_likelihood_graphs  # noqa: E402
from jspgfn.dataset import load_dataset  # noqa: E402
from jspgfn.gflownet import exact_flows, policy  # noqa: E402
from jspgfn.gflownet.log_pt import TrajectoryScorer  # noqa: E402
from jspgfn.gflownet.rewards import log_rewards  # noqa: E402
from jspgfn.gflownet.train import load_run  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run")
    parser.add_argument("data")
    parser.add_argument("--top", type=int, default=8)
    parser.add_argument(
        "--residuals", type=int, default=0, metavar="S",
        help="also the loss's residuals at the states lacking each sure pair, with S theta samples per DAG",
    )  # fmt: skip
    args = parser.parse_args(argv)

    trainer, state, info, _ = load_run(args.run)
    ds = load_dataset(args.data)
    d = ds.train.shape[1]
    if d != 5:
        raise SystemExit(f"{args.data}: d={d}; this audit lists every DAG and needs d=5")
    lattice = exact_flows.dag_lattice(d)
    log_r = log_marginal_likelihood_graphs(trainer.model, ds.train, lattice.graphs, graph_prior=trainer.graph_prior)
    log_exact = log_r - np.logaddexp.reduce(log_r)
    scorer = TrajectoryScorer(trainer.network.apply, state.params, d, trainer.cfg.max_parents)
    log_edges, log_stop = scorer.log_edges(lattice.graphs)
    log_edges = log_edges.reshape(len(log_stop), -1)
    log_pt, log_flow = exact_flows.terminating_log_probs(lattice, log_stop, log_edges)
    opt_flow, opt_stop = exact_flows.optimal_flows(lattice, log_exact)
    marginals = np.einsum("m,mij->ij", np.exp(log_exact), lattice.graphs)
    pair = marginals + marginals.T  # the pair {i, j} joined in either direction

    complete = lattice.num_edges == d * (d - 1) // 2
    print(f"# {args.run} iteration {info['iteration']}")
    print(f"complete DAGs: P_T {np.exp(log_pt[complete]).sum():.3g}, exact {np.exp(log_exact[complete]).sum():.3g}")

    last = np.flatnonzero(lattice.num_edges == d * (d - 1) // 2 - 1)
    with np.errstate(divide="ignore"):
        onward = np.exp(log_flow[last]) * -np.expm1(log_stop[last])  # flow that goes on to a complete DAG
        opt_onward = np.exp(opt_flow[last]) * -np.expm1(opt_stop[last])
    children = lattice.children[last]  # [K, d*d]
    gains = np.where(children >= 0, log_r[np.maximum(children, 0)] - log_r[last][:, None], -np.inf)
    best = gains.max(axis=1)
    missing = [np.argwhere((1 - g - g.T - np.eye(d, dtype=int)) > 0)[0] for g in lattice.graphs[last].astype(int)]
    print(f"flow on from 9 edges: sampler {onward.sum():.3g}, optimal {opt_onward.sum():.3g}")
    print("top 9-edge states by the flow they send on: flow on (optimal) | F/F* | log P(stop) (optimal) | gain | pair")
    for k in np.argsort(-onward)[: args.top]:
        i, j = missing[k]
        g = last[k]
        print(
            f"  {onward[k]:.2e} ({opt_onward[k]:.1e}) | {np.exp(log_flow[g] - opt_flow[g]):8.1f} | "
            f"{log_stop[g]:7.2f} ({opt_stop[g]:7.2f}) | {best[k]:7.1f} | {i}-{j} exact {pair[i, j]:.3f}"
        )
    big = best > np.log(10.0)
    print(
        f"flow on through states whose missing edge gains > log 10: {onward[big].sum():.3g} of {onward.sum():.3g} "
        f"({big.sum()} of {len(last)} states; optimal {opt_onward[big].sum():.3g})"
    )

    print_sure_pair_levels(sure_pair_levels(lattice, pair, log_flow, log_stop, log_edges, opt_flow, opt_stop, d), pair)
    buffer_counts(state, pair, d)
    if args.residuals:
        draws = elbo_draws_of_every_dag(trainer, state, lattice.graphs, ds.train, args.residuals)
        elbo = draws.mean(axis=1)
        gap = elbo - log_r
        print(f"ELBO under q - exact log R over all DAGs: mean {np.mean(gap):.2f}, sd {np.std(gap):.2f}")
        print_sure_pair_residuals(
            sure_pair_residuals(lattice, pair, log_r, elbo, log_flow, log_stop, log_edges, opt_flow, d)
        )
        theta_noise(lattice, pair, draws, log_flow, log_edges, d)

    # the 8-edge parents of the top 9-edge states: flow they send into them
    top = set(last[np.argsort(-onward)[: args.top]].tolist())
    rows = []
    for g8 in np.flatnonzero(lattice.num_edges == d * (d - 1) // 2 - 2):
        for a in np.flatnonzero(lattice.children[g8] >= 0):
            child = lattice.children[g8, a]
            if child in top:
                into = np.exp(log_flow[g8] + log_edges[g8, a])
                opt_into = np.exp(opt_flow[child]) / 9.0  # F*(G8) P*(G9 | G8) = F*(G9) P_B(G8 | G9)
                rows.append((into, opt_into, g8, a))
    rows.sort(reverse=True)
    print("8-edge states sending flow into them: flow in (optimal) | F/F* at the 8-edge state | log P(stop) (optimal)")
    for into, opt_into, g8, a in rows[: args.top]:
        print(
            f"  {into:.2e} ({opt_into:.1e}) | {np.exp(log_flow[g8] - opt_flow[g8]):8.1f} | "
            f"{log_stop[g8]:7.2f} ({opt_stop[g8]:7.2f}) | adds {a // d}->{a % d}"
        )


SURE = 0.99  # a pair the exact posterior joins (either direction) with more than this probability is "sure"


def sure_pairs(pair, sure=SURE):
    """The pairs (i, j), i < j, whose exact marginal pair[i, j] (either direction) exceeds `sure`."""
    return [(int(i), int(j)) for i, j in zip(*np.nonzero(np.triu(pair > sure, 1)))]


def pair_actions(i, j, d):
    """bool [d * d]: the two actions that join the pair {i, j} (i -> j and j -> i)."""
    mask = np.zeros(d * d, bool)
    mask[[i * d + j, j * d + i]] = True
    return mask


def joined_pairs(lattice):
    """int [M, d, d]: G + G^T of each listed DAG, 1 where the pair {i, j} is joined (either direction), else 0."""
    return lattice.graphs + np.swapaxes(lattice.graphs, 1, 2)


def print_by_pair(rows, header, line):
    """Print line(row) for each of rows (the pair (i, j) first), header(i, j) before each pair's first row."""
    last = None
    for row in rows:
        if row[0] != last:
            print(header(*row[0]))
            last = row[0]
        print(line(*row[1:]))


def sure_pair_levels(lattice, pair, log_flow, log_stop, log_edges, opt_flow, opt_stop, d, sure=SURE):
    """For each pair the exact posterior joins with probability > `sure`, by edge count k: the flow through the
    k-edge states that lack it, and out of those states the share that stops, that adds the pair (either direction)
    and that goes on without it (to a (k+1)-edge state still lacking it). Returns rows ((i, j), k, sampler's
    (flow, stop, add, on), optimal's (flow, stop, add, on))."""
    joined = joined_pairs(lattice)
    rows_out = []
    for i, j in sure_pairs(pair, sure):
        lacking = joined[:, i, j] == 0
        adds_pair = pair_actions(i, j, d)
        for k in range(d * (d - 1) // 2 - 1):
            rows = np.flatnonzero(lacking & (lattice.num_edges == k))
            if len(rows) == 0:
                continue
            parts = []
            for flow, stop, edges in ((log_flow, log_stop, log_edges), (opt_flow, opt_stop, None)):
                f = np.exp(flow[rows])
                if edges is None:  # optimal P*(child | G) = F*(child) P_B(G | child) / F*(G), P_B uniform
                    child = lattice.children[rows]
                    c = np.maximum(child, 0)
                    with np.errstate(divide="ignore", invalid="ignore"):
                        move = np.where(child >= 0, np.exp(flow[c] - flow[rows][:, None]) / (k + 1), 0.0)
                else:
                    move = np.exp(edges[rows])
                total = f.sum()
                to_pair = (f[:, None] * move[:, adds_pair]).sum()
                on = (f[:, None] * move[:, ~adds_pair]).sum()
                parts.append((total, (f * np.exp(stop[rows])).sum() / total, to_pair / total, on / total))
            rows_out.append(((int(i), int(j)), k, parts[0], parts[1]))
    return rows_out


def print_sure_pair_levels(rows, pair):
    print_by_pair(
        rows,
        lambda i, j: (
            f"pair {i}-{j} (exact {pair[i, j]:.4f}): states lacking it, by edge count: flow sampler (optimal) | "
            "out of them: stop, add the pair, go on without it: sampler (optimal)"
        ),
        lambda k, s, o: (
            f"  {k}: {s[0]:.2e} ({o[0]:.2e}) | {s[1]:.3f} ({o[1]:.3f}) | {s[2]:.3f} ({o[2]:.3f}) | "
            f"{s[3]:.2e} ({o[3]:.2e})"
        ),
    )


def buffer_counts(state, pair, d, sure=SURE):
    """For each pair the exact posterior is sure of, the transitions from states lacking it at 5 edges or more in
    the run's replay and (with backward_batch) its backward trajectories' buffer: by edge count, how many (and how
    many of them add the pair)."""
    buffers = {"replay": state.replay, "backward buffer": getattr(state, "backward", None)}
    for i, j in sure_pairs(pair, sure):
        for name, buffer in buffers.items():
            if buffer is None:
                continue
            size = int(buffer.size)
            graphs = np.asarray(buffer.graphs[:size]).astype(int)
            actions = np.asarray(buffer.actions[:size])
            edges = graphs.sum(axis=(1, 2))
            lacking = graphs[:, i, j] + graphs[:, j, i] == 0
            adds = pair_actions(i, j, d)[actions]
            counts = ", ".join(
                f"{k}: {np.sum(lacking & (edges == k))} ({np.sum(lacking & adds & (edges == k))})"
                for k in range(5, d * (d - 1) // 2)
            )
            print(f"pair {i}-{j}, {name} ({size} transitions), from states lacking it by edges (adding it): {counts}")


def elbo_draws_of_every_dag(trainer, state, graphs, x, num_samples, chunk=1024):
    """log R(G, theta) - log q(theta | G) for num_samples draws theta ~ q(. | G) of the run's q (its network, offsets
    included), for graphs uint8 [M, d, d] on x [N, d]: float [M, S]; their mean is the ELBO."""
    data = jnp.asarray(x, jnp.float32)

    @jax.jit
    def elbo(g, key):
        out = trainer.network.apply(state.params, g, 0)
        node_mask = policy.node_mask_of(trainer.model, g)
        theta = policy.sample_theta(key, out, node_mask, num_samples)
        log_q = policy.theta_log_prob(out, theta, node_mask)
        return log_rewards(trainer.model, trainer.graph_prior, theta, g, data, data.shape[0]) - log_q

    parts = []
    for start in range(0, len(graphs), chunk):
        g = graphs[start : start + chunk]
        padded = np.concatenate([g, np.zeros((chunk - len(g),) + g.shape[1:], g.dtype)])
        parts.append(np.asarray(elbo(jnp.asarray(padded), jax.random.PRNGKey(start)))[: len(g)])
    return np.concatenate(parts)


def sure_pair_residuals(lattice, pair, log_r, elbo, log_flow, log_stop, log_edges, opt_flow, d, sure=SURE):
    """For each pair the exact posterior joins with probability > `sure`, by edge count k, at the states lacking it:
    the mean residual of the loss (its expectation over q: ELBO(G') - ELBO(G) + log P_B + log P(stop | G) - log
    P_F(G' | G) - log P(stop | G'), the online stops) over the transitions that add the pair and over the others,
    weighted by the sampler's flow on them (and by the optimal flow); the ELBO's gain less the exact one; log P_F less
    the optimal one (sampler-weighted). Returns rows ((i, j), k, kind, sampler's flow on them, optimal flow,
    residual sampler-weighted, residual optimal-weighted, ELBO gain less exact, log P_F less optimal)."""
    joined = joined_pairs(lattice)
    out = []
    for i, j in sure_pairs(pair, sure):
        adds_pair = pair_actions(i, j, d)
        for k in range(1, d * (d - 1) // 2 - 1):
            rows = np.flatnonzero((joined[:, i, j] == 0) & (lattice.num_edges == k))
            child = lattice.children[rows]
            ok = child >= 0
            c = np.maximum(child, 0)
            gain = elbo[c] - elbo[rows][:, None]
            exact_gain = log_r[c] - log_r[rows][:, None]
            with np.errstate(invalid="ignore"):
                resid = gain - np.log(k + 1) + log_stop[rows][:, None] - log_edges[rows] - log_stop[c]
            opt_log_pf = opt_flow[c] - np.log(k + 1) - opt_flow[rows][:, None]
            with np.errstate(over="ignore", invalid="ignore"):
                weight = np.where(ok, np.exp(log_flow[rows][:, None] + log_edges[rows]), 0.0)
                opt_weight = np.where(ok, np.exp(opt_flow[rows][:, None] + opt_log_pf), 0.0)
            for kind, cols in (("adds it", adds_pair), ("others", ~adds_pair)):
                m = ok & cols[None, :]
                w, wo = weight * m, opt_weight * m

                def mean(v, w, m=m):
                    return np.sum(w * np.where(m, v, 0.0)) / max(w.sum(), 1e-300)

                out.append((
                    (int(i), int(j)), k, kind, w.sum(), wo.sum(), mean(resid, w), mean(resid, wo),
                    mean(gain - exact_gain, w), mean(log_edges[rows] - opt_log_pf, w),
                ))  # fmt: skip
    return out


def print_sure_pair_residuals(rows):
    print_by_pair(
        rows,
        lambda i, j: (
            f"pair {i}-{j}: residuals at the states lacking it: kind | flow on them sampler (optimal) | mean "
            "residual, sampler-weighted (optimal-weighted) | ELBO gain - exact gain | log P_F - optimal"
        ),
        lambda k, kind, flow, opt, resid, opt_resid, gap, dlpf: (
            f"  {k} {kind:7s} | {flow:.2e} ({opt:.2e}) | {resid:6.2f} ({opt_resid:6.2f}) | {gap:6.2f} | {dlpf:6.2f}"
        ),
    )


def huber_location(values, delta=1.0):
    """The constant c that minimises mean Huber_delta(values - c) (bisection on its derivative)."""
    low, high = values.min(), values.max()
    for _ in range(60):
        mid = 0.5 * (low + high)
        if np.mean(np.clip(values - mid, -delta, delta)) > 0:
            low = mid
        else:
            high = mid
    return 0.5 * (low + high)


def theta_noise(lattice, pair, draws, log_flow, log_edges, d, top=8, sure=SURE):
    """For each sure pair, by edge count, the `top` transitions by the sampler's flow among those that do not add
    it, from states lacking it: the theta noise of their residual over all S x S draws (as the loss pairs them), its
    SD, and the Huber(1) location less the mean (what the loss's fit is pulled by, beyond the mean)."""
    joined = joined_pairs(lattice)
    for i, j in sure_pairs(pair, sure):
        print(
            f"pair {i}-{j}: theta noise of the residual, top {top} transitions by flow not adding it: SD | Huber - mean"
        )
        for k in range(1, d * (d - 1) // 2 - 1):
            rows = np.flatnonzero((joined[:, i, j] == 0) & (lattice.num_edges == k))
            flow = log_flow[rows][:, None] + log_edges[rows]
            flow[:, pair_actions(i, j, d)] = -np.inf
            flow[lattice.children[rows] < 0] = -np.inf
            best = np.argsort(-flow, axis=None)[:top]
            sds, offsets = [], []
            for r, a in zip(*np.unravel_index(best, flow.shape)):
                noise = (draws[lattice.children[rows[r], a]][None, :] - draws[rows[r]][:, None]).ravel()
                sds.append(noise.std())
                offsets.append(huber_location(noise) - noise.mean())
            print(f"  {k}: {np.mean(sds):5.2f} | {np.mean(offsets):6.3f} (largest {np.max(np.abs(offsets)):.3f})")


if __name__ == "__main__":
    main()
