"""VBG's ideal fixed point on small graphs: how close can VBG's q(G) q(theta) get to the exact posterior?

q(G) is optimised exactly over every DAG (q(G) proportional to VBG's reward R(G), enumerated), alternated
with the closed-form q(theta) update from q(G)'s exact moments, until it stops moving. This separates
VBG's own (mean-field) bias from the GFlowNet's training error. Prints the edge RMSE, Pearson r and max
error against the exact edge marginals, with and without the KL term of the reward.

  .venv/bin/python benchmarks/vbg_fixed_point.py results/quick/small_graphs/data/0 [...]
"""

import argparse

import jax.numpy as jnp
import numpy as np
from scipy.special import softmax

from jspgfn.dataset import load_dataset
from jspgfn.exact import compute_exact_posterior
from jspgfn.features import offdiagonal
from jspgfn.graphs import enumerate_dags
from jspgfn.models import LinearGaussian, get_graph_prior
from jspgfn_baselines.shared import vbg


def fixed_point(x, model, dags, with_kl, rounds=200):
    """q(G) over `dags` [K, d, d] at VBG's fixed point: returns its edge marginals [d, d]."""
    d = x.shape[1]
    xtx = x.T @ x
    prior = get_graph_prior("uniform", d)
    q = vbg.prior_q(model, d)
    weights = np.full(len(dags), 1.0 / len(dags))
    g = dags.astype(np.float64)
    log_prior = prior.log_prob(jnp.asarray(dags, jnp.float32))
    for _ in range(rounds):
        edge_mean = np.einsum("k,kij->ij", weights, g)
        edge_outer = np.einsum("k,kij,klj->jil", weights, g, g)
        q = vbg.update_q(xtx, edge_mean, edge_outer, model)
        mu, cov = jnp.asarray(q.mu, jnp.float32), jnp.asarray(q.cov, jnp.float32)
        log_r = log_prior + vbg.expected_log_likelihood(mu, cov, dags, xtx, x.shape[0], model.obs_var)
        if with_kl:
            log_r = log_r - vbg.kl_to_prior(mu, cov, dags, model.prior_mean, model.prior_var)
        new = softmax(np.asarray(log_r, np.float64))
        if np.abs(new - weights).max() < 1e-9:
            weights = new
            break
        weights = new
    return np.einsum("k,kij->ij", weights, g)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="+", help="dataset folders (d <= 5)")
    args = parser.parse_args()
    model = LinearGaussian()
    print("dataset | reward | edge RMSE | Pearson r | max error")
    for path in args.data:
        ds = load_dataset(path)
        x = ds.train.astype(np.float64)
        dags = np.asarray(enumerate_dags(ds.num_variables), np.uint8)
        exact = offdiagonal(compute_exact_posterior(ds, model, get_graph_prior("uniform", ds.num_variables)).edge)
        for with_kl in (True, False):
            edges = offdiagonal(fixed_point(x, model, dags, with_kl))
            rmse = float(np.sqrt(np.mean((edges - exact) ** 2)))
            r = float(np.corrcoef(edges, exact)[0, 1])
            label = "with KL" if with_kl else "no KL"
            print(f"{path} | {label} | {rmse:.3f} | {r:.3f} | {np.abs(edges - exact).max():.3f}")


if __name__ == "__main__":
    main()
