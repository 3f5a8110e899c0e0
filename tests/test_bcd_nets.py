"""BCD Nets (baselines/bcd-nets, shared/bcd.py): hard permutations, acyclic samples, orientation, recovery."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from jax.scipy.special import logsumexp as logsumexp_jax
from scipy.special import logsumexp

from jspgfn.dataset import Dataset
from jspgfn.graphs import is_dag
from jspgfn.models import LinearGaussian
from jspgfn_baselines.shared import bcd

DEFAULTS = {
    "steps": 20000,
    "num_mc_samples": 64,
    "learning_rate": 0.001,
    "temperature": 0.2,
    "sinkhorn_iterations": 20,
    "threshold": 0.3,
    "num_samples": 1000,
    "mlp_hidden": 128,
    "l_prior": "horseshoe",
    "horseshoe_scale": 1.0,
}


def chain_dataset(n=2000, seed=0):
    """X0 -> X1 -> X2 with weights 1.5 and -1.0, every noise variance 0.01 (the model's, roots included)."""
    rng = np.random.default_rng(seed)
    x0 = 0.1 * rng.standard_normal(n)
    x1 = 1.5 * x0 + 0.1 * rng.standard_normal(n)
    x2 = -1.0 * x1 + 0.1 * rng.standard_normal(n)
    return Dataset(train=np.stack([x0, x1, x2], axis=1), names=("X0", "X1", "X2"), source="chain")


def test_hard_permutation_is_a_permutation_matrix():
    logits = 3.0 * jax.random.normal(jax.random.PRNGKey(0), (32, 6, 6))
    keys = jax.random.split(jax.random.PRNGKey(1), 32)
    sample = jax.jit(jax.vmap(lambda k, z: bcd.sample_permutation(k, z, 0.2, 20)))
    hard = np.asarray(sample(keys, logits))
    assert np.all((hard == 0) | (hard == 1))
    assert np.all(hard.sum(axis=-1) == 1) and np.all(hard.sum(axis=-2) == 1)
    # Straight-through: the gradient reaches the logits.
    grad = jax.grad(lambda z: jnp.sum(bcd.sample_permutation(keys[0], z, 0.2, 20) * logits[0]))(logits[0])
    assert np.any(np.asarray(grad) != 0)


def _log_perm_enumerated(logits):
    d = logits.shape[-1]
    perms = np.array(list(itertools.permutations(range(d))))
    return float(logsumexp(np.asarray(logits, np.float64)[np.arange(d), perms].sum(-1)))


def test_log_permanent_exact_and_bethe_bound():
    logits = np.asarray(jax.random.normal(jax.random.PRNGKey(2), (5, 5)))
    exact = np.log(sum(np.exp(sum(logits[i, p[i]] for i in range(5))) for p in itertools.permutations(range(5))))
    assert np.isclose(float(bcd.log_permanent_exact(jnp.asarray(logits))), exact, atol=1e-4)
    # The approximation used above d = 6: a lower bound, close (Bethe permanent >= perm / sqrt(2)^d; 0.5 slack).
    approx = float(bcd.log_permanent_bethe(jnp.asarray(logits)))
    assert exact - 5 * np.log(np.sqrt(2)) - 0.5 < approx <= exact + 1e-4


@pytest.mark.parametrize("scale", [1.0, 10.0, 1000.0])
def test_bethe_is_a_lower_bound_at_d7_for_peaked_logits(scale):
    """Where the Bethe value is used (d > 6), on logits as the MLP gives them (squashed to |.| < 10).

    With 20 fixed Sinkhorn iterations the value was no bound on peaked logits (the d=20 ELBO reached +4e8).
    """
    layers = [(jnp.zeros((1, 1)), jnp.zeros(1)), (jnp.zeros((1, 49)), jnp.zeros(49))]
    for seed in range(3):
        raw = scale * np.random.default_rng(seed).standard_normal(49).astype(np.float32)
        layers[-1] = (jnp.zeros((1, 49)), jnp.asarray(raw))
        logits = np.asarray(bcd.mlp_logits(layers, jnp.zeros((1,)), 7))
        assert np.abs(logits).max() <= bcd.LOGIT_BOUND
        exact = _log_perm_enumerated(logits)
        bethe = float(jax.jit(bcd.log_permanent_bethe)(jnp.asarray(logits)))
        assert exact - 7 * np.log(np.sqrt(2)) - 0.5 < bethe <= exact + 1e-3, (scale, seed, exact, bethe)


def test_elbo_at_d8_stays_below_the_exact_permanent_elbo(monkeypatch):
    """Trained at d=8 (Bethe permanent), the ELBO must not exceed the same ELBO with the exact log-permanent
    (enumerating 8! permutations), which is a true lower bound on log P(D)."""
    rng = np.random.default_rng(0)
    d, n = 8, 100
    w = np.triu(rng.standard_normal((d, d)), 1) * (rng.random((d, d)) < 0.3)
    x = np.zeros((n, d))
    for j in range(d):
        x[:, j] = x @ w[:, j] + 0.1 * rng.standard_normal(n)
    stats = jnp.asarray(x.T @ x, jnp.float32)
    args = (stats, n, d, 0.01, 16, 0.2, 20, "horseshoe", 1.0, 0.0, 1.0)
    loss = bcd.make_loss(*args)
    params = bcd.init_params(jax.random.PRNGKey(0), d, 32)
    optimiser = optax.adabelief(1e-2)
    state = optimiser.init(params)

    @jax.jit
    def step(params, state, key):
        value, grads = jax.value_and_grad(loss)(params, key)
        updates, state = optimiser.update(grads, state, params)
        return optax.apply_updates(params, updates), state, value

    for key in jax.random.split(jax.random.PRNGKey(1), 300):
        params, state, value = step(params, state, key)
        assert np.isfinite(float(value))
    perms = jnp.asarray(np.array(list(itertools.permutations(range(d)))))
    exact_log_perm = lambda z: logsumexp_jax(z[jnp.arange(d), perms].sum(-1))  # noqa: E731
    keys = jax.random.split(jax.random.PRNGKey(2), 4)
    bethe_elbo = [-float(jax.jit(loss)(params, k)) for k in keys]
    monkeypatch.setattr(bcd, "log_permanent_bethe", exact_log_perm)
    exact_elbo = [-float(jax.jit(bcd.make_loss(*args))(params, k)) for k in keys]
    assert all(b <= e + 1e-2 for b, e in zip(bethe_elbo, exact_elbo)), (bethe_elbo, exact_elbo)
    # and the bound is not vacuous: within d log sqrt(2) + 0.5 nats per sample of the exact one
    assert all(e - b < d * np.log(np.sqrt(2)) + 0.5 for b, e in zip(bethe_elbo, exact_elbo)), (bethe_elbo, exact_elbo)


def test_weights_orientation_matches_the_likelihood_model():
    """W = (P L P^T)^T is acyclic, and the engine's likelihood of W equals LinearGaussian's with theta = W."""
    d = 4
    key = jax.random.PRNGKey(3)
    params = bcd.init_params(key, d, 8)
    params["mean"] = jax.random.normal(jax.random.PRNGKey(5), params["mean"].shape)
    _, perm, w, _ = bcd.draw(params, jax.random.PRNGKey(4), d, 50, 0.2, 20)
    w = np.asarray(w)
    assert is_dag((w != 0).astype(np.uint8)).all()
    x = np.random.default_rng(0).standard_normal((30, d))
    model = LinearGaussian()
    graph = (w[0] != 0).astype(np.float32)
    expected = float(model.log_likelihood(jnp.asarray(w[0]), jnp.asarray(graph), jnp.asarray(x)))
    r = x - x @ w[0]
    mine = -0.5 * np.sum(r**2) / model.obs_var - 0.5 * r.size * np.log(2 * np.pi * model.obs_var)
    assert np.isclose(mine, expected, rtol=1e-4)


def test_samples_are_dags_with_aligned_theta():
    data = chain_dataset(n=200)
    params = {**DEFAULTS, "steps": 50, "num_mc_samples": 8, "num_samples": 200, "threshold": 0.0}
    samples = bcd.run_bcd("bcd-nets", data, LinearGaussian(), 0, progress=False, **params)
    assert is_dag(samples.graphs).all()
    assert np.all(samples.theta[samples.graphs == 0] == 0) and np.all(samples.theta[samples.graphs == 1] != 0)
    # threshold 0: every sample has the d(d-1)/2 edges of a permuted triangular matrix.
    assert np.all(samples.graphs.sum(axis=(1, 2)) == 3)


@pytest.mark.slow
def test_recovers_a_chain():
    """Posterior mean weights of X0 -> X1 -> X2 within 0.1 of (1.5, -1.0), no other edge.

    With N = 2000 and every noise variance 0.01 the exact posterior sd of the weights is about
    sqrt(0.01 / sum x_pa^2): 0.022 for X0 -> X1 (var X0 = 0.01) and 0.012 for X1 -> X2 (var X1 = 0.0325), so
    0.1 is > 4 sd, leaving room for the optimisation error of a 3000-step run, while the wrong orders are
    far off (e.g. X0 -> X2 -> X1, BCD Nets' local optimum, gives X0 -> X1 ~ 0.73). Seeds 0-3 gave errors <= 0.04.
    """
    data = chain_dataset()
    params = {**DEFAULTS, "steps": 3000, "num_samples": 500}
    samples = bcd.run_bcd("bcd-nets", data, LinearGaussian(), 0, progress=False, **params)
    mean = samples.theta.mean(axis=0)
    assert abs(mean[0, 1] - 1.5) < 0.1 and abs(mean[1, 2] + 1.0) < 0.1, mean
    edges = samples.graphs.mean(axis=0)
    assert edges[0, 1] > 0.95 and edges[1, 2] > 0.95, edges
    off_chain = np.ones((3, 3), bool)
    off_chain[0, 1] = off_chain[1, 2] = False
    assert np.all(np.abs(mean[off_chain]) < 0.05), mean


def test_doubly_stochastic_repair_is_exact_and_nonnegative():
    """A matrix with exact column sums and rows off becomes doubly stochastic, >= 0, and close (2 max|1 - r|)."""
    rng = np.random.default_rng(4)
    for d in (3, 7, 20):
        gamma = rng.random((d, d)) ** 8  # many near-zero entries, where the row repair could go negative
        gamma = gamma / gamma.sum(axis=0, keepdims=True)
        gamma = gamma * (1 + 0.2 * (rng.random((d, 1)) - 0.5))
        gamma = gamma / gamma.sum(axis=0, keepdims=True)  # columns exact again, rows off
        fixed = np.asarray(bcd.doubly_stochastic(jnp.asarray(gamma, jnp.float32)))
        assert fixed.min() >= 0
        np.testing.assert_allclose(fixed.sum(axis=0), 1.0, atol=1e-5)
        np.testing.assert_allclose(fixed.sum(axis=1), 1.0, atol=1e-5)
        assert np.abs(fixed - gamma).max() <= 2 * np.abs(1 - gamma.sum(axis=1)).max() + 1e-6


def test_horseshoe_prior_and_its_gradient_stay_finite_near_zero():
    """log(log(1 + s^2 / x^2) / (2 pi s)) as written out, and a finite gradient down to x = 0 (an entry of L
    pinned near 0 made the gradient NaN at d=20 and killed a quick run)."""
    values = jnp.asarray([[0.0, 1e-30, 1e-20, 1e-12, 1e-6, 0.3, -2.0, 40.0]], jnp.float32)
    got = jax.vmap(lambda v: bcd.log_prior_lower(v[None], "horseshoe", 0.7, 0.0, 1.0))(values[0])
    grad = jax.grad(lambda v: bcd.log_prior_lower(v, "horseshoe", 0.7, 0.0, 1.0).sum())(values)
    assert np.all(np.isfinite(np.asarray(got))) and np.all(np.isfinite(np.asarray(grad)))
    x = np.asarray([1e-6, 0.3, -2.0, 40.0])
    want = np.log(np.log1p(0.49 / x**2) / (2 * np.pi * 0.7))
    np.testing.assert_allclose(np.asarray(got)[4:], want, rtol=1e-4)
    assert np.all(np.asarray(grad)[0, 4:] * np.sign(x) < 0)  # the density falls away from 0
