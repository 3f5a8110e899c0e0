import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import special, stats

from jspgfn.models import LIKELIHOODS, ZINormalMLP, get_model

jax.config.update("jax_enable_x64", False)


def test_parameter_count_matches_paper():
    model = ZINormalMLP()
    assert model.params_per_node(61) == 61 * 16 + 16 + 16 + 1 + 2 == 1011
    assert np.prod(model.theta_shape(61)) == 61_671  # the paper's |theta| for the gene-expression data
    assert model.layout(61)["shape"] == [61, 1011]
    assert model.layout(61)["blocks"]["log_var"] == [1010, 1011, []]


def test_registered_under_its_name():
    assert LIKELIHOODS["mlp-zinormal"] is ZINormalMLP
    model = get_model("mlp-zinormal", **ZINormalMLP(hidden=3).kwargs())
    assert model == ZINormalMLP(hidden=3)


def brute_force_rows(theta, graph, x, interventions, hidden):
    """Loop-based numpy reference: exact zeros score log alpha, others log(1 - alpha) + log N."""
    n, d = x.shape
    out = np.zeros(n)
    for r in range(n):
        for j in range(d):
            if interventions is not None and interventions[r, j]:
                continue
            p = theta[j].astype(np.float64)
            w1 = p[: d * hidden].reshape(d, hidden)
            b1 = p[d * hidden : d * hidden + hidden]
            w2 = p[d * hidden + hidden : d * hidden + 2 * hidden]
            b2, a, s = p[d * hidden + 2 * hidden :]
            inputs = np.array([x[r, i] if graph[i, j] else 0.0 for i in range(d)])
            mu = np.maximum(inputs @ w1 + b1, 0.0) @ w2 + b2
            alpha = special.expit(a)
            if x[r, j] == 0:
                out[r] += np.log(alpha)
            else:
                out[r] += np.log1p(-alpha) + stats.norm.logpdf(x[r, j], mu, np.sqrt(np.exp(s)))
    return out


def random_case(seed, n=12, d=4, hidden=3):
    rng = np.random.default_rng(seed)
    model = ZINormalMLP(hidden=hidden)
    graph = np.zeros((d, d), np.float32)
    graph[0, 1] = graph[0, 2] = graph[1, 3] = graph[2, 3] = 1
    theta = model.sample_prior(rng, graph).astype(np.float32)
    x = np.abs(rng.normal(1.0, 1.0, (n, d))).astype(np.float32)
    x[rng.random((n, d)) < 0.4] = 0.0  # exact zeros
    return model, theta, graph, x, rng


def test_log_likelihood_matches_brute_force_with_zeros():
    model, theta, graph, x, _ = random_case(0)
    assert np.any(x == 0) and np.any(x != 0)
    got = model.log_likelihood_rows(jnp.asarray(theta), jnp.asarray(graph), jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(got), brute_force_rows(theta, graph, x, None, 3), rtol=1e-5, atol=1e-4)


def test_interventions_drop_terms():
    model, theta, graph, x, rng = random_case(1)
    interventions = (rng.random(x.shape) < 0.3).astype(np.uint8)
    assert np.any(interventions)
    args = (jnp.asarray(theta), jnp.asarray(graph), jnp.asarray(x))
    got = model.log_likelihood_rows(*args, jnp.asarray(interventions))
    expected = brute_force_rows(theta, graph, x, interventions, 3)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-4)
    # Intervening on every variable leaves nothing.
    none_left = model.log_likelihood(*args, jnp.ones(x.shape, jnp.uint8))
    assert float(none_left) == 0.0


def node_terms(model, theta, graph, x):
    """[N, d] per-entry terms, read off by intervening on all variables but one."""
    d = x.shape[1]
    columns = []
    for j in range(d):
        mask = np.ones(x.shape, np.uint8)
        mask[:, j] = 0
        columns.append(model.log_likelihood_rows(jnp.asarray(theta), jnp.asarray(graph), jnp.asarray(x), mask))
    return np.stack([np.asarray(c) for c in columns], axis=1)


def test_non_parent_value_does_not_change_node_term():
    model, theta, graph, x, _ = random_case(2)
    # Fill every parameter (inactive W1 entries too) so only the graph's masking can hide an input.
    theta = np.random.default_rng(5).normal(size=theta.shape).astype(np.float32)
    before = node_terms(model, theta, graph, x)
    changed = x.copy()
    changed[:, 3] += 2.5  # X3 is a parent of no node
    after = node_terms(model, theta, graph, changed)
    np.testing.assert_allclose(after[:, :3], before[:, :3], rtol=1e-6)
    assert not np.allclose(after[:, 3], before[:, 3])
    # X0 is a parent of X1 and X2 only: X3's term keeps its value.
    changed = x.copy()
    changed[:, 0] = np.where(changed[:, 0] == 0, 1.0, changed[:, 0] * 3.0)
    after = node_terms(model, theta, graph, changed)
    np.testing.assert_allclose(after[:, 3], before[:, 3], rtol=1e-6)
    assert not np.allclose(after[:, 1], before[:, 1])


def test_parameter_mask_and_prior_sample():
    model = ZINormalMLP(hidden=3)
    graph = np.zeros((4, 4))
    graph[0, 1] = 1
    mask = np.asarray(model.parameter_mask(graph))
    assert mask.shape == model.theta_shape(4) == (4, 4 * 3 + 2 * 3 + 3)
    assert mask.sum() == 4 * (2 * 3 + 3) + 3  # biases, w2, a, s everywhere; W1 of the one edge
    np.testing.assert_array_equal(mask[1, :12].reshape(4, 3)[0], 1)
    np.testing.assert_array_equal(np.asarray(model.parameter_mask(jnp.asarray(graph))), mask)
    theta = model.sample_prior(np.random.default_rng(0), graph)
    assert np.all(theta[mask == 0] == 0) and np.all(theta[mask == 1] != 0)


def test_alpha_and_variance_transforms():
    model = ZINormalMLP(hidden=2)
    theta = np.zeros(model.theta_shape(3), np.float32)
    theta[:, -2] = [0.0, 2.0, -1.0]
    theta[:, -1] = [0.0, 1.0, -2.0]
    np.testing.assert_allclose(model.zero_probability(jnp.asarray(theta)), special.expit(theta[:, -2]), rtol=1e-6)
    np.testing.assert_allclose(model.variance(jnp.asarray(theta)), np.exp(theta[:, -1]), rtol=1e-6)


@pytest.mark.parametrize("value", [0.0, 0.7])
def test_point_mass_and_density(value):
    # One variable, no parents: the MLP mean is b2; alpha = sigmoid(a), sigma^2 = exp(s).
    model = ZINormalMLP(hidden=1)
    theta = np.array([[0.0, 0.0, 0.0, 0.3, -0.4, 0.2]], np.float32)
    got = float(model.log_likelihood(jnp.asarray(theta), jnp.zeros((1, 1)), jnp.array([[value]], jnp.float32)))
    alpha = special.expit(-0.4)
    if value == 0:
        expected = np.log(alpha)
    else:
        expected = np.log(1 - alpha) + stats.norm.logpdf(value, 0.3, np.exp(0.1))
    assert got == pytest.approx(expected, rel=1e-5)
