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

from jspgfn.gflownet import policy


def node_statistics(x, interventions=None):
    """Per-node sufficient statistics of x float [N, d], rows intervened on node j left out of node j's:
    (gram [d, d, d], xty [d, d]) as in conjugate.NodeStatistics (the gains need no yty nor count)."""
    keep = jnp.ones_like(x) if interventions is None else 1.0 - jnp.asarray(interventions, x.dtype)  # [N, d]
    return jnp.einsum("nj,na,nb->jab", keep, x, x), jnp.einsum("nj,na->ja", keep * x, x)


def cholesky_and_solve(matrix, vectors):
    """(L, Y) with L lower triangular, L L^T = matrix float [..., n, n] (positive definite) and L Y = vectors
    [..., n, k], so that v^T matrix^-1 v = |L^-1 v|^2 for each column v. Written with elementwise operations in
    a loop over the n columns, not LAPACK: LAPACK's Cholesky batched over every (graph, node, candidate parent
    set) deadlocked inside the jitted training step at d=20 (JAX 0.10.2 on CPU, twenty-ninth session;
    tests/test_score_exploration.py::test_it_trains_at_d20)."""
    n = matrix.shape[-1]
    eye = jnp.eye(n, dtype=matrix.dtype)

    def column(j, carry):
        chol, solved = carry
        pick = eye[j]  # [n], one-hot of column j
        row = jnp.einsum("...ik,i->...k", chol, pick)  # row j of L; zero from column j on
        diagonal = jnp.sqrt(jnp.einsum("...ik,i,k->...", matrix, pick, pick) - jnp.sum(row * row, -1))
        column_j = jnp.einsum("...ik,k->...i", matrix, pick) - jnp.einsum("...ik,...k->...i", chol, row)
        new = jnp.where(jnp.arange(n) > j, column_j / diagonal[..., None], 0.0) + pick * diagonal[..., None]
        entry = (jnp.einsum("...ik,i->...k", vectors, pick) - jnp.einsum("...i,...ik->...k", row, solved)) / diagonal[
            ..., None
        ]
        return chol + new[..., :, None] * pick, solved + pick[:, None] * entry[..., None, :]

    return jax.lax.fori_loop(0, n, column, (jnp.zeros_like(matrix), jnp.zeros_like(vectors)))


def edge_gains(model, graph_prior, x, interventions, adjacency):
    """log R(G + (i -> j)) - log R(G) of the marginal reward for every pair: adjacency uint8 [B, d, d],
    x float [N, d] -> float [B, d, d] (entry [b, i, j]; meaningless where i -> j is not a valid edge).

    The formulas of conjugate._node_gaussians and _log_marginals, with parent i added to node j by the
    block (Schur complement) update of the current parents' factor: one d x d factorisation per node and graph,
    not one per pair. With Lambda the current precision (identity outside the parents P), b = gram[:, i] / s2
    on P, w = L^-1 b and s = gram[i, i] / s2 + 1 / v0 - |w|^2: log det gains log s, and u' = (u - mu0 b, u_i')
    gives u'^T Lambda'^-1 u' = |y - mu0 w|^2 + (u_i' - w . (y - mu0 w))^2 / s, y = L^-1 u."""
    s2, v0, mu0 = model.obs_var, model.prior_var, model.prior_mean
    d = adjacency.shape[-1]
    gram, xty = node_statistics(jnp.asarray(x, jnp.float32), interventions)
    masks = jnp.swapaxes(adjacency, -1, -2).astype(jnp.float32)  # [B, j, parents]
    precision = (
        masks[..., :, None] * masks[..., None, :] * gram / s2 + jnp.eye(d) * (masks / v0 + 1.0 - masks)[..., None, :]
    )
    gram_m = jnp.einsum("jab,...jb->...ja", gram, masks)  # [B, j, d]
    u = masks * (xty - mu0 * gram_m) / s2  # [B, j, d]
    cross = masks[..., :, None] * gram / s2  # [B, j, parents, i]: b of each candidate i
    _, solved = cholesky_and_solve(precision, jnp.concatenate([u[..., None], cross], axis=-1))
    y, w = solved[..., 0], solved[..., 1:]  # [B, j, d], [B, j, d, i]
    # Only the changes enter: the terms in N, log s2 and log det L cancel in the difference.
    gram_ii = jnp.diagonal(gram, axis1=-2, axis2=-1)  # [j, i]
    schur = gram_ii / s2 + 1.0 / v0 - jnp.sum(w * w, axis=-2)  # [B, j, i]
    shifted = y[..., None] - mu0 * w  # [B, j, parents, i]
    u_new = (xty - mu0 * (gram_m + gram_ii)) / s2  # [B, j, i]: the new parent's entry of u'
    quad_change = (
        jnp.sum(shifted * shifted, axis=-2)
        + (u_new - jnp.sum(w * shifted, axis=-2)) ** 2 / schur
        - jnp.sum(y * y, axis=-1)[..., None]
    )
    rtr_change = -2.0 * mu0 * xty + mu0**2 * (2.0 * gram_m + gram_ii)  # [B, j, i]
    gains = -0.5 * (jnp.log(v0) + jnp.log(schur) + rtr_change / s2 - quad_change)  # [B, j, i]
    return jnp.swapaxes(gains, -1, -2) + graph_prior.log_edge_weight


def exploration_logits(gains, mask, temperature):
    """Logits of the exploratory action: gains / T on the valid edges, 0 on the stop, -inf elsewhere.
    gains float [B, d, d], mask bool [B, d*d + 1] (valid edges flattened, then stop) -> [B, d*d + 1].
    A non-finite gain (a float32 Cholesky that failed) makes that edge impossible, never the draw NaN."""
    b = gains.shape[0]
    edges = gains.reshape(b, -1) / temperature
    logits = jnp.concatenate([jnp.where(jnp.isfinite(edges), edges, -jnp.inf), jnp.zeros((b, 1))], axis=1)
    return jnp.where(mask, logits, -jnp.inf)


def mix_uniform(logits, mask, share):
    """Log-probabilities of share * softmax(logits) + (1 - share) * uniform over the valid actions: logits
    float [B, A] (-inf off the mask), mask bool [B, A], share float [] in [0, 1] (may be traced) -> float [B, A]
    (-inf off the mask).
    The uniform part keeps visiting the graphs the score leads away from (docs/jspgfn-beyond-d5.md, thirtieth
    session: at d=5 the score-led exploration alone leaves dense graphs untrained)."""
    led = jax.nn.log_softmax(logits, axis=-1) + jnp.log(share)
    uniform = jax.nn.log_softmax(policy.uniform_logits(mask), axis=-1) + jnp.log1p(-share)
    return jnp.where(mask, jnp.logaddexp(led, uniform), -jnp.inf)
