"""How far a trained JSP-GFN's P_T(G) is from the reward, read through importance weights (linear Gaussian data).

For trajectories tau of the sampler ending at G, w = R(G) P_B(tau | G) / P_F(tau) with the uniform backward policy
(P_B = 1 / |G|!) and R(G) = P(D | G) P(G) in closed form (theta integrated out; exact_dp.local_scores): E[w f(G)] /
E[w] is the posterior mean of f, so the self-normalised weights correct the sampler's edge marginals, as far as
their effective sample size (ESS) allows. Prints the edge RMSE against the exact marginals of the plain samples
and of the weighted ones (on the first 1,000, 5,000 and all), the ESS, the spread of log w about its median, and
by edge count the mean of log R - (log P_F - log P_B): flat where the sampler's sizes are calibrated.

  .venv/bin/python benchmarks/importance_weights.py RUN_FOLDER DATA_FOLDER EXACT.npz [--num 20000]
"""

import argparse
import sys
from pathlib import Path

import jax
import numpy as np
from scipy.special import gammaln

sys.path.insert(0, str(Path(__file__).parent))
from accuracy_exact_edges import compare  # noqa: E402
from jspgfn.dataset import load_dataset  # noqa: E402
from jspgfn.exact_dp import local_scores  # noqa: E402
from jspgfn.gflownet.sample import sample_trajectories  # noqa: E402
from jspgfn.gflownet.train import enable_compilation_cache, load_run  # noqa: E402
from open_pair_choice import log_scores  # noqa: E402


def self_normalised(log_w):
    """Normalised weights float [K] of log-weights [K] and their effective sample size."""
    w = np.exp(log_w - np.max(log_w))
    w /= w.sum()
    return w, 1.0 / np.sum(w**2)


def edge_rmse(marginals, exact):
    return compare(marginals, exact)[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run")
    parser.add_argument("data")
    parser.add_argument("exact")
    parser.add_argument("--num", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    enable_compilation_cache()
    trainer, state, info, _ = load_run(args.run)
    exact = np.load(args.exact)["edge"]
    table = local_scores(trainer.model, load_dataset(args.data).train, graph_prior=trainer.graph_prior)
    key = jax.random.PRNGKey(args.seed)
    graphs, log_pf = sample_trajectories(trainer.network.apply, state.params, key, args.num, trainer.num_variables)
    sizes = graphs.reshape(len(graphs), -1).sum(axis=1)
    log_r = log_scores(table, graphs)
    balance = log_r - (log_pf + gammaln(sizes + 1))  # log R - (log P_F - log P_B)
    print(f"# {args.run}: iteration {info['iteration']}, {args.num} trajectories, jax={jax.__version__}")
    print(f"exact edges {exact.sum():.1f}; plain samples: edge RMSE {edge_rmse(graphs.mean(0), exact):.4f}, "
          f"edges {sizes.mean():.1f}")  # fmt: skip
    for n in sorted({min(1000, args.num), min(5000, args.num), args.num}):
        w, ess = self_normalised(balance[:n])
        weighted = np.einsum("b,bij->ij", w, graphs[:n].astype(float))
        print(f"weighted, first {n}: edge RMSE {edge_rmse(weighted, exact):.4f}, edges {w @ sizes[:n]:.1f}, "
              f"ESS {ess:.0f}")  # fmt: skip
    spread = np.percentile(balance - np.median(balance), [1, 5, 25, 75, 95, 99, 99.9])
    print("log w - median, percentiles 1 5 25 75 95 99 99.9:", " ".join(f"{v:+.2f}" for v in spread))
    print("edges  count  mean log R - (log P_F - log P_B)  sd")
    for k in np.unique(sizes):
        m = sizes == k
        if m.sum() >= 30:
            print(f"{k:5d}  {m.sum():5d}  {balance[m].mean():10.2f}  {balance[m].std():6.2f}")


if __name__ == "__main__":
    main()
