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
session, docs/jspgfn-beyond-d5.md.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from jspgfn.conjugate import log_marginal_likelihood_graphs  # noqa: E402
from jspgfn.dataset import load_dataset  # noqa: E402
from jspgfn.gflownet import exact_flows  # noqa: E402
from jspgfn.gflownet.log_pt import TrajectoryScorer  # noqa: E402
from jspgfn.gflownet.train import load_run  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run")
    parser.add_argument("data")
    parser.add_argument("--top", type=int, default=8)
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


if __name__ == "__main__":
    main()
