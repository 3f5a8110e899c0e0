"""Where a trained JSP-GFN picks one direction of a pair the posterior keeps open (both directions likely).

For a pair (i, j) and a state S of the sampler where neither i->j nor j->i is in S and both can be added, the
sampler's log-odds of the two directions is
    L(S) = log P_F(S + i->j | S) - log P_F(S + j->i | S).
Detailed balance out of S (uniform P_B, the two children have the same edge count) asks L(S) = log F(A) - log F(B)
for the children A = S + i->j and B = S + j->i. Two readings of the right-hand side:
- T(S), from the sampler's own stops at the children: log F(G) = log R(G) - log P_F(stop | G) (exact log R, theta
  integrated out). L - T is the error of the edge logits at S given the children's stops.
- L*(S), the exact posterior's optimal flows: with a uniform backward policy, F*(G) is proportional to the sum over
  the DAGs G'' containing G of P(G'' | D) / C(|G''|, |G|) (a uniform backward trajectory from G'' passes through G
  with that probability), estimated from the exact posterior's samples (`jspgfn exact --samples`); reported where
  at least --min-support samples contain each child. T - L* is then the error the children's stops carry.
A second view at the children themselves: for visited states G holding one direction whose reversal G' is a DAG,
the local stop error D (benchmarks/stop_consistency.py: D < 0, G stops less often than its own children warrant) at
G and at G', and the implied log-flow gap [log R(G) - log P(stop | G)] - [log R(G') - log P(stop | G')].

Pairs: --pairs i-j ..., or every "open" pair of the exact marginals (P(i ~ j) >= 0.5 and the rarer direction at
least 10% of it; benchmarks/edge_error_parts.py's class). Means are over the visited states (the sampler's flow).

  .venv/bin/python benchmarks/open_pair_choice.py RUN_FOLDER DATA_FOLDER EXACT.npz [--num 500] [--pairs 5-7]
"""

import argparse
import sys
from math import comb
from pathlib import Path

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from jspgfn.conjugate import parent_codes  # noqa: E402
from jspgfn.dataset import load_dataset  # noqa: E402
from jspgfn.exact_dp import local_scores  # noqa: E402
from jspgfn.gflownet.sample import sample_graphs  # noqa: E402
from jspgfn.gflownet.train import enable_compilation_cache, load_run  # noqa: E402
from jspgfn.graphs import is_dag  # noqa: E402
from stop_consistency import audit, log_policy, visited_states  # noqa: E402


def open_pairs(edge, adjacency=0.5, rarer=0.1):
    """Pairs (i, j), i < j, the posterior joins with probability >= adjacency and orients the rarer way in at least
    `rarer` of those: edge float [d, d] exact marginals -> list of (i, j)."""
    d = len(edge)
    out = []
    for i in range(d):
        for j in range(i + 1, d):
            a = edge[i, j] + edge[j, i]
            if a >= adjacency and min(edge[i, j], edge[j, i]) >= rarer * a:
                out.append((i, j))
    return out


def log_scores(table, graphs):
    """Exact log R(G) (up to a constant) for graphs uint8 [B, d, d] from a local-score table [d, 2^d]: float [B]."""
    return table[np.arange(graphs.shape[-1]), parent_codes(graphs)].sum(axis=-1)


def optimal_log_flow(children, samples, weights=None):
    """log F*(G) under the uniform backward policy: log sum over samples G'' containing G of w(G'') / C(|G''|, |G|)
    (the probability that a uniform backward trajectory from G'' passes through G). children uint8 [C, d, d],
    samples uint8 [M, d, d] with weights float [M] (default 1/M: i.i.d. posterior samples; with every DAG and its
    probability, exactly exact_flows.optimal_flows' F*) -> (float [C], support int [C]: samples containing G)."""
    weights = np.full(len(samples), 1.0 / len(samples)) if weights is None else np.asarray(weights, float)
    sizes = samples.reshape(len(samples), -1).sum(axis=1)
    flat_s = samples.reshape(len(samples), -1).astype(bool)
    out, support = np.full(len(children), -np.inf), np.zeros(len(children), int)
    for c, g in enumerate(children):
        flat_g = g.reshape(-1).astype(bool)
        contains = np.all(flat_s[:, flat_g], axis=1)
        support[c] = int(contains.sum())
        if support[c]:
            k = int(flat_g.sum())
            paths = np.array([1.0 / comb(int(n), k) for n in sizes[contains]])
            out[c] = np.log(np.sum(weights[contains] * paths))
    return out, support


def choice_states(states, emask, i, j):
    """bool [S]: states where neither i->j nor j->i is present and both can be added."""
    return (states[:, i, j] == 0) & (states[:, j, i] == 0) & emask[:, i, j].astype(bool) & emask[:, j, i].astype(bool)


def pair_report(apply_fn, params, states, policy_at_states, table, samples, i, j, min_support):
    """One pair's figures (dict of floats and counts); policy_at_states: log_policy(apply_fn, params, states)."""
    _, log_edges, emask = policy_at_states
    sel = choice_states(states, emask, i, j)
    out = {"choice_states": int(sel.sum())}
    if sel.any():
        s = states[sel]
        a, b = s.copy(), s.copy()
        a[:, i, j] = 1
        b[:, j, i] = 1
        stop_a, _, _ = log_policy(apply_fn, params, a)
        stop_b, _, _ = log_policy(apply_fn, params, b)
        gain = log_scores(table, a) - log_scores(table, b)
        lo = log_edges[sel, i, j] - log_edges[sel, j, i]
        t = gain - stop_a + stop_b
        out.update(L=lo.mean(), T=t.mean(), score_gap=gain.mean(), stop_gap=(stop_a - stop_b).mean())
        flow_a, sup_a = optimal_log_flow(a, samples)
        flow_b, sup_b = optimal_log_flow(b, samples)
        ok = (sup_a >= min_support) & (sup_b >= min_support)
        out["optimal_states"] = int(ok.sum())
        if ok.any():
            out.update(L_opt=lo[ok].mean(), T_opt=t[ok].mean(), L_star=(flow_a[ok] - flow_b[ok]).mean())
    for name, (u, v) in (("ij", (i, j)), ("ji", (j, i))):
        have = states[:, u, v] == 1
        g = states[have]
        rev = g.copy()
        rev[:, u, v], rev[:, v, u] = 0, 1
        dag = is_dag(rev) if len(g) else np.zeros(0, bool)
        out[f"states_{name}"] = int(have.sum())
        out[f"reversible_{name}"] = int(dag.sum())
        if dag.any():
            g, rev = g[dag], rev[dag]
            _, stop_g, ((d_g, _, _),), _ = audit(apply_fn, params, g, [table])
            _, stop_r, ((d_r, _, _),), _ = audit(apply_fn, params, rev, [table])
            flow_gap = (log_scores(table, g) - stop_g) - (log_scores(table, rev) - stop_r)
            out.update({f"D_{name}": d_g.mean(), f"D_rev_{name}": d_r.mean(), f"flow_gap_{name}": flow_gap.mean()})
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", help="a JSP-GFN run folder (jspgfn train --out), linear Gaussian")
    parser.add_argument("data", help="its dataset folder")
    parser.add_argument("exact", type=Path, help="`jspgfn exact` .npz of the dataset (with --samples)")
    parser.add_argument("--num", type=int, default=500, help="trajectories of the sampler")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pairs", nargs="*", default=None, metavar="I-J", help="default: the open pairs")
    parser.add_argument("--min-support", type=int, default=20, help="exact samples containing each child for L*")
    args = parser.parse_args(argv)
    enable_compilation_cache()
    trainer, state, info, _ = load_run(args.run)
    x = load_dataset(args.data).train
    exact = np.load(args.exact)
    table = local_scores(trainer.model, x)
    apply_fn, d = trainer.network.apply, trainer.num_variables
    pairs = [tuple(int(v) for v in p.split("-")) for p in args.pairs] if args.pairs else open_pairs(exact["edge"])
    graphs = sample_graphs(apply_fn, state.params, jax.random.PRNGKey(args.seed + 1), 1000, d)
    freq = graphs.mean(axis=0)
    states = visited_states(apply_fn, state.params, jax.random.PRNGKey(args.seed), args.num, d)
    print(f"# {args.run} iteration {info['iteration']}: {len(states)} states on {args.num} trajectories")
    policy_at_states = log_policy(apply_fn, state.params, states)  # shared by every pair
    for i, j in pairs:
        r = pair_report(
            apply_fn, state.params, states, policy_at_states, table, exact["graphs"], i, j, args.min_support
        )
        print(
            f"pair {i}-{j}: exact {exact['edge'][i, j]:.2f} / {exact['edge'][j, i]:.2f}, "
            f"sampler {freq[i, j]:.2f} / {freq[j, i]:.2f}"
        )
        if r["choice_states"]:
            print(
                f"  choice at {r['choice_states']} states: L {r['L']:+.2f}, T {r['T']:+.2f} "
                f"(score gap {r['score_gap']:+.2f}, stop gap {r['stop_gap']:+.2f})"
            )
            if r["optimal_states"]:
                print(
                    f"  where the exact samples support both children ({r['optimal_states']} states): L "
                    f"{r['L_opt']:+.2f}, T {r['T_opt']:+.2f}, optimal L* {r['L_star']:+.2f}"
                )
        for name, (u, v) in (("ij", (i, j)), ("ji", (j, i))):
            line = f"  states with {u}->{v}: {r[f'states_{name}']}, reversible {r[f'reversible_{name}']}"
            if f"D_{name}" in r:
                line += (
                    f"; D there {r[f'D_{name}']:+.2f}, D at the reversal {r[f'D_rev_{name}']:+.2f}, "
                    f"log-flow gap {r[f'flow_gap_{name}']:+.2f}"
                )
            print(line)


if __name__ == "__main__":
    main()
