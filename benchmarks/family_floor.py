"""The diagonal family's floor: how close JSP-GFN (diag) can get to the exact edge marginals at best.

With q(theta | G) restricted to diagonal Gaussians, the graph distribution the SubTB conditions aim at
is P_q(G) proportional to exp(ELBO_q(G)) (where the mean residual vanishes). Its best case is the
mean-field optimum of each P(theta | G, D): for the linear Gaussian model the posterior of node j's
weights has precision L = X_Pa^T X_Pa / obs_var + I / prior_var, and the best diagonal q misses the
log marginal by KL = 0.5 (sum_i log L_ii - log det L), a function of the parent set only, so
P_mf(G) proportional to P(G | D) exp(-sum_j KL(Pa_j)) is structure-modular and the subset DP gives its
edge marginals exactly. Prints, per dataset: edge RMSE and Pearson r of P_mf against the exact
posterior, and the expected number of edges under each; given DATA=EXACT (`jspgfn exact`'s .npz), also the
summed gap sum_j KL(Pa_j) over the exact posterior's samples (mean and standard deviation, nats): what a
theta-free score from the best diagonal q lies below the exact log P(D | G) on the posterior's graphs.
JSP-GFN (full) has no such floor (its family holds every P(theta | G, D) of the linear Gaussian model).

  .venv/bin/python benchmarks/family_floor.py results/quick/medium_graphs_d10_er1/data/{0,1,2,3,4}
  .venv/bin/python benchmarks/family_floor.py gpu_data/d10er2/3=gpu_data/d10er2/exact3.npz
"""

import argparse
import itertools

import numpy as np

from jspgfn.dataset import load_dataset
from jspgfn.exact import load_exact
from jspgfn.exact_dp import local_scores, subset_posterior
from jspgfn.models import get_model


def _precisions_and_gaps(model, gram, rows):
    """Precisions L = gram[Pa, Pa] + I / prior_var of parent sets rows int [M, k] and the best diagonal q's
    KL 0.5 (sum_i log L_ii - log det L) of each: float64 [M]."""
    lam = gram[rows[:, :, None], rows[:, None, :]] + np.eye(rows.shape[1]) / model.prior_var
    diag = np.log(np.diagonal(lam, axis1=1, axis2=2)).sum(axis=1)
    return 0.5 * (diag - np.linalg.slogdet(lam)[1])


def mean_field_gaps(model, x):
    """KL(best diagonal q || P(theta_j | Pa, D)) for every parent code: float64 [2^d] (0 for |Pa| <= 1)."""
    x = np.asarray(x, np.float64)
    d = x.shape[1]
    gram = x.T @ x / model.obs_var
    gaps = np.zeros(1 << d)
    for k in range(2, d):
        subsets = np.array(list(itertools.combinations(range(d), k)))  # [M, k]
        codes = (1 << subsets).sum(axis=1)
        for start in range(0, len(subsets), 20_000):
            gaps[codes[start : start + 20_000]] = _precisions_and_gaps(model, gram, subsets[start : start + 20_000])
    return gaps


def mean_field_gaps_of(model, x, graphs):
    """sum_j KL(best diagonal q || P(theta_j | Pa_j, D)) of each graph uint8 [S, d, d] -> float64 [S]: the gaps
    of mean_field_gaps for the parent sets these graphs hold only (any d)."""
    x = np.asarray(x, np.float64)
    graphs = np.asarray(graphs, np.int64)
    gram = x.T @ x / model.obs_var
    total = np.zeros(len(graphs))
    pairs = {}  # parent set -> KL, each distinct one computed once
    for s, graph in enumerate(graphs):
        for j in range(graph.shape[-1]):
            parents = tuple(np.flatnonzero(graph[:, j]))
            if len(parents) < 2:
                continue
            if parents not in pairs:
                pairs[parents] = float(_precisions_and_gaps(model, gram, np.array([parents]))[0])
            total[s] += pairs[parents]
    return total


def mean_field_edges(scores, gaps):
    """Edge marginals of P_mf(G) proportional to P(G | D) exp(-sum_j gaps[Pa_j]): local scores float64 [d, 2^d]
    (-inf where excluded), mean_field_gaps [2^d] -> float64 [d, d]."""
    return subset_posterior(np.where(np.isfinite(scores), scores - gaps[None, :], -np.inf)).edge


def graph_gaps(gaps, graphs):
    """sum_j gaps[code of Pa_j] for graphs uint8 [S, d, d] (graphs[s, i, j] = 1 iff i -> j) -> float64 [S]."""
    d = graphs.shape[-1]
    codes = (np.asarray(graphs, np.int64) << np.arange(d)[None, :, None]).sum(axis=1)  # [S, d]
    return gaps[codes].sum(axis=1)


def compare(a, b):
    off = ~np.eye(a.shape[0], dtype=bool)
    return float(np.sqrt(np.mean((a[off] - b[off]) ** 2))), float(np.corrcoef(a[off], b[off])[0, 1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "datasets", nargs="+", metavar="DATA[=EXACT]", help="dataset folders (linear Gaussian, d <= ~16)"
    )
    parser.add_argument("--obs-var", type=float, default=0.01)
    parser.add_argument("--prior-var", type=float, default=1.0)
    args = parser.parse_args()
    model = get_model("lingauss", obs_var=args.obs_var, prior_var=args.prior_var)
    print("dataset  rmse_mf  pearson_mf  edges_mf  edges_exact  gap_on_exact_samples")
    rows = []
    for spec in args.datasets:
        folder, _, exact_path = spec.partition("=")
        x = load_dataset(folder).train
        scores = local_scores(model, x)
        exact = subset_posterior(scores).edge
        gaps = mean_field_gaps(model, x)
        mf = mean_field_edges(scores, gaps)
        rmse, r = compare(mf, exact)
        rows.append(rmse)
        gap = "-"
        if exact_path:
            sample_gaps = graph_gaps(gaps, load_exact(exact_path).graphs)
            gap = f"{sample_gaps.mean():.1f} +- {sample_gaps.std():.1f}"
        print(f"{folder}  {rmse:7.3f}  {r:10.3f}  {mf.sum():8.1f}  {exact.sum():11.1f}  {gap}", flush=True)
    print(f"mean rmse_mf {np.mean(rows):.3f} (max {np.max(rows):.3f})")


if __name__ == "__main__":
    main()
