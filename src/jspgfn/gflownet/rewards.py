"""log R(G, theta) for a batch of graphs and S theta each, as the loss needs it.

`log_rewards` is the same function as `models.log_reward` batched over [B, S]. The two
Gaussian models the loss trains most have a batched likelihood written for the whole
[B, S] block at once (the generic path vmaps the model's one-theta likelihood, which
XLA compiles to many small products):
  linear Gaussian: the sufficient statistic X^T X, O(d^3) per theta instead of O(M d^2);
  MLP Gaussian:    the first layer of all B S d node MLPs as one matmul with the data,
                   [B S d H, d] x [d, M] (the d=20 MLP training iteration 1.57x faster, timed
                   side by side; docs/speed.md).
Each repeats its model's `mean` in batched form, on purpose: `model.mean` stays the one-theta
reference (data generation calls it in float64, so its arithmetic must not change), and each
fast path is checked against `models.log_reward` in tests/test_gflownet_policy.py. They apply
to exactly these classes (a subclass may change the mean) and to data without interventions.
"""

import jax
import jax.numpy as jnp

from jspgfn.models import LinearGaussian, MLPGaussian


def log_rewards(model, graph_prior, theta_nodes, graphs, x, num_total, interventions=None):
    """log R(G, theta) for theta [B, S, d, P] (node layout), graphs [B, d, d]: -> [B, S].

    The likelihood of the M rows of x is scaled by num_total / M (unbiased mini-batch
    estimate, section 3.5). Entries of x flagged in `interventions` [M, d] (hard
    interventions) contribute no likelihood term; with interventions every model takes
    the generic path (model.log_likelihood).
    """
    scale = num_total / x.shape[0]
    g = graphs.astype(jnp.float32)
    fast = _FAST_LOGLIK.get(type(model)) if interventions is None else None
    if fast is not None:
        loglik = fast(model, theta_nodes, g, x)
    else:

        def one(theta_n, graph):
            return model.log_likelihood(model.from_node_params(theta_n), graph, x, interventions)

        loglik = jax.vmap(lambda th, gr: jax.vmap(lambda t: one(t, gr))(th))(theta_nodes, g)

    def prior(theta_n, graph):
        return model.log_prior_theta(model.from_node_params(theta_n), graph)

    log_prior = jax.vmap(lambda th, gr: jax.vmap(lambda t: prior(t, gr))(th))(theta_nodes, g)
    return loglik * scale + log_prior + graph_prior.log_prob(g)[:, None]


def _gaussian_loglik(model, sse, num_entries):
    """sum of log N(x | mean, obs_var) over num_entries entries with squared error sse."""
    return -0.5 * sse / model.obs_var - 0.5 * num_entries * jnp.log(2 * jnp.pi * model.obs_var)


def _linear_gaussian_loglik(model, theta_nodes, graphs, x):
    """sum_n log N(x_n | x_n (G * W), obs_var I) via X^T X: theta_nodes [B, S, d(j), d(i)] -> [B, S]."""
    m, d = x.shape
    xtx = x.T @ x  # [d, d]
    w = jnp.swapaxes(theta_nodes, -1, -2) * graphs[:, None]  # [B, S, d(i), d(j)] weights i -> j
    resid = jnp.eye(d) - w  # X - X W = X (I - W)
    sse = jnp.einsum("bsij,ik,bskj->bs", resid, xtx, resid)  # tr((I-W)^T X^T X (I-W))
    return _gaussian_loglik(model, sse, m * d)


def _mlp_gaussian_loglik(model, theta_nodes, graphs, x):
    """sum_n log N(x_n | MLP_j(M_j x_n; theta_j), obs_var): theta_nodes [B, S, d, P] (models.mlp's
    layout), graphs [B, d, d] float -> [B, S]. Rows are the last axis throughout ([..., M])."""
    m, d = x.shape
    w1, b1, w2, b2 = model.unpack(theta_nodes)  # [B, S, d(j), d(i), H], [B, S, d, H] x 2, [B, S, d]
    parents = jnp.swapaxes(graphs, -1, -2)  # [B, d(j), d(i)]
    w1 = jnp.swapaxes(w1, -1, -2) * parents[:, None, :, None, :]  # [B, S, d(j), H, d(i)]
    pre = (w1.reshape(-1, d) @ x.T).reshape(w1.shape[:-1] + (m,)) + b1[..., None]  # [B, S, d, H, M]
    mean = jnp.sum(jax.nn.relu(pre) * w2[..., None], axis=-2) + b2[..., None]  # [B, S, d, M]
    sse = jnp.sum(jnp.square(x.T - mean), axis=(-2, -1))
    return _gaussian_loglik(model, sse, m * d)


_FAST_LOGLIK = {LinearGaussian: _linear_gaussian_loglik, MLPGaussian: _mlp_gaussian_loglik}
