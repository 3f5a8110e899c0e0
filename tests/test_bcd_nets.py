"""BCD Nets (baselines/bcd-nets, shared/bcd.py): hard permutations, acyclic samples, orientation, recovery."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

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


def test_log_permanent_exact_and_bethe_bound():
    logits = np.asarray(jax.random.normal(jax.random.PRNGKey(2), (5, 5)))
    exact = np.log(sum(np.exp(sum(logits[i, p[i]] for i in range(5))) for p in itertools.permutations(range(5))))
    assert np.isclose(float(bcd.log_permanent_exact(jnp.asarray(logits))), exact, atol=1e-4)
    # The approximation used above d = 6: a lower bound, close (Bethe permanent >= perm / sqrt(2)^d; 0.5 slack).
    approx = float(bcd.log_permanent_bethe(jnp.asarray(logits), 50))
    assert exact - 5 * np.log(np.sqrt(2)) - 0.5 < approx <= exact + 1e-4


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
