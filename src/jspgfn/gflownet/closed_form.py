"""The linear Gaussian model's closed-form graph scores in float32 JAX, for the jitted training step.

The formulas of conjugate.py (float64 numpy, paper appendix "Posterior of the linear Gaussian model"), on the
per-node sufficient statistics of the run's whole training data (not a mini-batch):

- `edge_gains`: log R(G + (i -> j)) - log R(G) of the marginal reward (theta integrated out) for every pair,
  the score-led exploration's logits (score_exploration.py, option `explore_score_temperature`);
- `graph_gains`: log R(G) - log R(empty), the stop offset from the closed-form score (score_offset.py, option
  `stop_score_closed_form`);
- `removal_gains`: log R(G - (i -> j)) - log R(G) for every edge, with `edge_gains` the local moves of option
  `backward_every` (local_search.py).

Both beyond the paper. The factorisations are written here with elementwise operations (`cholesky_and_solve`,
`logdet_and_quadratic`), not LAPACK (which deadlocked inside the jitted step at d=20).
"""

import jax
import jax.numpy as jnp


def as_float32(x, interventions=None):
    """(x, interventions) as float32 arrays (interventions may be None): the data a network wrapper reads."""
    return jnp.asarray(x, jnp.float32), None if interventions is None else jnp.asarray(interventions, jnp.float32)


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


def _node_systems(model, x, interventions, adjacency):
    """Each node's regression on its parents in masked form, as conjugate._node_gaussians and _log_marginals:
    (gram [d, d, d], xty [d, d]) of x float [N, d], and for adjacency uint8 [B, d, d] the parent masks
    [B, j, d], the precisions Lambda [B, j, d, d] (identity outside the parents), gram_m = gram m [B, j, d] and
    u = m * (xty - mu0 gram m) / s2 [B, j, d]."""
    gram, xty = node_statistics(jnp.asarray(x, jnp.float32), interventions)
    masks = jnp.swapaxes(adjacency, -1, -2).astype(jnp.float32)  # [B, j, parents]
    return gram, xty, masks, *_masked_systems(model, gram, xty, masks)


def _masked_systems(model, gram, xty, masks):
    """(precision [..., j, d, d], gram_m [..., j, d], u [..., j, d]) of each node j with parents masks [..., j, d]."""
    s2, v0, mu0 = model.obs_var, model.prior_var, model.prior_mean
    d = masks.shape[-1]
    precision = (
        masks[..., :, None] * masks[..., None, :] * gram / s2 + jnp.eye(d) * (masks / v0 + 1.0 - masks)[..., None, :]
    )
    gram_m = jnp.einsum("jab,...jb->...ja", gram, masks)  # [..., j, d]
    u = masks * (xty - mu0 * gram_m) / s2  # [..., j, d]
    return precision, gram_m, u


def edge_gains(model, graph_prior, x, interventions, adjacency):
    """log R(G + (i -> j)) - log R(G) of the marginal reward for every pair: adjacency uint8 [B, d, d],
    x float [N, d] -> float [B, d, d] (entry [b, i, j]; meaningless where i -> j is not a valid edge).

    The formulas of conjugate._node_gaussians and _log_marginals, with parent i added to node j by the
    block (Schur complement) update of the current parents' factor: one d x d factorisation per node and graph,
    not one per pair. With Lambda the current precision (identity outside the parents P), b = gram[:, i] / s2
    on P, w = L^-1 b and s = gram[i, i] / s2 + 1 / v0 - |w|^2: log det gains log s, and u' = (u - mu0 b, u_i')
    gives u'^T Lambda'^-1 u' = |y - mu0 w|^2 + (u_i' - w . (y - mu0 w))^2 / s, y = L^-1 u."""
    s2, v0, mu0 = model.obs_var, model.prior_var, model.prior_mean
    gram, xty, masks, precision, gram_m, u = _node_systems(model, x, interventions, adjacency)
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


def logdet_and_quadratic(matrix, vector):
    """(log det A, v^T A^-1 v) for A float [..., n, n] positive definite and v [..., n] -> ([...], [...]).

    Gaussian elimination without pivoting of the augmented [[A, v], [v^T, 0]], unrolled over the n (static)
    pivots, each step one fused update of the shrinking trailing block: the product of the pivots is det A and
    the last entry left is -v^T A^-1 v. Fewer memory passes than cholesky_and_solve's loop, which writes the whole
    factor at every column (graph_gains runs on every graph of the loss's batch; the timing of each, with the
    command: docs/jspgfn-beyond-d5.md, thirty-third session)."""
    n = matrix.shape[-1]
    top = jnp.concatenate([matrix, vector[..., :, None]], axis=-1)
    bottom = jnp.concatenate([vector, jnp.zeros_like(vector[..., :1])], axis=-1)[..., None, :]
    block = jnp.concatenate([top, bottom], axis=-2)  # [..., n + 1, n + 1]
    logdet = jnp.zeros(matrix.shape[:-2], matrix.dtype)
    for _ in range(n):
        pivot = block[..., 0, 0]
        logdet = logdet + jnp.log(pivot)
        column = block[..., 1:, 0]
        block = block[..., 1:, 1:] - column[..., :, None] * column[..., None, :] / pivot[..., None, None]
    return logdet, -block[..., 0, 0]


def graph_gains(model, graph_prior, x, interventions, adjacency):
    """log R(G) - log R(empty) of the marginal reward, log P(D | G) + log P(G) less the empty graph's: adjacency
    uint8 [B, d, d], x float [N, d], interventions 0/1 [N, d] or None -> float [B].

    Per node j with parents P (mask m), conjugate._log_marginals less its value at P empty (Lambda = I, u = 0,
    r = x_j): -1/2 (|P| log v0 + log det Lambda + (r^T r - x_j^T x_j) / s2 - u^T Lambda^-1 u); the terms in N
    and log s2 cancel."""
    gram, xty, masks, precision, gram_m, u = _node_systems(model, x, interventions, adjacency)
    gains, num_parents = _parent_set_gains(model, xty, masks, precision, gram_m, u)  # [B, j] each
    return jnp.sum(gains, axis=-1) + graph_prior.log_edge_weight * jnp.sum(num_parents, axis=-1)


def _parent_set_gains(model, xty, masks, precision, gram_m, u):
    """Each node's log beta_j(P) - log beta_j(empty), without the graph prior, from its system in masked form
    (_node_systems' arrays, any leading axes [..., j]): (gains [..., j], num_parents [..., j])."""
    s2, v0, mu0 = model.obs_var, model.prior_var, model.prior_mean
    logdet, quadratic = logdet_and_quadratic(precision, u)  # the identity off the parents adds 0
    rtr_change = -2.0 * mu0 * jnp.sum(masks * xty, -1) + mu0**2 * jnp.sum(masks * gram_m, -1)
    num_parents = jnp.sum(masks, axis=-1)
    return -0.5 * (num_parents * jnp.log(v0) + logdet + rtr_change / s2 - quadratic), num_parents


def removal_gains(model, graph_prior, x, interventions, adjacency):
    """log R(G - (i -> j)) - log R(G) of the marginal reward for every pair: adjacency uint8 [B, d, d], x float
    [N, d] -> float [B, d, d] (entry [b, i, j]; meaningless where i -> j is not in G). Only node j's score changes:
    its system with parent i left out, one d x d elimination per (graph, edge), not one per node and edge."""
    d = adjacency.shape[-1]
    gram, xty, masks, precision, gram_m, u = _node_systems(model, x, interventions, adjacency)
    base, _ = _parent_set_gains(model, xty, masks, precision, gram_m, u)  # [B, j]
    without = masks[..., None, :, :] * (1.0 - jnp.eye(d))[:, None, :]  # [B, i, j, parents]: parent i left out
    gains, _ = _parent_set_gains(model, xty, without, *_masked_systems(model, gram, xty, without))  # [B, i, j]
    return gains - base[..., None, :] - graph_prior.log_edge_weight
