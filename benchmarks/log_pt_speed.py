"""The log P_T(G) estimate (beam search + Monte Carlo, gflownet/log_pt.py): graphs batched together against
one graph at a time, side by side in one run on the same graphs and random streams.

`log_prob_graphs` runs the beam searches of all graphs in lockstep (one network call per step for every
live beam) and scores all Monte Carlo trajectories together; the loop calls `log_prob_graph` per graph,
the call pattern of the first implementation (one network call per beam step and per graph). Both give
the same estimates (printed: the largest difference). Blocks alternate, best of --repeats.

    .venv/bin/python benchmarks/log_pt_speed.py RUN_DIR [--num 100] [--beam-size 16] [--mc-samples 64]
"""

import argparse
import time

import jax
import numpy as np

from jspgfn.gflownet.log_pt import TrajectoryScorer, log_prob_graph, log_prob_graphs
from jspgfn.gflownet.sample import sample_joint
from jspgfn.gflownet.train import load_run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("--num", type=int, default=100, help="graphs sampled from the run")
    parser.add_argument("--beam-size", type=int, default=16)
    parser.add_argument("--mc-samples", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    trainer, state, _, _ = load_run(args.run_dir)
    d = trainer.num_variables
    graphs, _ = sample_joint(
        trainer.network.apply, trainer.model, state.params, jax.random.PRNGKey(0), args.num, d, trainer.cfg.max_parents
    )
    graphs = np.asarray(graphs, np.uint8)
    scorer = TrajectoryScorer(trainer.network.apply, state.params, d, trainer.cfg.max_parents)

    def batched():
        return log_prob_graphs(scorer, graphs, np.random.default_rng(0), args.beam_size, args.mc_samples)

    def one_at_a_time():
        rng = np.random.default_rng(0)
        return np.array([log_prob_graph(scorer, g, rng, args.beam_size, args.mc_samples) for g in graphs])

    for fn in (batched, one_at_a_time):  # compile every padded shape once, untimed
        fn()
    best = {"batched": np.inf, "one at a time": np.inf}
    for _ in range(args.repeats):
        for name, fn in (("batched", batched), ("one at a time", one_at_a_time)):
            start = time.perf_counter()
            estimate = fn()
            best[name] = min(best[name], time.perf_counter() - start)
            if name == "batched":
                reference = estimate
            else:
                difference = float(np.max(np.abs(estimate - reference)))
    edges = graphs.reshape(len(graphs), -1).sum(axis=1)
    print(
        f"# {args.run_dir}: d={d}, {len(graphs)} graphs ({edges.mean():.1f} edges on average, max {edges.max()}), "
        f"beam {args.beam_size}, {args.mc_samples} Monte Carlo orders; best of {args.repeats}"
    )
    print("| log P_T(G) of every graph | seconds |")
    print("|---|---|")
    for name, seconds in best.items():
        print(f"| {name} | {seconds:.2f} |")
    print(f"\nspeed-up {best['one at a time'] / best['batched']:.1f}x; largest difference {difference:.2e} nats")


if __name__ == "__main__":
    main()
