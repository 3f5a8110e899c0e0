"""benchmarks/family_floor.py: the mean-field gap of a whole graph, read from the per-parent-set table by codes,
and computed for the given graphs' parent sets only, against the KL of the best diagonal Gaussian from each node's
exact weight posterior, computed directly."""

import numpy as np

from conftest import benchmark_module
from jspgfn.models import get_model


def gaussian_kl(mean_q, cov_q, mean_p, cov_p):
    """KL(N(mean_q, cov_q) || N(mean_p, cov_p)), the general closed form."""
    k = len(mean_q)
    prec_p = np.linalg.inv(cov_p)
    diff = mean_p - mean_q
    return 0.5 * (
        np.trace(prec_p @ cov_q) + diff @ prec_p @ diff - k + np.linalg.slogdet(cov_p)[1] - np.linalg.slogdet(cov_q)[1]
    )


def test_graph_gaps_equal_the_best_diagonal_kl_per_node():
    floor = benchmark_module("family_floor")
    model = get_model("lingauss", obs_var=0.1, prior_var=1.0)
    rng = np.random.default_rng(0)
    d = 5
    x = rng.standard_normal((40, d)) @ rng.standard_normal((d, d))  # correlated columns
    gaps = floor.mean_field_gaps(model, x)
    graphs = np.zeros((3, d, d), np.uint8)
    graphs[0, [0, 1, 2], 3] = 1  # three parents of node 3
    graphs[1, [0, 1], 4] = 1  # two parents of node 4 ...
    graphs[1, [2, 3], 0] = 1  # ... and two of node 0
    graphs[2, 0, 1] = 1  # one parent: no gap
    expected = []
    for graph in graphs:
        total = 0.0
        for j in range(d):
            parents = np.flatnonzero(graph[:, j])
            if len(parents) == 0:
                continue
            design = x[:, parents]
            precision = design.T @ design / model.obs_var + np.eye(len(parents)) / model.prior_var
            mean = np.linalg.solve(precision, design.T @ x[:, j] / model.obs_var)
            # the best diagonal q of a Gaussian: its mean, variances 1 / precision_ii
            total += gaussian_kl(mean, np.diag(1.0 / np.diag(precision)), mean, np.linalg.inv(precision))
        expected.append(total)
    got = floor.graph_gaps(gaps, graphs)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(floor.mean_field_gaps_of(model, x, graphs), expected, rtol=1e-6, atol=1e-9)
    assert got[0] > 0.01 and got[1] > 0.01 and got[2] == 0.0  # not a comparison of zeros
