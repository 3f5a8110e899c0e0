"""The log P_phi(G | G0) estimators on a trained run's own samples: the paper's uniform orders and the mixture,
against the exact sum (graphs of up to --max-edges edges) and, for complete DAGs, against a counting bound.

Exact: `log_pt.log_prob_graph_exact`, a dynamic program over the 2^K edge subsets. Counting bound: the samples
come from P_T, so a share s of complete DAGs (d! of them, one per order of the nodes) estimates their total
mass; the mean of log P_T(G) over the sampled ones is minus an entropy, at least log s - log d!; and
log P(G | G0) >= log P_T(G), P(stop | G) <= 1. An estimate far below this bound is wrong by about the gap.

  .venv/bin/python benchmarks/log_pt_estimators.py RUN_DIR SAMPLES.npz [--exact 6] [--complete 5] [--repeats 3]
"""

import argparse
import math
import time
import warnings

import numpy as np

from jspgfn.gflownet.log_pt import TrajectoryScorer, log_prob_graph_exact, log_prob_graphs
from jspgfn.gflownet.train import load_run
from jspgfn.samples import load_samples


def estimates(scorer, graphs, proposal, repeats, beam_size, mc_samples):
    """[repeats, n] estimates, one random stream per repeat; and the seconds per repeat."""
    start = time.time()
    out = np.stack(
        [
            log_prob_graphs(scorer, graphs, np.random.default_rng(r), beam_size, mc_samples, proposal=proposal)
            for r in range(repeats)
        ]
    )
    return out, (time.time() - start) / repeats


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("samples", help="samples .npz of this run (`jspgfn sample`)")
    parser.add_argument("--exact", type=int, default=6, help="sampled graphs of 8..max-edges edges checked exactly")
    parser.add_argument("--max-edges", type=int, default=15)
    parser.add_argument("--complete", type=int, default=5, help="sampled complete DAGs estimated")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--beam-size", type=int, default=16)
    parser.add_argument("--mc-samples", type=int, default=64)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")

    trainer, state, _, _ = load_run(args.run_dir)
    samples = load_samples(args.samples)
    d = samples.num_variables
    scorer = TrajectoryScorer(trainer.network.apply, state.params, d, trainer.cfg.max_parents)
    edges = samples.graphs.sum(axis=(1, 2))
    print(f"{samples.num_samples} samples, d={d}; beam {args.beam_size}, {args.mc_samples} Monte Carlo orders")

    checked = np.flatnonzero((edges >= 8) & (edges <= args.max_edges))[: args.exact]
    if len(checked):
        graphs = samples.graphs[checked]
        exact = np.array([log_prob_graph_exact(scorer, g, args.max_edges) for g in graphs])
        print(f"\nagainst the exact sum ({len(checked)} graphs; estimate - exact, {args.repeats} repeats each):")
        for proposal in ("uniform", "mixture"):
            est, seconds = estimates(scorer, graphs, proposal, args.repeats, args.beam_size, args.mc_samples)
            err = est - exact
            print(
                f"  {proposal:8s} mean {err.mean():7.2f}, median {np.median(err):7.2f}, worst {err.min():7.2f} nats "
                f"({seconds:.1f} s per pass)"
            )
        print("  exact: " + ", ".join(f"K={int(edges[i])}: {e:.2f}" for i, e in zip(checked, exact)))

    full = d * (d - 1) // 2
    complete = np.flatnonzero(edges == full)
    if len(complete):
        share = len(complete) / samples.num_samples
        bound = math.log(share) - math.lgamma(d + 1)
        graphs = samples.graphs[complete[: args.complete]]
        print(f"\ncomplete DAGs: {len(complete)} of {samples.num_samples} samples; mean log P(G | G0) >= {bound:.1f}")
        for proposal in ("uniform", "mixture"):
            est, seconds = estimates(scorer, graphs, proposal, args.repeats, args.beam_size, args.mc_samples)
            print(
                f"  {proposal:8s} mean {est.mean():8.1f}, range {est.min():8.1f} to {est.max():8.1f} "
                f"({len(graphs)} graphs, {seconds:.1f} s per pass)"
            )


if __name__ == "__main__":
    main()
