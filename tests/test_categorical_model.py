import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jspgfn.errors import JspgfnError
from jspgfn.models import LIKELIHOODS, MLPCategorical, get_graph_prior, get_model, log_reward, model_from_metadata

jax.config.update("jax_enable_x64", False)


def random_case(seed=0, d=4, k=3, n=25, hidden=5):
    """A random DAG [d, d], codes x [n, d] in 0..k-1 (floats) and theta ~ prior for it."""
    rng = np.random.default_rng(seed)
    graph = np.triu((rng.random((d, d)) < 0.6).astype(np.float32), k=1)
    model = MLPCategorical(num_levels=k, hidden=hidden)
    theta = model.sample_prior(rng, graph).astype(np.float32)
    x = rng.integers(0, k, size=(n, d)).astype(np.float32)
    return model, graph, theta, x


def direct_log_probs(theta, graph, x, k, hidden):
    """Loop-based numpy reference of log P(X_j = . | parents): [N, d, K]."""
    n, d = x.shape
    out = np.zeros((n, d, k))
    for j in range(d):
        p = np.asarray(theta[j], np.float64)
        w1 = p[: d * k * hidden].reshape(d * k, hidden)
        b1 = p[d * k * hidden : d * k * hidden + hidden]
        w2 = p[d * k * hidden + hidden : d * k * hidden + hidden + hidden * k].reshape(hidden, k)
        b2 = p[d * k * hidden + hidden + hidden * k :]
        for row in range(n):
            inputs = np.zeros(d * k)
            for i in range(d):
                if graph[i, j]:
                    inputs[i * k + int(x[row, i])] = 1.0
            logits = np.maximum(inputs @ w1 + b1, 0.0) @ w2 + b2
            logits = logits - logits.max()
            out[row, j] = logits - np.log(np.exp(logits).sum())
    return out


def test_parameter_count_matches_paper():
    model = MLPCategorical(num_levels=3, hidden=16)
    assert model.params_per_node(11) == 11 * 3 * 16 + 16 + 16 * 3 + 3
    assert int(np.prod(model.theta_shape(11))) == 6545  # the paper's |theta| for Sachs (d = 11)
    layout = model.layout(11)
    assert layout["shape"] == [11, 595] and layout["blocks"]["b2"][1] == 595


def test_registered_and_rebuilt_from_metadata():
    assert LIKELIHOODS["mlp-categorical"] is MLPCategorical
    model = get_model("mlp-categorical", num_levels=4, hidden=8)
    assert model == MLPCategorical(num_levels=4, hidden=8)
    assert model_from_metadata({"model": model.name, "model_kwargs": model.kwargs()}) == model


def test_log_likelihood_matches_numpy_reference():
    model, graph, theta, x = random_case(seed=1, d=4, k=3, n=30, hidden=5)
    expected_lp = direct_log_probs(theta, graph, x, 3, 5)
    got_lp = np.asarray(model.log_probs(jnp.asarray(theta), jnp.asarray(graph), jnp.asarray(x)))
    np.testing.assert_allclose(got_lp, expected_lp, rtol=1e-4, atol=1e-5)
    picked = np.take_along_axis(expected_lp, x.astype(int)[..., None], axis=-1)[..., 0]  # [N, d]
    rows = np.asarray(model.log_likelihood_rows(jnp.asarray(theta), jnp.asarray(graph), jnp.asarray(x)))
    np.testing.assert_allclose(rows, picked.sum(axis=1), rtol=1e-4, atol=1e-4)
    total = float(model.log_likelihood(jnp.asarray(theta), jnp.asarray(graph), jnp.asarray(x)))
    assert total == pytest.approx(picked.sum(), rel=1e-4)


def test_probabilities_sum_to_one():
    model, graph, theta, x = random_case(seed=2, d=5, k=4, n=20, hidden=6)
    probs = np.exp(np.asarray(model.log_probs(jnp.asarray(theta), jnp.asarray(graph), jnp.asarray(x))))
    assert probs.shape == (20, 5, 4)
    np.testing.assert_allclose(probs.sum(axis=-1), 1.0, atol=1e-5)
    assert np.all(probs > 0)


def test_interventions_drop_terms():
    model, graph, theta, x = random_case(seed=3, d=4, k=3, n=12, hidden=5)
    lp = direct_log_probs(theta, graph, x, 3, 5)
    picked = np.take_along_axis(lp, x.astype(int)[..., None], axis=-1)[..., 0]
    interventions = np.zeros_like(x, dtype=np.uint8)
    interventions[::2, 1] = 1
    interventions[3, 0] = 1
    rows = model.log_likelihood_rows(jnp.asarray(theta), jnp.asarray(graph), jnp.asarray(x), jnp.asarray(interventions))
    expected = np.where(interventions == 1, 0.0, picked).sum(axis=1)
    np.testing.assert_allclose(np.asarray(rows), expected, rtol=1e-4, atol=1e-4)
    everything = np.ones_like(interventions)
    assert float(model.log_likelihood(jnp.asarray(theta), jnp.asarray(graph), jnp.asarray(x), everything)) == 0.0


def test_non_parent_values_do_not_matter():
    model, graph, theta, x = random_case(seed=4, d=4, k=3, n=15, hidden=5)
    graph = np.zeros((4, 4), np.float32)
    graph[0, 2] = graph[1, 2] = 1  # Pa(X_2) = {X_0, X_1}; X_3 is not a parent
    theta = model.sample_prior(np.random.default_rng(5), graph).astype(np.float32)
    # Even with non-zero weights on the non-parent's block the mask removes its influence.
    theta_dense = theta + np.float32(0.5) * (1 - model.parameter_mask(graph))
    changed = x.copy()
    changed[:, 3] = (changed[:, 3] + 1) % 3
    for th in (theta, theta_dense):
        a = np.asarray(model.log_probs(jnp.asarray(th), jnp.asarray(graph), jnp.asarray(x)))[:, 2]
        b = np.asarray(model.log_probs(jnp.asarray(th), jnp.asarray(graph), jnp.asarray(changed)))[:, 2]
        np.testing.assert_array_equal(a, b)
    # ...while changing a parent does change it.
    parent_changed = x.copy()
    parent_changed[:, 0] = (parent_changed[:, 0] + 1) % 3
    c = np.asarray(model.log_probs(jnp.asarray(theta), jnp.asarray(graph), jnp.asarray(parent_changed)))[:, 2]
    assert not np.allclose(a, c)


def test_mask_prior_and_sample_prior():
    model = MLPCategorical(num_levels=3, hidden=4)
    graph = np.zeros((3, 3), np.float32)
    graph[0, 1] = 1
    mask = model.parameter_mask(graph)
    assert mask.shape == model.theta_shape(3) == (3, 3 * 3 * 4 + 4 + 4 * 3 + 3)
    # Node 1 has one parent: its K * H first-layer weights of X_0 plus the 4 + 12 + 3 other parameters.
    assert mask[1].sum() == 3 * 4 + 4 + 12 + 3 and mask[0].sum() == mask[2].sum() == 4 + 12 + 3
    np.testing.assert_array_equal(np.asarray(model.parameter_mask(jnp.asarray(graph))), mask)
    theta = model.sample_prior(np.random.default_rng(0), graph)
    assert np.all(theta[mask == 0] == 0) and np.all(theta[mask == 1] != 0)
    # log P(theta | G) counts active parameters only.
    ones = np.ones(model.theta_shape(3), np.float32)
    expected = int(mask.sum()) * (-0.5 * np.log(2 * np.pi) - 0.5)
    assert float(model.log_prior_theta(jnp.asarray(ones), jnp.asarray(graph))) == pytest.approx(expected, rel=1e-5)


def test_log_reward_and_jit():
    model, graph, theta, x = random_case(seed=6, d=4, k=3, n=10, hidden=5)
    graph_prior = get_graph_prior("uniform", 4)
    th, g, data = jnp.asarray(theta), jnp.asarray(graph), jnp.asarray(x)
    fn = jax.jit(lambda th, g, data: log_reward(model, graph_prior, th, g, data))
    expected = model.log_likelihood(th, g, data) + model.log_prior_theta(th, g) + graph_prior.log_prob(g)
    assert float(fn(th, g, data)) == pytest.approx(float(expected), rel=1e-5)


def test_gaussian_only_parts_raise_clear_errors():
    model = MLPCategorical()
    with pytest.raises(JspgfnError, match="categorical CPDs.*log_probs"):
        model.mean(np.zeros(model.theta_shape(2)), np.zeros((2, 2)), np.zeros((1, 2)))
    with pytest.raises(JspgfnError, match="no observation noise variance"):
        _ = model.obs_var
    assert getattr(model, "obs_var", None) is None
    assert "obs_var" not in model.kwargs()


def test_check_codes():
    model = MLPCategorical(num_levels=3)
    model.check_codes(np.array([[0.0, 1.0, 2.0]]))
    with pytest.raises(JspgfnError, match="row 2, column 1: value 3.0 is not a category code 0..2"):
        model.check_codes(np.array([[0.0, 1.0], [3.0, 0.0]]), source="train.csv")
    with pytest.raises(JspgfnError, match="value 0.5"):
        model.check_codes(np.array([[0.5]]))
