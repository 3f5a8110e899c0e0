"""How many nats of log-reward separate the empty graph from the posterior's graphs, per dataset.

JSP-GFN's stop and edge logits must span the differences of log R between the graphs a trajectory passes
through: from the empty graph to the posterior's typical graphs, and for one edge added to the empty graph.
With the linear Gaussian model's fixed noise variance (obs_var), these grow linearly with the data's variance
(about sum_i x_i^2 / (2 obs_var) over the rows explained), so datasets of one kind (same d, N and graph
density) differ by factors of several. Prints per dataset: the largest variance of a variable, the largest
gain of log P(D | G) from one edge added to the empty graph, and the mean gain from the empty graph to the
exact posterior's samples (the `jspgfn exact` .npz's graphs); theta integrated out in closed form, uniform
prior over DAGs.

  .venv/bin/python benchmarks/reward_range.py gpu_data/d10er2/1=gpu_data/d10er2/exact1.npz ... [--obs-var 0.01]
"""

import argparse

import numpy as np

from jspgfn.conjugate import log_marginal_likelihood_graphs
from jspgfn.dataset import load_dataset
from jspgfn.models import get_model


def reward_range(model, x, posterior_graphs):
    """(largest variance, largest one-edge gain from the empty graph, mean gain to posterior_graphs [K, d, d])."""
    d = x.shape[1]
    empty = np.zeros((1, d, d), np.uint8)
    singles = np.zeros((d * (d - 1), d, d), np.uint8)
    pairs = [(i, j) for i in range(d) for j in range(d) if i != j]
    singles[np.arange(len(pairs)), [p[0] for p in pairs], [p[1] for p in pairs]] = 1
    scores = log_marginal_likelihood_graphs(model, x, np.concatenate([empty, singles, posterior_graphs]))
    base = scores[0]
    single_gain = scores[1 : 1 + len(pairs)].max() - base
    return float(x.var(axis=0).max()), float(single_gain), float(scores[1 + len(pairs) :].mean() - base)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs", nargs="+", metavar="DATA=EXACT", help="dataset folder = its exact .npz")
    parser.add_argument("--obs-var", type=float, default=0.01)
    parser.add_argument("--prior-var", type=float, default=1.0)
    args = parser.parse_args(argv)
    model = get_model("lingauss", obs_var=args.obs_var, prior_var=args.prior_var)
    print("dataset  max_variance  best_one_edge_gain  mean_gain_to_posterior")
    for pair in args.pairs:
        data_dir, exact_path = pair.split("=", 1)
        x = np.asarray(load_dataset(data_dir).train, np.float64)
        variance, single, to_posterior = reward_range(model, x, np.load(exact_path)["graphs"])
        print(f"{data_dir}  {variance:.3f}  {single:.0f}  {to_posterior:.0f}")


if __name__ == "__main__":
    main()
