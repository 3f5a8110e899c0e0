"""VBG (baselines/vbg, engine baselines/shared/vbg.py): closed-form pieces and a d=3 run against the exact posterior.

VBG's q(G) q(theta) is mean-field between G and theta, so even at its optimum its edge marginals
are not the exact posterior's: on the d=3 data below (N=10) the ideal VBG fixed point (q(G) optimised
exactly over the 25 DAGs, alternated with the q(theta) update; benchmarks/vbg_fixed_point.py) is 0.11
from the exact edge marginals, the trained GFlowNet about 0.12-0.14 (0.14 since the first run); a
reward without the likelihood (negative control) gives the prior's marginals, about 0.68 away.
(Without the KL term of the reward the fixed point is 0.04 away here, but on the quick preset's d=5
datasets, N=100, it is the KL term that brings VBG's fixed point closer: edge RMSE 0.10-0.15 with
it, 0.10-0.18 without.)"""

import numpy as np
import pytest

from jspgfn.conjugate import posterior_theta
from jspgfn.errors import JspgfnError
from jspgfn.exact import compute_exact_posterior
from jspgfn.generate import generate
from jspgfn.graphs import sample_er_dag
from jspgfn.models import LinearGaussian, get_graph_prior
from jspgfn_baselines import fit_baseline
from jspgfn_baselines.shared import vbg

MODEL = LinearGaussian(obs_var=0.1, prior_mean=0.3, prior_var=2.0)


@pytest.fixture(scope="module")
def dataset4():
    return generate("er1", "linear", 4, 50, 10, seed=5)


def test_q_update_on_a_point_mass_is_the_exact_posterior(dataset4):
    """With q(G) = delta(G), the q(theta_j) marginal on G's parents is P(theta_j | G, D) (mean and covariance),
    and the non-parent weights stay at the prior."""
    x = dataset4.train
    rng = np.random.default_rng(0)
    for _ in range(5):
        graph = sample_er_dag(rng, 4, 5.0)
        edge_mean, edge_outer = vbg.graph_moments(np.repeat(graph[None], 7, axis=0))
        q = vbg.update_q(x.T @ x, edge_mean, edge_outer, MODEL)
        means, covs = posterior_theta(MODEL, x, graph)
        for j in range(4):
            pa = np.nonzero(graph[:, j])[0]
            other = np.nonzero(graph[:, j] == 0)[0]
            np.testing.assert_allclose(q.mu[j, pa], means[j, pa], rtol=0, atol=1e-6)
            np.testing.assert_allclose(q.cov[j][np.ix_(pa, pa)], covs[j][np.ix_(pa, pa)], rtol=0, atol=1e-6)
            np.testing.assert_allclose(q.mu[j, other], MODEL.prior_mean, atol=1e-12)
            np.testing.assert_allclose(q.cov[j][np.ix_(other, other)], MODEL.prior_var * np.eye(len(other)), atol=1e-12)
            np.testing.assert_allclose(q.cov[j][np.ix_(pa, other)], 0.0, atol=1e-12)


def test_expected_log_likelihood_closed_form(dataset4):
    """E_q[log P(D | G, theta)] = sum over rows and nodes of log N(x_nj; (G_:j mu_j)^T x_n, s2)
    - x_n^T (G_:j G_:j^T * Sigma_j) x_n / (2 s2), computed here row by row."""
    x = dataset4.train
    n, d = x.shape
    rng = np.random.default_rng(1)
    graphs = np.stack([sample_er_dag(rng, d, 4.0) for _ in range(3)])
    mu = rng.normal(size=(d, d))
    a = rng.normal(size=(d, d, d)) * 0.3
    cov = a @ np.swapaxes(a, -1, -2) + 0.1 * np.eye(d)
    got = np.asarray(vbg.expected_log_likelihood(mu, cov, graphs, x.T @ x, n, MODEL.obs_var))
    s2 = MODEL.obs_var
    for b, g in enumerate(graphs):
        total = 0.0
        for j in range(d):
            w = g[:, j] * mu[j]
            s = cov[j] * np.outer(g[:, j], g[:, j])
            resid = x[:, j] - x @ w
            total += np.sum(-0.5 * np.log(2 * np.pi * s2) - 0.5 * resid**2 / s2)
            total -= 0.5 * np.einsum("ni,il,nl->", x, s, x) / s2
        np.testing.assert_allclose(got[b], total, rtol=1e-4)


def test_kl_term_is_the_kl_of_the_parent_marginals():
    """KL(q(theta_G) || P(theta_G | G)) summed over nodes, against the Gaussian KL of each node's parent
    sub-vector and sub-block written out with numpy; the empty graph costs nothing."""
    rng = np.random.default_rng(3)
    d = 4
    graphs = np.stack([sample_er_dag(rng, d, 4.0) for _ in range(4)] + [np.zeros((d, d), np.uint8)])
    mu = rng.normal(size=(d, d))
    a = rng.normal(size=(d, d, d)) * 0.5
    cov = a @ np.swapaxes(a, -1, -2) + 0.2 * np.eye(d)
    got = np.asarray(vbg.kl_to_prior(mu, cov, graphs, MODEL.prior_mean, MODEL.prior_var))
    v0 = MODEL.prior_var
    for b, g in enumerate(graphs):
        total = 0.0
        for j in range(d):
            pa = np.nonzero(g[:, j])[0]
            if len(pa) == 0:
                continue
            m, s = mu[j, pa] - MODEL.prior_mean, cov[j][np.ix_(pa, pa)]
            total += 0.5 * (np.trace(s) / v0 + m @ m / v0 - len(pa) + len(pa) * np.log(v0) - np.linalg.slogdet(s)[1])
        np.testing.assert_allclose(got[b], total, rtol=1e-4, atol=1e-4)
    assert got[-1] == 0.0


def test_first_run_marginal_likelihood_matches_the_exact_module(dataset4):
    """The first run's reward log P(D | G) (JAX, float32) against jspgfn.conjugate's float64 local marginals."""
    from jspgfn.conjugate import log_marginal_likelihood_local

    x = dataset4.train
    n, d = x.shape
    rng = np.random.default_rng(3)
    graphs = np.stack([np.zeros((d, d), np.uint8)] + [sample_er_dag(rng, d, 4.0) for _ in range(4)])
    got = np.asarray(
        vbg.log_marginal_likelihood(
            graphs, (x.T @ x).astype(np.float32), n, MODEL.obs_var, MODEL.prior_mean, MODEL.prior_var
        )
    )
    for b, g in enumerate(graphs):
        want = sum(log_marginal_likelihood_local(MODEL, x, j, np.nonzero(g[:, j])[0]) for j in range(d))
        np.testing.assert_allclose(got[b], want, rtol=1e-4)


def test_theta_drawn_from_q_marginal_and_masked():
    rng = np.random.default_rng(2)
    d = 3
    a = rng.normal(size=(d, d, d))
    q = vbg.QTheta(rng.normal(size=(d, d)), a @ np.swapaxes(a, -1, -2) + np.eye(d))
    graph = np.array([[0, 1, 1], [0, 0, 1], [0, 0, 0]], np.uint8)
    theta = vbg.sample_theta_from_q(q, np.repeat(graph[None], 20000, axis=0), rng)
    assert np.all(theta[:, graph == 0] == 0) and np.all(theta[:, graph == 1] != 0)
    pa = [0, 1]  # parents of node 2: the marginal of q(theta_2) on them
    np.testing.assert_allclose(theta[:, pa, 2].mean(0), q.mu[2, pa], atol=0.05)
    np.testing.assert_allclose(np.cov(theta[:, pa, 2].T), q.cov[2][np.ix_(pa, pa)], atol=0.1)


def test_vbg_refuses_mlp_and_interventional_data():
    with pytest.raises(JspgfnError, match="supports only the likelihood model"):
        fit_baseline("vbg", generate("er1", "mlp", 3, 20, 0, seed=0), "mlp-gauss", 0)
    with pytest.raises(JspgfnError, match="only observational data"):
        fit_baseline("vbg", generate("er1", "linear", 3, 30, 0, seed=0, interventional_fraction=0.3), "lingauss", 0)


CONFIG = {
    "num_rounds": 20,
    "gflownet_iterations_per_round": 100,
    "theta_graph_samples": 256,
    "batch_size": 64,
    "prefill": 200,
    "embed_dim": 32,
    "mlp_hidden": 32,
    "num_heads": 2,
    "key_size": 16,
    "num_samples": 2000,
}
TOLERANCE = 0.15  # max |edge marginal error| vs the exact posterior (VBG's own bias here: 0.11; MC: < 0.03)


@pytest.mark.slow  # about a minute each on 2 busy cores (mostly compilation)
@pytest.mark.parametrize("reward", ["correct", "no_likelihood"])
def test_vbg_edge_marginals_near_exact_posterior(monkeypatch, reward, capsys):
    """VBG on d=3 (N=10, posterior spread over the edge 2 -> 0) lands near the exact edge marginals; with the
    likelihood dropped from the reward (negative control, monkeypatched log_reward) it must not."""
    if reward == "no_likelihood":
        monkeypatch.setattr(vbg, "log_reward", lambda prior, mu, cov, graphs, *_: prior.log_prob(graphs * 1.0))
    ds = generate("er1", "linear", 3, 10, 10, 3)
    model = LinearGaussian()
    exact = compute_exact_posterior(ds, model, get_graph_prior("uniform", 3)).edge
    samples = fit_baseline("vbg", ds, "lingauss", 0, **CONFIG)
    approx = samples.graphs.mean(axis=0)
    err = np.abs(approx - exact).max()
    with capsys.disabled():
        print(
            f"\n{reward}: exact {np.round(exact, 3).tolist()}\nvbg {np.round(approx, 3).tolist()}\nmax error {err:.3f}"
        )
    if reward == "correct":
        assert err < TOLERANCE
    else:
        assert err > TOLERANCE, "a reward without the likelihood went undetected"
