"""Does the Huber loss on the noisy theta residuals bias the graph flows toward dense graphs? (d=5)

With q(theta | G) at the mean-field optimum of the linear Gaussian posterior, the noise of
log R(G, theta) - log q(theta | G) under q is, per node, -1/2 u^T (C - I) u with u ~ N(0, I) and C the
posterior precision of the node's weights scaled to unit diagonal (its mean is zero: the residual's mean is
the ELBO). The Huber loss (delta 1) of a transition's residual vanishes in expectation at the Huber location
of that noise, not at its mean; this prints that location's mean per edge count, and the complete-DAG mass
and mean edges of the graph distribution the biased conditions aim at (the shifts accumulated along the
lattice, averaged over the parents of each graph) beside P_mf (no bias) and the exact posterior.

  .venv/bin/python benchmarks/huber_bias.py DATA [--delta 1.0]
"""

import argparse

import numpy as np

from family_floor import mean_field_gaps
from jspgfn.dataset import load_dataset
from jspgfn.exact_dp import local_scores
from jspgfn.gflownet import exact_flows
from jspgfn.models import get_model

_DRAWS = 600


def node_noise(model, x, rng):
    """Draws of the per-node noise of log R - log q at the mean-field q, per parent code: [2^d, _DRAWS]."""
    d = x.shape[1]
    gram = x.T @ x / model.obs_var
    noise = np.zeros((1 << d, _DRAWS))
    for code in range(1 << d):
        parents = [i for i in range(d) if code >> i & 1]
        if len(parents) < 2:
            continue  # a diagonal q is exact for one weight
        precision = gram[np.ix_(parents, parents)] + np.eye(len(parents)) / model.prior_var
        scale = 1 / np.sqrt(np.diag(precision))
        eigenvalues = np.linalg.eigvalsh(scale[:, None] * precision * scale[None, :])
        noise[code] = -0.5 * (rng.standard_normal((_DRAWS, len(parents))) ** 2 * (eigenvalues - 1)).sum(1)
    return noise


def huber_location(samples, delta, iterations=40):
    """The m with mean(clip(samples - m, -delta, delta)) = 0, per row of samples [M, K]."""
    m = np.median(samples, axis=1)
    for _ in range(iterations):
        m = m + np.mean(np.clip(samples - m[:, None], -delta, delta), axis=1)
    return m


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", help="a d=5 linear Gaussian dataset folder")
    parser.add_argument("--delta", type=float, default=1.0, help="the Huber loss's delta")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    model = get_model("lingauss")
    x = load_dataset(args.data).train.astype(np.float64)
    d = x.shape[1]
    noise = node_noise(model, x, rng)
    scores, gaps = local_scores(model, x), mean_field_gaps(model, x)
    lattice = exact_flows.dag_lattice(d)
    codes = np.einsum("mij,i->mj", lattice.graphs.astype(np.int64), 1 << np.arange(d))  # [M, d] parent codes
    log_exact = scores[np.arange(d), codes].sum(axis=1)
    log_mf = log_exact - gaps[codes].sum(axis=1)
    log_biased = np.where(lattice.num_edges == 0, log_mf, np.nan)
    for level in range(int(lattice.num_edges.max())):
        parent, action, child = exact_flows.edges_by_level(lattice, level)
        # the residual's noise: every node drawn independently for G and for G'
        residual = sum(
            noise[codes[child, j]][:, rng.permutation(_DRAWS)] - noise[codes[parent, j]][:, rng.permutation(_DRAWS)]
            for j in range(d)
        )
        bias = huber_location(residual, args.delta)
        candidate = log_biased[parent] + log_mf[child] - log_mf[parent] + bias
        total, count = np.zeros(len(lattice.graphs)), np.zeros(len(lattice.graphs))
        np.add.at(total, child, candidate)
        np.add.at(count, child, 1)
        reached = np.unique(child)
        log_biased[reached] = total[reached] / count[reached]
        print(f"edges {level} -> {level + 1}: mean Huber location {bias.mean():+.3f} nats (sd {bias.std():.3f})")
    complete = lattice.num_edges == lattice.num_edges.max()
    for name, log_p in (("exact", log_exact), ("P_mf", log_mf), ("Huber target", log_biased)):
        p = np.exp(log_p - np.logaddexp.reduce(log_p))
        print(f"{name:13s} complete-DAG mass {p[complete].sum():.2e}  mean edges {p @ lattice.num_edges:.2f}")


if __name__ == "__main__":
    main()
