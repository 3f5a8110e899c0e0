"""The conjugate linear Gaussian model: closed-form P(theta | G, D) and P(D | G) per node.

Paper appendix "Posterior of the linear Gaussian model".

Per node j with parent mask m (m_i = 1 iff i -> j), design X (rows not intervened on j),
obs_var s2, prior N(mu0, v0) on each active weight:

  P(theta_j | G, D) = N(mean_j, Lambda_j^-1) on the parent dimensions, 0 elsewhere, with
    Lambda_j = I / v0 + X_pa^T X_pa / s2,   mean_j = Lambda_j^-1 (mu0 / v0 + X_pa^T x_j / s2)
  P(x_j | x_pa) = N(x_j; X_pa mu0 1, s2 I + v0 X_pa X_pa^T)  (theta_j integrated out),
    evaluated in d dimensions with the matrix determinant lemma and Woodbury:
    log det = n log s2 + k log v0 + log det Lambda_j,
    quad    = r^T r / s2 - u^T Lambda_j^-1 u,  r = x_j - X_pa mu0 1,  u = X_pa^T r / s2.

Everything runs on the per-node sufficient statistics (Gram matrices), in float64 numpy.
A "masked" precision (identity outside the parents) lets one batch of d x d Cholesky
factorisations serve every parent set. Used by the exact posterior (exact.py, exact_dp.py),
evaluate and the bootstrap baselines.
"""

import math
import numbers
from typing import NamedTuple

import numpy as np

from jspgfn.errors import JspgfnError
from jspgfn.models import LinearGaussian

_LOG_2PI = math.log(2.0 * math.pi)


# ------------------------------------------------------------ building blocks


class NodeStatistics(NamedTuple):
    """Sufficient statistics of each node's regression, rows intervened on that node removed.

    gram [d, d, d]: gram[j] = X^T X;  xty [d, d]: xty[j] = X^T x_j;  yty [d]: x_j^T x_j;
    count [d]: number of rows used for node j.
    """

    gram: np.ndarray
    xty: np.ndarray
    yty: np.ndarray
    count: np.ndarray


class _Gaussians(NamedTuple):
    """A batch of B node posteriors in masked form (identity precision outside the parents)."""

    mask: np.ndarray  # [B, d] 1 on parents
    mean: np.ndarray  # [B, d] 0 outside the parents
    precision: np.ndarray  # [B, d, d]
    chol: np.ndarray  # [B, d, d] lower Cholesky factor of precision
    logdet: np.ndarray  # [B] log det of the parent block of precision


def node_statistics(x, interventions=None):
    """NodeStatistics of data x [N, d] (float64); interventions [N, d] drop rows per node."""
    x = np.asarray(x, dtype=np.float64)
    if interventions is None:
        keep = np.ones_like(x)
    else:
        interventions = np.asarray(interventions)
        if interventions.shape != x.shape:
            raise JspgfnError(f"interventions have shape {interventions.shape}, the data {x.shape}")
        keep = 1.0 - interventions.astype(np.float64)
    gram = np.einsum("nj,na,nb->jab", keep, x, x)
    xty = np.einsum("nj,na->ja", keep * x, x)
    yty = np.einsum("nj,nj->j", keep, x * x)
    return NodeStatistics(gram, xty, yty, keep.sum(axis=0))


def parent_codes(graphs):
    """Parent sets as bit codes: graphs [..., d, d] -> int64 [..., d], bit i of code j = edge i -> j."""
    graphs = np.asarray(graphs).astype(np.int64)
    bits = np.left_shift(1, np.arange(graphs.shape[-1], dtype=np.int64))
    return np.einsum("...ij,i->...j", graphs, bits)


def _code_masks(codes, num_variables):
    """int codes [B] -> float64 masks [B, d]."""
    return ((codes[:, None] >> np.arange(num_variables)) & 1).astype(np.float64)


def _node_gaussians(model, stats, nodes, masks):
    """Posteriors P(theta_j | pa_j, D) for a batch: nodes int [B], masks [B, d] -> _Gaussians."""
    s2, v0, mu0 = model.obs_var, model.prior_var, model.prior_mean
    d = masks.shape[-1]
    outer = masks[:, :, None] * masks[:, None, :]
    diagonal = masks / v0 + (1.0 - masks)
    precision = outer * stats.gram[nodes] / s2 + np.eye(d) * diagonal[:, None, :]
    chol = np.linalg.cholesky(precision)
    shift = masks * (mu0 / v0 + stats.xty[nodes] / s2)
    mean = np.linalg.solve(precision, shift[..., None])[..., 0] * masks
    logdet = 2.0 * np.sum(np.log(np.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    return _Gaussians(masks, mean, precision, chol, logdet)


def _log_marginals(model, stats, nodes, gaussians):
    """log P(x_j | x_pa) [B] from the masked posteriors (Woodbury / determinant lemma)."""
    s2, v0, mu0 = model.obs_var, model.prior_var, model.prior_mean
    m = gaussians.mask
    gram, xty = stats.gram[nodes], stats.xty[nodes]
    gram_m = np.einsum("bij,bj->bi", gram, m)
    rtr = stats.yty[nodes] - 2.0 * mu0 * np.sum(m * xty, -1) + mu0**2 * np.sum(m * gram_m, -1)
    u = m * (xty - mu0 * gram_m) / s2
    solved = np.linalg.solve(gaussians.precision, u[..., None])[..., 0]
    quad = rtr / s2 - np.sum(u * solved, axis=-1)
    count = stats.count[nodes]
    logdet_cov = count * math.log(s2) + m.sum(-1) * math.log(v0) + gaussians.logdet
    return -0.5 * (count * _LOG_2PI + logdet_cov + quad)


def _unique_node_posteriors(model, stats, graphs):
    """Dedupe the (node, parent set) pairs of graphs [K, d, d] -> (_Gaussians [U], index int [K, d])."""
    d = graphs.shape[-1]
    keys = parent_codes(graphs) * d + np.arange(d)  # [K, d]
    unique, inverse = np.unique(keys, return_inverse=True)
    nodes, codes = unique % d, unique // d
    return _node_gaussians(model, stats, nodes, _code_masks(codes, d)), inverse.reshape(keys.shape)


def check_positive(name, value):
    """JspgfnError unless value is a finite real number > 0 (a variance, a scale)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (math.isfinite(value) and value > 0):
        raise JspgfnError(f"{name} must be a finite number > 0, got {value!r}")


def check_linear(model):
    """JspgfnError unless model is a LinearGaussian with finite obs_var, prior_var > 0 and a finite prior_mean."""
    if not isinstance(model, LinearGaussian):
        raise JspgfnError(
            f"the closed-form posterior needs the linear Gaussian model (lingauss), "
            f"got '{getattr(model, 'name', type(model).__name__)}'"
        )
    check_positive("obs_var", model.obs_var)
    check_positive("prior_var", model.prior_var)
    mean = model.prior_mean
    if isinstance(mean, bool) or not isinstance(mean, numbers.Real) or not math.isfinite(mean):
        raise JspgfnError(f"prior_mean must be a finite number, got {mean!r}")


def _as_batch(graphs, theta=None):
    graphs = np.asarray(graphs)
    single = graphs.ndim == 2
    graphs = graphs[None] if single else graphs
    if theta is not None:
        theta = np.asarray(theta, dtype=np.float64)
        theta = theta[None] if single else theta
        if theta.shape != graphs.shape:
            raise JspgfnError(f"theta has shape {theta.shape[int(single) :]}, expected the graph's {graphs.shape[1:]}")
    return single, graphs, theta


# ------------------------------------------------------------ public: theta


def posterior_theta(model, x, graph, interventions=None):
    """Closed-form P(theta_j | G, D) for every node j.

    Args:
      model: LinearGaussian.
      x: float [N, d] data.
      graph: [d, d] adjacency (graph[i, j] = 1 means i -> j).
      interventions: optional 0/1 [N, d]; rows intervened on node j are left out of node j's terms.
    Returns:
      (means float64 [d, d], covs float64 [d, d, d]): means[j] = E[theta[:, j]] (incoming weights of
      X_j, so `means.T` is in the theta layout), covs[j] = Cov(theta[:, j]); both are exactly 0
      outside the parents of j.
    """
    check_linear(model)
    graph = np.asarray(graph)
    d = graph.shape[-1]
    stats = node_statistics(x, interventions)
    masks = graph.T.astype(np.float64)  # row j = parents of j
    gaussians = _node_gaussians(model, stats, np.arange(d), masks)
    covs = np.linalg.inv(gaussians.precision) * masks[:, :, None] * masks[:, None, :]
    return gaussians.mean, covs


def log_posterior_theta(model, x, graph, theta, interventions=None):
    """log P(theta | G, D): sum over nodes of the Gaussian log density on the parent dimensions only.

    Args:
      model: LinearGaussian; x: float [N, d]; interventions: optional 0/1 [N, d].
      graph: [d, d] or a batch [K, d, d]; theta: float, same shape (theta[k, i, j] = weight of i -> j;
        entries off the graph are ignored).
    Returns:
      float (one pair) or float64 [K]. Each distinct (node, parent set) is factorised once.
    """
    check_linear(model)
    single, graphs, theta = _as_batch(graph, theta)
    stats = node_statistics(x, interventions)
    gaussians, index = _unique_node_posteriors(model, stats, graphs)
    mask, mean = gaussians.mask[index], gaussians.mean[index]  # [K, d(node), d]
    diff = mask * (np.swapaxes(theta, -1, -2) - mean)  # row j = incoming weights of X_j
    lower_t = np.swapaxes(gaussians.chol, -1, -2)[index]  # L^T, quad = ||L^T diff||^2
    quad = np.sum(np.einsum("kjab,kjb->kja", lower_t, diff) ** 2, axis=-1)
    logp = -0.5 * mask.sum(-1) * _LOG_2PI + 0.5 * gaussians.logdet[index] - 0.5 * quad  # [K, d]
    total = logp.sum(axis=-1)
    return float(total[0]) if single else total


def sample_posterior_theta(model, x, graphs, rng, interventions=None):
    """Draw theta_k ~ P(theta | G_k, D) for graphs [K, d, d] -> float64 [K, d, d] (0 off the graph).

    With Lambda = L L^T, theta_j = mean_j + L^-T z, z ~ N(0, I); rng is a numpy Generator.
    """
    check_linear(model)
    _, graphs, _ = _as_batch(graphs)
    stats = node_statistics(x, interventions)
    gaussians, index = _unique_node_posteriors(model, stats, graphs)
    z = rng.standard_normal(graphs.shape)  # [K, d(node), d]
    lower_t = np.swapaxes(gaussians.chol, -1, -2)[index]
    noise = np.linalg.solve(lower_t, z[..., None])[..., 0]
    node_major = gaussians.mask[index] * (gaussians.mean[index] + noise)
    return np.swapaxes(node_major, -1, -2)


def log_marginal_likelihood_local(model, x, node, parents, interventions=None):
    """log P(x_j | x_pa, G) with theta_j integrated out (rows intervened on `node` excluded).

    x_j ~ N(X_pa mu0 1, obs_var I + prior_var X_pa X_pa^T), evaluated through d x d
    Cholesky factors (Woodbury), never the N x N covariance.
    Args:
      node: j; parents: indices of the parents (any iterable of ints, j excluded).
    Returns: float.
    """
    check_linear(model)
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[1]
    parents = [int(p) for p in parents]
    if node in parents:
        raise JspgfnError(f"node {node} cannot be its own parent")
    mask = np.zeros((1, d))
    mask[0, parents] = 1.0
    stats = node_statistics(x, interventions)
    nodes = np.array([node])
    return float(_log_marginals(model, stats, nodes, _node_gaussians(model, stats, nodes, mask))[0])


def log_marginal_likelihood_graphs(model, x, graphs, interventions=None, graph_prior=None, batch_size=4096):
    """log P(D | G_k) (theta integrated out) of each graph, plus log P(G_k) when graph_prior is given.

    log P(D | G) = sum_j log P(x_j | x_pa_j) (log_marginal_likelihood_local); log P(G) is the prior's
    unnormalised log_edge_weight * |E(G)| (0 under the uniform prior), as in the exact posterior's scores.
    Each distinct (node, parent set) of the batch is scored once, batch_size of them at a time, so K
    graphs cost no more than their distinct parent sets (memory O(batch_size d^2)).
    Args:
      model: LinearGaussian; x: float [N, d]; interventions: optional 0/1 [N, d].
      graphs: [d, d] or a batch [K, d, d] (any 0/1 graphs; for a cyclic one the sum of the local terms is
        not a likelihood, the caller decides whether to keep it).
    Returns: float (one graph) or float64 [K].
    """
    check_linear(model)
    single, graphs, _ = _as_batch(graphs)
    graphs = (graphs != 0).astype(np.int64)
    d = graphs.shape[-1]
    if np.any(np.diagonal(graphs, axis1=-2, axis2=-1)):
        raise JspgfnError("a graph has a self-loop (a node cannot be its own parent)")
    stats = node_statistics(x, interventions)
    keys = parent_codes(graphs) * d + np.arange(d)  # [K, d]
    unique, inverse = np.unique(keys, return_inverse=True)
    nodes, codes = unique % d, unique // d
    local = np.empty(len(unique))
    for start in range(0, len(unique), batch_size):
        n, c = nodes[start : start + batch_size], codes[start : start + batch_size]
        local[start : start + batch_size] = _log_marginals(
            model, stats, n, _node_gaussians(model, stats, n, _code_masks(c, d))
        )
    total = local[inverse.reshape(keys.shape)].sum(axis=-1)
    if graph_prior is not None:
        total = total + float(graph_prior.log_edge_weight) * graphs.sum(axis=(-2, -1))
    return float(total[0]) if single else total


def local_score_table(model, x, interventions=None):
    """log P(x_j | x_pa) for every node j and parent code c: float64 [d, 2^d], NaN where bit j of c is set.

    Computes the d * 2^(d-1) valid entries in one batch.
    """
    check_linear(model)
    d = np.shape(x)[1]
    codes = np.arange(1 << d)
    nodes, codes = np.nonzero((codes[None, :] >> np.arange(d)[:, None] & 1) == 0)
    stats = node_statistics(x, interventions)
    gaussians = _node_gaussians(model, stats, nodes, _code_masks(codes, d))
    table = np.full((d, 1 << d), np.nan)
    table[nodes, codes] = _log_marginals(model, stats, nodes, gaussians)
    return table
