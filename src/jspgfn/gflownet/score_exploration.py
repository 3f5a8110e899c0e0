"""Exploration by the model's closed-form score gains (option `explore_score_temperature`, beyond the paper).

The paper's exploratory action is uniform over the valid actions. With a temperature T > 0 it is drawn
instead with probability proportional to

  edge i -> j:  exp((log P(x_j | pa_j + i) - log P(x_j | pa_j) + log P(G + (i -> j)) - log P(G)) / T)
  stop:         1

the local ratio R(G + (i -> j)) / R(G) of the marginal reward (theta integrated out) raised to 1 / T. At a
graph that lacks edges the data need (each worth tens to hundreds of nats), the exploratory step adds one
of them, where a uniform edge almost never does (docs/jspgfn-beyond-d5.md, twenty-ninth session). Only the
behaviour policy changes: the loss and its solution are the paper's (section 3.3: any sampling distribution
of full support; the mixture keeps the policy's support).

Linear Gaussian likelihood only (the closed form of conjugate.py, written here in float32 JAX for the
jitted step). The score reads the run's whole training data, not a mini-batch.
"""

import jax
import jax.numpy as jnp

_LOG_2PI = 1.8378770664093453


def node_statistics(x, interventions=None):
    """Per-node sufficient statistics of x float [N, d], rows intervened on node j left out of node j's:
    (gram [d, d, d], xty [d, d], yty [d], count [d]) as in conjugate.NodeStatistics."""
    keep = jnp.ones_like(x) if interventions is None else 1.0 - jnp.asarray(interventions, x.dtype)  # [N, d]
    gram = jnp.einsum("nj,na,nb->jab", keep, x, x)
    xty = jnp.einsum("nj,na->ja", keep * x, x)
    yty = jnp.sum(keep * x * x, axis=0)
    return gram, xty, yty, jnp.sum(keep, axis=0)


def local_log_marginals(model, stats, masks):
    """log P(x_j | x_pa) with theta_j integrated out, for parent masks float [..., d, d] (masks[..., j, :]
    the parents of node j) -> [..., d]. The formulas of conjugate._node_gaussians and _log_marginals."""
    gram, xty, yty, count = stats
    s2, v0, mu0 = model.obs_var, model.prior_var, model.prior_mean
    d = masks.shape[-1]
    outer = masks[..., :, None] * masks[..., None, :]
    precision = outer * gram / s2 + jnp.eye(d) * (masks / v0 + (1.0 - masks))[..., None, :]
    chol = jnp.linalg.cholesky(precision)
    logdet = 2.0 * jnp.sum(jnp.log(jnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    gram_m = jnp.einsum("jab,...jb->...ja", gram, masks)
    rtr = yty - 2.0 * mu0 * jnp.sum(masks * xty, -1) + mu0**2 * jnp.sum(masks * gram_m, -1)
    u = masks * (xty - mu0 * gram_m) / s2
    solved = jax.scipy.linalg.cho_solve((chol, True), u[..., None])[..., 0]
    quad = rtr / s2 - jnp.sum(u * solved, axis=-1)
    logdet_cov = count * jnp.log(s2) + jnp.sum(masks, -1) * jnp.log(v0) + logdet
    return -0.5 * (count * _LOG_2PI + logdet_cov + quad)


def edge_gains(model, graph_prior, x, interventions, adjacency):
    """log R(G + (i -> j)) - log R(G) of the marginal reward for every pair: adjacency uint8 [B, d, d],
    x float [N, d] -> float [B, d, d] (entry [b, i, j]; meaningless where i -> j is not a valid edge)."""
    d = adjacency.shape[-1]
    stats = node_statistics(jnp.asarray(x, jnp.float32), interventions)
    parents = jnp.swapaxes(adjacency, -1, -2).astype(jnp.float32)  # [B, j, parents]
    added = jnp.maximum(parents[:, None], jnp.eye(d)[None, :, None, :])  # [B, i, j, parents]: pa_j + i
    gains = local_log_marginals(model, stats, added) - local_log_marginals(model, stats, parents)[:, None]
    return gains + graph_prior.log_edge_weight


def exploration_logits(gains, mask, temperature):
    """Logits of the exploratory action: gains / T on the valid edges, 0 on the stop, -inf elsewhere.
    gains float [B, d, d], mask bool [B, d*d + 1] (valid edges flattened, then stop) -> [B, d*d + 1].
    A non-finite gain (a float32 Cholesky that failed) makes that edge impossible, never the draw NaN."""
    b = gains.shape[0]
    edges = gains.reshape(b, -1) / temperature
    logits = jnp.concatenate([jnp.where(jnp.isfinite(edges), edges, -jnp.inf), jnp.zeros((b, 1))], axis=1)
    return jnp.where(mask, logits, -jnp.inf)
