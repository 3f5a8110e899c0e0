"""Is the sampler a tempered posterior, or one with a per-edge penalty? The exact reweighting nearest to a run.

A sampler that ends under the posterior's size with graphs scoring at or above the posterior's typical ones
(docs/jspgfn-beyond-d5.md, thirty-third and thirty-fourth sessions) looks like the posterior at a lower
temperature. Under the uniform DAG prior, P_beta(G) proportional to exp(beta log P(D | G)) is structure-modular
(every local score times beta), so the subset DP gives its edge marginals exactly for any beta. For each row of
an `accuracy_seeds.py --json` file (its sampler's edge marginals, "marginal"), prints the edge RMSE against the
exact posterior (beta = 1) and against the best-fitting P_beta on a grid, that beta and P_beta's expected edges:
beta > 1 with a much lower RMSE says the run's error is mostly a temperature (too concentrated); an RMSE that
stays high at every beta says the error is elsewhere. The same for a size tilt, P_b(G) proportional to
P(G | D) exp(log_b |G|) (every local score plus log_b per parent, also structure-modular): log_b < 0 with a much
lower RMSE says the run is the posterior with a per-edge penalty, as a stop biased by a constant per edge would
give (thirty-fifth session). Also prints the run's RMSE against the diagonal family's target P_mf (family_floor.py)
and P_mf's against the exact (the floor), and the share of the run's squared error on the uncertain pairs (exact
marginal in (0.1, 0.9)). Linear Gaussian model, d <= ~14 (one DP per grid point).

  .venv/bin/python benchmarks/score_stop_offset.py --weight 1 DATA=EXACT ... --json ROWS.json [--set ...]
  .venv/bin/python benchmarks/tempered_fit.py ROWS.json [--iteration 6000]
"""

import argparse
import json
from pathlib import Path

import numpy as np

from family_floor import compare, mean_field_edges, mean_field_gaps
from jspgfn.dataset import load_dataset
from jspgfn.exact_dp import local_scores, subset_posterior
from jspgfn.models import get_model
from jspgfn.subsets import popcount


def tempered_edges(scores, beta):
    """Edge marginals of P_beta(G) proportional to exp(beta sum_j scores[j, Pa_j]): scores float64 [d, 2^d]
    (-inf where excluded) -> float64 [d, d]."""
    return subset_posterior(np.where(np.isfinite(scores), beta * scores, -np.inf)).edge


def tilted_edges(scores, log_b):
    """Edge marginals of P_b(G) proportional to exp(sum_j scores[j, Pa_j] + log_b |Pa_j|): scores float64
    [d, 2^d] indexed by parent-set code (-inf where excluded) -> float64 [d, d]."""
    sizes = popcount(np.arange(scores.shape[1])).astype(np.float64)
    return subset_posterior(np.where(np.isfinite(scores), scores + log_b * sizes[None, :], -np.inf)).edge


def rmse_off_diagonal(a, b):
    return compare(a, b)[0]


def best_fit(edges_of, marginal, grid):
    """(grid point, RMSE, expected edges) where edges_of(point) float [d, d] is nearest marginal [d, d]."""
    fits = []
    for point in grid:
        edges = edges_of(point)
        fits.append((rmse_off_diagonal(marginal, edges), point, float(edges.sum())))
    rmse, point, edges = min(fits)
    return point, rmse, edges


def best_beta(scores, marginal, betas):
    """(beta, RMSE, edges of P_beta) at the grid point whose tempered marginals are nearest marginal [d, d]."""
    return best_fit(lambda beta: tempered_edges(scores, beta), marginal, betas)


def best_tilt(scores, marginal, log_bs):
    """(log_b, RMSE, edges of P_b) at the grid point whose size-tilted marginals are nearest marginal [d, d]."""
    return best_fit(lambda log_b: tilted_edges(scores, log_b), marginal, log_bs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", help="accuracy_seeds.py --json file (rows with 'dataset' and 'marginal')")
    parser.add_argument("--iteration", type=int, default=None, help="rows at this iteration (default: the last)")
    parser.add_argument("--betas", type=float, nargs="+", default=list(np.round(np.arange(0.5, 3.01, 0.05), 2)))
    parser.add_argument("--log-bs", type=float, nargs="+", default=list(np.round(np.arange(-3.0, 1.01, 0.1), 2)))
    parser.add_argument("--obs-var", type=float, default=0.01)
    parser.add_argument("--prior-var", type=float, default=1.0)
    args = parser.parse_args()
    rows = json.loads(Path(args.rows).read_text()).get("rows", [])
    if not rows or any("marginal" not in row for row in rows):
        raise SystemExit(f"{args.rows}: no rows with edge marginals (write it with accuracy_seeds.py --json)")
    iteration = args.iteration or max(row["iteration"] for row in rows)
    if not any(row["iteration"] == iteration for row in rows):
        raise SystemExit(f"{args.rows}: no rows at iteration {iteration}")
    model = get_model("lingauss", obs_var=args.obs_var, prior_var=args.prior_var)
    print(
        "dataset  seed  iter  rmse_beta1  best_beta  rmse_best  edges_run  edges_beta1  edges_best  best_log_b"
        "  rmse_tilt  edges_tilt  rmse_mf  mf_floor  uncertain_share",
        flush=True,
    )
    for row in (r for r in rows if r["iteration"] == iteration):
        x = load_dataset(row["dataset"]).train
        scores = local_scores(model, x)
        marginal = np.asarray(row["marginal"], np.float64)
        exact = tempered_edges(scores, 1.0)
        beta, rmse, edges = best_beta(scores, marginal, args.betas)
        log_b, rmse_tilt, edges_tilt = best_tilt(scores, marginal, args.log_bs)
        mean_field = mean_field_edges(scores, mean_field_gaps(model, x))
        off = ~np.eye(len(exact), dtype=bool)
        error = (marginal - exact)[off] ** 2
        uncertain = (exact[off] > 0.1) & (exact[off] < 0.9)
        print(
            f"{row['dataset']}  {row['seed']}  {iteration}  {rmse_off_diagonal(marginal, exact):10.3f}  {beta:9.2f}"
            f"  {rmse:9.3f}  {marginal.sum():9.1f}  {exact.sum():11.1f}  {edges:10.1f}"
            f"  {log_b:10.2f}  {rmse_tilt:9.3f}  {edges_tilt:10.1f}"
            f"  {rmse_off_diagonal(marginal, mean_field):7.3f}  {rmse_off_diagonal(mean_field, exact):8.3f}"
            f"  {error[uncertain].sum() / error.sum():15.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
