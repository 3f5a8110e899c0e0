"""Follow JSP-GFN's descent in edge count through one training run, against the exact posterior (linear Gaussian).

At d=10 every run starts dense and comes down over the whole schedule, ending where the schedule ends, below the
exact posterior's size under the defaults (docs/jspgfn-beyond-d5.md, twenty-fifth session). This script runs
accuracy_seeds.py (its table: edge RMSE, Pearson r and edges per sample at each --eval-at point) and after each
evaluation prints what may drive the descent:

- the replay's share of stored transitions by the edge count of the graph they start from (bins of 5 edges),
  and its mean, beside the sampler's graphs' edge counts: does the replay narrow onto the sampler's graphs?
- log P_T(G) (the graph's marginal, P(G | G0) P(stop | G), estimated with the mixture proposal) against the exact
  log R(G) = log P(D | G) + log P(G), on up to --graphs distinct graphs of the sampler's and as many of the exact
  posterior's: the OLS slope and Pearson r on the pooled graphs (slope > 1: too cold, < 1: too warm), the
  residual log P_T - log R regressed on the edge count (nats per edge; negative: each edge is charged too much,
  the sampler is too sparse), and the mean residual on the exact posterior's graphs minus that on the sampler's
  (negative: the sampler undervalues the posterior's graphs against its own).

  .venv/bin/python benchmarks/descent_trace.py gpu_data/d10er1/1=gpu_data/d10er1/exact1.npz --seeds 0 \
      --eval-at 3000 6000 10000 15000 20000 25000 30000 --set stop_score_offset=1 --set stop_target_tau=0.1 \
      --set theta_elbo=1 [--set replay_capacity=240000]

Every argument but --graphs and --orders is accuracy_seeds.py's (--orders: the Monte Carlo orders per graph of
the log P_T estimate, 64 by default). The estimate of log P_T errs low in log space (unbiased in
probability), more on graphs with more edges, so the per-edge figure carries a small negative bias of its own.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import accuracy_seeds  # noqa: E402
from jspgfn.conjugate import log_marginal_likelihood_graphs  # noqa: E402
from jspgfn.gflownet.core import Trainer  # noqa: E402
from jspgfn.gflownet.log_pt import TrajectoryScorer, log_prob_graphs  # noqa: E402
from log_pt_decomposition import fit_line  # noqa: E402

EDGE_BIN = 5


def distinct_subset(graphs, limit, rng):
    """Up to `limit` distinct graphs of uint8 [K, d, d], chosen uniformly among the distinct ones."""
    distinct = np.unique(np.asarray(graphs, np.uint8), axis=0)
    if len(distinct) > limit:
        distinct = distinct[np.sort(rng.choice(len(distinct), limit, replace=False))]
    return distinct


def ols(x, y):
    """Slope of y on x and Pearson r (x, y float [K]); nan for fewer than 3 points or constant x."""
    if len(x) < 3 or np.ptp(x) == 0:
        return float("nan"), float("nan")
    return fit_line(x, y)


def share_by_edges(edge_counts, num_bins):
    """Share of edge_counts int [K] in the bins [0, 5), [5, 10), ...: float [num_bins]."""
    bins = np.minimum(np.asarray(edge_counts) // EDGE_BIN, num_bins - 1)
    return np.bincount(bins, minlength=num_bins) / max(len(bins), 1)


class DescentTrainer(Trainer):
    """The library's Trainer, with the report that accuracy_seeds.py calls after each evaluation."""

    num_graphs = 150
    orders_per_graph = 64  # Monte Carlo orders of the log P_T estimate (log_pt.log_prob_graphs' num_samples)

    def report(self, state, graphs, exact, data):
        """Print the replay by edge count and log P_T against the exact log R on the sampler's graphs (uint8
        [K, d, d]) and the exact posterior's (exact: accuracy_exact_edges.load_exact), for the run (Trainer
        state) on data float32 [N, d]."""
        d = data.shape[1]
        num_bins = d * (d - 1) // 2 // EDGE_BIN + 1
        stored = np.asarray(state.replay.graphs[: int(state.replay.size)]).sum(axis=(1, 2))
        sampled = np.asarray(graphs).sum(axis=(1, 2))
        for name, counts in (("replay", stored), ("sampler", sampled), ("exact", exact.graphs.sum(axis=(1, 2)))):
            shares = " ".join(f"{v:.3f}" for v in share_by_edges(counts, num_bins))
            print(f"#   {name:7s} mean edges {np.mean(counts):5.1f}; share by {EDGE_BIN}-edge bin: {shares}")

        rng = np.random.default_rng(0)
        mine = distinct_subset(graphs, self.num_graphs, rng)
        theirs = distinct_subset(exact.graphs, self.num_graphs, rng)
        pooled = np.concatenate([mine, theirs])
        scorer = TrajectoryScorer(self.network_on(data, None).apply, state.params, d, self.cfg.max_parents)
        log_g = log_prob_graphs(scorer, pooled, rng, num_samples=self.orders_per_graph, proposal="mixture")
        log_pt = log_g + scorer.log_edges(pooled)[1]
        log_r = log_marginal_likelihood_graphs(self.model, data, pooled, graph_prior=self.graph_prior)
        residual = log_pt - log_r
        edges = pooled.sum(axis=(1, 2)).astype(float)
        slope, r = ols(log_r, log_pt)
        per_edge, _ = ols(edges, residual)
        gap = residual[len(mine) :].mean() - residual[: len(mine)].mean()
        each = [ols(log_r[part], log_pt[part]) for part in (slice(None, len(mine)), slice(len(mine), None))]
        print(
            f"#   log P_T vs exact log R on {len(mine)} + {len(theirs)} distinct graphs (sampler + exact): "
            f"slope {slope:.2f}, r {r:.2f} (sampler's {each[0][0]:.2f}, r {each[0][1]:.2f}; exact's "
            f"{each[1][0]:.2f}, r {each[1][1]:.2f}); residual per edge {per_edge:+.2f} nats; "
            f"exact's minus sampler's mean residual {gap:+.1f} nats; log R sampler's {log_r[: len(mine)].mean():.1f}, "
            f"exact's {log_r[len(mine) :].mean():.1f}",
            flush=True,
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], add_help=False)
    parser.add_argument("--graphs", type=int, default=150, help="distinct graphs of each side for log P_T")
    parser.add_argument("--orders", type=int, default=64, help="Monte Carlo orders per graph for log P_T")
    args, rest = parser.parse_known_args(argv)
    DescentTrainer.num_graphs, DescentTrainer.orders_per_graph = args.graphs, args.orders
    print(f"# descent trace; {args.graphs} distinct graphs a side, {args.orders} orders each for log P_T", flush=True)
    accuracy_seeds.main(rest, trainer_class=DescentTrainer)


if __name__ == "__main__":
    main()
