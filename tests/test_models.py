import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from jspgfn.errors import JspgfnError
from jspgfn.generate import generate
from jspgfn.models import LinearGaussian, MLPGaussian, get_graph_prior, get_model, log_reward

jax.config.update("jax_enable_x64", False)


def test_mlp_parameter_count_matches_paper():
    assert MLPGaussian().params_per_node(20) * 20 == 2220  # the paper's |theta| at d = 20


def direct_mlp_mean(theta, graph, x, hidden=5):
    """Loop-based reference of the MLP CPD means, independent of the einsum version."""
    n, d = x.shape
    out = np.zeros((n, d))
    for j in range(d):
        p = theta[j]
        w1 = p[: d * hidden].reshape(d, hidden)
        b1 = p[d * hidden : d * hidden + hidden]
        w2 = p[d * hidden + hidden : d * hidden + 2 * hidden]
        b2 = p[-1]
        inputs = x * graph[:, j]
        out[:, j] = np.maximum(inputs @ w1 + b1, 0) @ w2 + b2
    return out


@pytest.mark.parametrize("model_name", ["linear", "mlp"])
def test_log_likelihood_matches_direct_computation(model_name):
    ds = generate("er2", model_name, 5, 40, 0, seed=2, interventional_fraction=0.3)
    theta = np.asarray(ds.meta["theta"])
    model = LinearGaussian() if model_name == "linear" else MLPGaussian()
    if model_name == "linear":
        mean = ds.train @ (ds.graph * theta)
    else:
        mean = direct_mlp_mean(theta, ds.graph, ds.train)
    logp = stats.norm.logpdf(ds.train, mean, 0.1)
    expected = logp[ds.train_interventions == 0].sum()
    got = model.log_likelihood(
        jnp.asarray(theta),
        jnp.asarray(ds.graph, jnp.float32),
        jnp.asarray(ds.train),
        jnp.asarray(ds.train_interventions),
    )
    np.testing.assert_allclose(float(got), expected, rtol=1e-5)


def test_log_prior_counts_active_parameters_only():
    graph = np.zeros((4, 4), np.float32)
    graph[0, 1] = graph[2, 3] = 1
    lin = LinearGaussian()
    theta = np.full((4, 4), 0.5, np.float32)
    assert float(lin.log_prior_theta(jnp.asarray(theta), jnp.asarray(graph))) == pytest.approx(
        2 * stats.norm.logpdf(0.5), rel=1e-6
    )
    mlp = MLPGaussian()
    theta = np.full(mlp.theta_shape(4), 0.5, np.float32)
    active = 4 * (2 * 5 + 1) + 2 * 5  # biases and second layer everywhere, 2 edges x 5 hidden units
    assert float(mlp.log_prior_theta(jnp.asarray(theta), jnp.asarray(graph))) == pytest.approx(
        active * stats.norm.logpdf(0.5), rel=1e-5
    )
    assert np.asarray(mlp.parameter_mask(graph)).sum() == active


def test_sample_prior_zero_off_graph():
    rng = np.random.default_rng(0)
    graph = np.zeros((3, 3))
    graph[0, 2] = 1
    theta = LinearGaussian().sample_prior(rng, graph)
    assert theta[0, 2] != 0 and np.count_nonzero(theta) == 1


def test_minibatch_log_reward_is_unbiased():
    """Averaged over every mini-batch of size M, the N/M-scaled estimate equals the full log-reward."""
    ds = generate("er1", "linear", 3, 6, 0, seed=5)
    model, prior = LinearGaussian(), get_graph_prior("erdos_renyi", 3)
    theta = jnp.asarray(ds.meta["theta"], jnp.float32)
    graph = jnp.asarray(ds.graph, jnp.float32)
    x = np.asarray(ds.train, np.float32)
    full = float(log_reward(model, prior, theta, graph, jnp.asarray(x)))
    estimates = [
        float(log_reward(model, prior, theta, graph, jnp.asarray(x[list(rows)]), num_total=6))
        for rows in itertools.combinations(range(6), 2)
    ]
    assert np.mean(estimates) == pytest.approx(full, rel=1e-5)
    assert np.std(estimates) > 0  # a real estimate, not the full reward in disguise


def test_graph_priors():
    g = jnp.zeros((5, 5)).at[0, 1].set(1).at[1, 2].set(1)
    assert float(get_graph_prior("uniform", 5).log_prob(g)) == 0
    p = 5 / 10
    assert float(get_graph_prior("erdos_renyi", 5).log_prob(g)) == pytest.approx(2 * np.log(p / (1 - p)), abs=1e-6)
    assert float(get_graph_prior("edge", 5, beta=0.1).log_prob(g)) == pytest.approx(2 * np.log(0.1), rel=1e-6)
    with pytest.raises(JspgfnError, match="unknown graph prior"):
        get_graph_prior("scale_free", 5)


def test_get_model_names():
    assert isinstance(get_model("lingauss-diag"), LinearGaussian)
    assert isinstance(get_model("lingauss-full"), LinearGaussian)
    assert isinstance(get_model("mlp-gauss"), MLPGaussian)
    with pytest.raises(JspgfnError, match="unknown model 'cubic'"):
        get_model("cubic")
