"""The exact posterior of the linear Gaussian model against independent computations."""

import itertools
import math

import numpy as np
import pytest
import scipy.optimize
import scipy.stats
from scipy.special import logsumexp

from jspgfn.conjugate import log_marginal_likelihood_local, log_posterior_theta, posterior_theta, sample_posterior_theta
from jspgfn.errors import DataError, JspgfnError
from jspgfn.exact import compute_exact_posterior, load_exact, sample_exact, save_exact
from jspgfn.generate import generate
from jspgfn.models import LinearGaussian, MLPGaussian, get_graph_prior
from jspgfn.npzfile import write_npz
from jspgfn_baselines import fit_baseline

# A model unlike the data's (noise variance 0.01, N(0, 1) weights) so that every hyper-parameter matters.
MODEL = LinearGaussian(obs_var=0.05, prior_mean=0.3, prior_var=0.5)


def _dataset(d, n, seed, **kwargs):
    return generate("er1", "linear", d, n, 20, seed, **kwargs)


def _parent_sets(d, node):
    others = [i for i in range(d) if i != node]
    return [c for r in range(d) for c in itertools.combinations(others, r)]


def _normalised(log_joint):
    log_joint = np.asarray(log_joint)
    return log_joint - logsumexp(log_joint)


# --------------------------------------------------------------- (a) numerical integration


def _log_integral(model, x, node, parents):
    """log of the integral over theta_pa of P(x_j | x_pa, theta) P(theta) on a quadrature grid.

    The grid is centred on the mode found by BFGS and scaled by a finite-difference Hessian:
    only a change of variables, the trapezoid rule on [-9, 9]^k does the integral.
    """
    y, a = x[:, node], x[:, list(parents)]
    sd, prior_sd = math.sqrt(model.obs_var), math.sqrt(model.prior_var)

    def log_joint(theta):  # theta [..., k]
        mean = theta @ a.T  # [..., N]
        return scipy.stats.norm.logpdf(y, mean, sd).sum(-1) + scipy.stats.norm.logpdf(
            theta, model.prior_mean, prior_sd
        ).sum(-1)

    if not parents:
        return log_joint(np.zeros(0))
    k = len(parents)
    mode = scipy.optimize.minimize(lambda t: -log_joint(t), np.zeros(k), method="BFGS", options={"gtol": 1e-10}).x
    h = 1e-3
    hessian = np.empty((k, k))
    for i, j in itertools.product(range(k), repeat=2):
        ei, ej = np.eye(k)[i] * h, np.eye(k)[j] * h
        hessian[i, j] = (
            log_joint(mode + ei + ej)
            - log_joint(mode + ei - ej)
            - log_joint(mode - ei + ej)
            + log_joint(mode - ei - ej)
        ) / (4 * h * h)
    scale = np.linalg.cholesky(np.linalg.inv(-hessian))
    axis = np.linspace(-9.0, 9.0, 181)
    grid = np.stack(np.meshgrid(*([axis] * k), indexing="ij"), axis=-1).reshape(-1, k)
    values = log_joint(mode + grid @ scale.T) - log_joint(mode)
    cell = (axis[1] - axis[0]) ** k
    return log_joint(mode) + logsumexp(values) + math.log(cell) + np.log(np.linalg.det(scale))


def test_posterior_over_graphs_matches_numerical_integration_d3():
    dataset = _dataset(3, 20, seed=3)
    posterior = compute_exact_posterior(dataset, MODEL, get_graph_prior("uniform", 3))
    local = {(j, pa): _log_integral(MODEL, dataset.train, j, pa) for j in range(3) for pa in _parent_sets(3, j)}
    log_joint = [sum(local[j, tuple(np.nonzero(g[:, j])[0])] for j in range(3)) for g in posterior.graphs]
    assert len(posterior.graphs) == 25
    np.testing.assert_allclose(posterior.log_probs, _normalised(log_joint), atol=1e-4, rtol=0)


# --------------------------------------------------------------- (b) independent implementation


def _reachable(graph, i, j):
    stack, seen = [i], set()
    while stack:
        for child in np.nonzero(graph[stack.pop()])[0]:
            if child == j:
                return True
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return False


def _in_blanket(graph, i, j):
    parents_of = lambda n: set(np.nonzero(graph[:, n])[0])  # noqa: E731
    children_of_j = set(np.nonzero(graph[j])[0])
    return i != j and (i in parents_of(j) or i in children_of_j or any(i in parents_of(c) for c in children_of_j))


def test_posterior_over_graphs_matches_scipy_multivariate_normal_d4():
    dataset = _dataset(4, 60, seed=11)
    x, d = dataset.train, 4
    prior = get_graph_prior("erdos_renyi", d)
    posterior = compute_exact_posterior(dataset, MODEL, prior)

    local = {}
    for j in range(d):
        for pa in _parent_sets(d, j):
            a = x[:, list(pa)]
            cov = MODEL.obs_var * np.eye(len(x)) + MODEL.prior_var * a @ a.T
            local[j, pa] = scipy.stats.multivariate_normal(MODEL.prior_mean * a.sum(1), cov).logpdf(x[:, j])
    p = 4 / 6  # expected edges d over d (d - 1) / 2 pairs
    log_joint = [
        sum(local[j, tuple(np.nonzero(g[:, j])[0])] for j in range(d)) + g.sum() * math.log(p / (1 - p))
        for g in posterior.graphs
    ]
    expected = _normalised(log_joint)

    graphs = posterior.graphs
    assert len(graphs) == 543 and len({g.tobytes() for g in graphs}) == 543
    np.testing.assert_allclose(np.exp(posterior.log_probs), np.exp(expected), atol=1e-6, rtol=0)
    big = expected > np.log(1e-6)
    np.testing.assert_allclose(posterior.log_probs[big], expected[big], atol=1e-6, rtol=0)

    probs = np.exp(expected)
    pairs = list(itertools.product(range(d), repeat=2))
    edge, path, markov = np.zeros((d, d)), np.zeros((d, d)), np.zeros((d, d))
    for g, w in zip(graphs, probs):
        for i, j in pairs:
            edge[i, j] += w * g[i, j]
            path[i, j] += w * _reachable(g, i, j)
            markov[i, j] += w * _in_blanket(g, i, j)
    np.testing.assert_allclose(posterior.edge, edge, atol=1e-6)
    np.testing.assert_allclose(posterior.path, path, atol=1e-6)
    np.testing.assert_allclose(posterior.markov, markov, atol=1e-6)


# --------------------------------------------------------------- (c) posterior over theta


def _log_lik_and_prior(model, x, graph, theta):
    sd, prior_sd = math.sqrt(model.obs_var), math.sqrt(model.prior_var)
    loglik = scipy.stats.norm.logpdf(x, x @ (graph * theta), sd).sum()
    logprior = scipy.stats.norm.logpdf(theta[graph == 1], model.prior_mean, prior_sd).sum()
    return loglik + logprior


def test_bayes_identity_holds_at_arbitrary_theta():
    """log P(D | G, theta) + log P(theta | G) - log P(theta | G, D) = log P(D | G) for any theta."""
    dataset = _dataset(4, 40, seed=5)
    x = dataset.train
    graph = np.array([[0, 1, 1, 0], [0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 0]], dtype=np.uint8)
    rng = np.random.default_rng(0)
    thetas = rng.normal(size=(3, 4, 4)) * graph
    evidence = sum(log_marginal_likelihood_local(MODEL, x, j, np.nonzero(graph[:, j])[0]) for j in range(4))
    log_post = log_posterior_theta(MODEL, x, np.stack([graph] * 3), thetas)
    for theta, lp in zip(thetas, log_post):
        assert _log_lik_and_prior(MODEL, x, graph, theta) - lp == pytest.approx(evidence, abs=1e-7)
    assert log_posterior_theta(MODEL, x, graph, thetas[0]) == pytest.approx(log_post[0], abs=1e-10)


def test_vague_prior_gives_least_squares():
    dataset = _dataset(4, 80, seed=6)
    x = dataset.train
    model = LinearGaussian(obs_var=0.01, prior_var=1e8)
    graph = np.array([[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]], dtype=np.uint8)
    means, covs = posterior_theta(model, x, graph)
    a = x[:, :2]
    for j in (2, 3):
        ols = np.linalg.lstsq(a, x[:, j], rcond=None)[0]
        np.testing.assert_allclose(means[j, :2], ols, rtol=1e-5)
        np.testing.assert_allclose(covs[j, :2, :2], model.obs_var * np.linalg.inv(a.T @ a), rtol=1e-5)
    for j in (0, 1):  # no parents: a point mass at 0
        assert not means[j].any() and not covs[j].any()
    assert not means[2, 2:].any() and not covs[2, 2:].any() and not covs[2, :, 2:].any()


def test_posterior_samples_have_the_posterior_moments():
    """Mahalanobis distances of draws from P(theta | G, D) are chi-square(|E|); means within 4 standard errors."""
    dataset = _dataset(4, 50, seed=7)
    x = dataset.train
    graph = np.array([[0, 1, 1, 0], [0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 0, 0]], dtype=np.uint8)
    num = 4000
    theta = sample_posterior_theta(MODEL, x, np.stack([graph] * num), np.random.default_rng(1))
    means, covs = posterior_theta(MODEL, x, graph)
    assert not theta[:, graph == 0].any()
    distance = np.zeros(num)
    for j in range(4):
        pa = np.nonzero(graph[:, j])[0]
        if len(pa) == 0:
            continue
        diff = theta[:, pa, j] - means[j, pa]
        distance += np.einsum("ka,ab,kb->k", diff, np.linalg.inv(covs[j][np.ix_(pa, pa)]), diff)
        standard_error = np.sqrt(np.diag(covs[j])[pa] / num)
        assert np.all(np.abs(diff.mean(0)) < 4 * standard_error)
    assert scipy.stats.kstest(distance, scipy.stats.chi2(df=graph.sum()).cdf).pvalue > 1e-3


# --------------------------------------------------------------- (d) interventions


def test_interventions_drop_rows_of_the_intervened_node():
    dataset = _dataset(4, 60, seed=8, interventional_fraction=0.3)
    x, interventions = dataset.train, dataset.train_interventions
    assert interventions.sum() > 5
    graph = np.array([[0, 1, 1, 0], [0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 0]], dtype=np.uint8)
    means, covs = posterior_theta(MODEL, x, graph, interventions)
    full_means, _ = posterior_theta(MODEL, x, graph)
    for j in range(4):
        keep = interventions[:, j] == 0
        pa = np.nonzero(graph[:, j])[0]
        assert log_marginal_likelihood_local(MODEL, x, j, pa, interventions) == pytest.approx(
            log_marginal_likelihood_local(MODEL, x[keep], j, pa), abs=1e-9
        )
        kept_means, kept_covs = posterior_theta(MODEL, x[keep], graph)
        np.testing.assert_allclose(means[j], kept_means[j], atol=1e-12)
        np.testing.assert_allclose(covs[j], kept_covs[j], atol=1e-12)
        if len(pa) and not keep.all():
            assert not np.allclose(means[j], full_means[j])


# --------------------------------------------------------------- (e-f) sizes and models


def test_d5_posterior_is_a_distribution_with_consistent_features():
    dataset = _dataset(5, 100, seed=0)
    posterior = compute_exact_posterior(dataset, LinearGaussian(), get_graph_prior("uniform", 5))
    probs = np.exp(posterior.log_probs)
    assert posterior.graphs.shape == (29281, 5, 5)
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(posterior.edge, np.einsum("k,kij->ij", probs, posterior.graphs), atol=1e-12)
    for feature in (posterior.edge, posterior.path, posterior.markov):
        assert np.all(np.diag(feature) == 0) and feature.min() >= 0 and feature.max() <= 1 + 1e-12
    assert np.all(posterior.path >= posterior.edge - 1e-12)
    np.testing.assert_allclose(posterior.markov, posterior.markov.T, atol=1e-12)


def test_more_than_five_variables_is_refused():
    with pytest.raises(JspgfnError, match=r"d <= 5.*d=6"):
        compute_exact_posterior(_dataset(6, 10, seed=0), LinearGaussian(), get_graph_prior("uniform", 6))


def test_nonlinear_model_is_refused():
    with pytest.raises(JspgfnError, match="linear Gaussian"):
        compute_exact_posterior(_dataset(3, 10, seed=0), MLPGaussian(), get_graph_prior("uniform", 3))


# --------------------------------------------------------------- (g) files


def test_save_load_round_trip_and_bad_files(tmp_path):
    dataset = _dataset(3, 30, seed=2)
    posterior = compute_exact_posterior(dataset, MODEL, get_graph_prior("edge", 3, beta=0.3))
    save_exact(tmp_path / "exact.npz", posterior)
    loaded = load_exact(tmp_path / "exact.npz")
    for name in ("graphs", "log_probs", "edge", "path", "markov"):
        np.testing.assert_array_equal(getattr(loaded, name), getattr(posterior, name))
    assert loaded.metadata["model_kwargs"] == MODEL.kwargs()
    assert loaded.metadata["graph_prior"] == {"name": "edge", "log_edge_weight": math.log(0.3)}

    corrupt = tmp_path / "corrupt.npz"
    corrupt.write_bytes(b"PK\x03\x04 definitely not a zip archive")
    with pytest.raises(DataError, match="corrupt.npz"):
        load_exact(corrupt)
    with pytest.raises(DataError, match="file not found"):
        load_exact(tmp_path / "missing.npz")
    np.savez(tmp_path / "partial.npz", edge=posterior.edge)
    with pytest.raises(DataError, match="missing array"):
        load_exact(tmp_path / "partial.npz")
    posterior.log_probs = posterior.log_probs + 1.0
    with pytest.raises(DataError, match="unnormalised.npz: not written: log_probs are not normalised"):
        save_exact(tmp_path / "unnormalised.npz", posterior)  # the writer refuses it ...
    assert not (tmp_path / "unnormalised.npz").exists()
    arrays = {name: getattr(posterior, name) for name in ("edge", "path", "markov", "graphs", "log_probs")}
    write_npz(tmp_path / "unnormalised.npz", arrays, posterior.metadata)
    with pytest.raises(DataError, match="normalised"):  # ... and so does the reader, for a file written otherwise
        load_exact(tmp_path / "unnormalised.npz")


# --------------------------------------------------------------- sampler and baseline registry


def test_sample_exact_draws_graphs_with_the_posterior_probabilities():
    dataset = _dataset(3, 20, seed=4)
    posterior = compute_exact_posterior(dataset, MODEL, get_graph_prior("uniform", 3))
    num = 20000
    samples = sample_exact(posterior, dataset, MODEL, np.random.default_rng(0), num)
    index = {g.tobytes(): k for k, g in enumerate(posterior.graphs)}
    counts = np.bincount([index[g.tobytes()] for g in samples.graphs], minlength=len(posterior.graphs))
    probs = np.exp(posterior.log_probs)
    rare = probs * num < 5  # chi-square test; cells with under 5 expected counts are pooled into one
    observed = np.append(counts[~rare], counts[rare].sum())[: (~rare).sum() + rare.any()]
    expected = np.append(probs[~rare], probs[rare].sum())[: (~rare).sum() + rare.any()] * num
    assert scipy.stats.chisquare(observed, expected).pvalue > 1e-3
    assert samples.metadata["method"] == "exact" and samples.metadata["model"] == "lingauss"
    with pytest.raises(JspgfnError, match="computed with"):
        sample_exact(posterior, dataset, LinearGaussian(), np.random.default_rng(0), 10)


def test_exact_baseline_through_the_registry():
    dataset = _dataset(3, 20, seed=4)
    samples = fit_baseline("exact", dataset, "lingauss-diag", 3, num_samples=50, obs_var=0.05)
    meta = samples.metadata
    assert samples.num_samples == 50 and meta["seed"] == 3 and meta["method"] == "exact"
    assert meta["hyperparameters"] == {"num_samples": 50, "graph_prior": "uniform"}
    assert meta["model_kwargs"]["obs_var"] == 0.05 and meta["wall_seconds"] > 0
    assert "versions" in meta["provenance"]
    again = fit_baseline("exact", dataset, "lingauss-diag", 3, num_samples=50, obs_var=0.05)
    np.testing.assert_array_equal(samples.theta, again.theta)


@pytest.mark.parametrize(
    "name, model, params, message",
    [
        ("nope", "lingauss-diag", {}, r"unknown baseline 'nope': choose one of .*exact"),
        ("exact", "mlp-gauss", {}, r"supports only the likelihood model\(s\) lingauss, not 'mlp-gauss'"),
        (
            "exact",
            "lingauss-diag",
            {"steps": 3},
            r"parameter steps: unknown parameter of baseline 'exact' \(valid: graph_prior, hidden, num_samples",
        ),
        ("exact", "lingauss", {"num_samples": 0}, "parameter num_samples: 0 is less than the minimum of 1"),
    ],
)
def test_baseline_registry_errors(name, model, params, message):
    with pytest.raises(JspgfnError, match=message):
        fit_baseline(name, _dataset(3, 10, seed=0), model, 0, **params)
