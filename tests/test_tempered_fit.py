"""benchmarks/tempered_fit.py: the tempered posterior's edge marginals by the subset DP against the sum over all
DAGs of exp(beta log P(D | G)), and the grid fit finding the temperature that made a set of marginals."""

import numpy as np

from conftest import benchmark_module
from jspgfn.conjugate import log_marginal_likelihood_graphs
from jspgfn.exact_dp import local_scores
from jspgfn.graphs import enumerate_dags
from jspgfn.models import get_model


def _data(d=4, n=30):
    rng = np.random.default_rng(3)
    return rng.standard_normal((n, d)) @ np.triu(rng.standard_normal((d, d)), 1) + rng.standard_normal((n, d))


def test_tempered_edges_equal_brute_force_over_all_dags():
    fit = benchmark_module("tempered_fit")
    model = get_model("lingauss", obs_var=0.5, prior_var=1.0)
    x = _data()
    scores = local_scores(model, x)
    dags = enumerate_dags(4)  # 543 DAGs
    log_ml = log_marginal_likelihood_graphs(model, x, dags)
    for beta in (1.0, 0.5, 2.5):
        weights = np.exp(beta * log_ml - np.logaddexp.reduce(beta * log_ml))
        brute = np.einsum("k,kij->ij", weights, dags.astype(np.float64))
        np.testing.assert_allclose(fit.tempered_edges(scores, beta), brute, atol=1e-9)
    # a different temperature gives different marginals (the comparison above can fail)
    assert np.abs(fit.tempered_edges(scores, 2.5) - fit.tempered_edges(scores, 1.0)).max() > 0.05


def test_best_beta_recovers_the_temperature_of_tempered_marginals():
    fit = benchmark_module("tempered_fit")
    model = get_model("lingauss", obs_var=0.5, prior_var=1.0)
    scores = local_scores(model, _data())
    betas = np.round(np.arange(0.5, 3.01, 0.05), 2)
    for true_beta in (0.7, 1.0, 1.6):
        marginal = fit.tempered_edges(scores, true_beta)
        beta, rmse, edges = fit.best_beta(scores, marginal, betas)
        assert beta == true_beta and rmse < 1e-12
        assert abs(edges - marginal.sum()) < 1e-9


def test_tilted_edges_equal_brute_force_and_the_grid_recovers_the_tilt():
    """P(G | D) exp(log_b |G|) by the subset DP against the sum over all 543 DAGs at d=4; the grid fit finds the
    tilt that made a set of marginals."""
    fit = benchmark_module("tempered_fit")
    model = get_model("lingauss", obs_var=0.5, prior_var=1.0)
    x = _data()
    scores = local_scores(model, x)
    dags = enumerate_dags(4)
    log_ml = log_marginal_likelihood_graphs(model, x, dags)
    sizes = dags.sum(axis=(1, 2))
    for log_b in (-1.5, 0.0, 0.7):
        log_w = log_ml + log_b * sizes
        weights = np.exp(log_w - np.logaddexp.reduce(log_w))
        brute = np.einsum("k,kij->ij", weights, dags.astype(np.float64))
        np.testing.assert_allclose(fit.tilted_edges(scores, log_b), brute, atol=1e-9)
    assert fit.tilted_edges(scores, -1.5).sum() < fit.tilted_edges(scores, 0.0).sum() - 0.3
    grid = np.round(np.arange(-3.0, 1.01, 0.1), 2)
    for true_log_b in (-2.0, -0.4, 0.0):
        marginal = fit.tilted_edges(scores, true_log_b)
        log_b, rmse, edges = fit.best_tilt(scores, marginal, grid)
        assert log_b == true_log_b and rmse < 1e-12 and abs(edges - marginal.sum()) < 1e-9
