"""The exact joint posterior P(G, theta | D) of the linear Gaussian model.

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
factorisations serve every parent set. P(G | D) is exact by enumerating every DAG (d <= 5).
"""

import dataclasses
import functools
import math
import numbers
from typing import NamedTuple

import jax
import numpy as np
from scipy.special import logsumexp

from jspgfn.dataset import check_values
from jspgfn.errors import DataError, JspgfnError
from jspgfn.features import edge_features, markov_features, path_features
from jspgfn.graphs import enumerate_dags
from jspgfn.models import LinearGaussian
from jspgfn.npzfile import read_npz, write_npz
from jspgfn.provenance import provenance
from jspgfn.samples import PosteriorSamples

MAX_EXACT_VARIABLES = 5
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


def _check_linear(model):
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
    _check_linear(model)
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
    _check_linear(model)
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
    _check_linear(model)
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
    _check_linear(model)
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
    _check_linear(model)
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
    _check_linear(model)
    d = np.shape(x)[1]
    codes = np.arange(1 << d)
    nodes, codes = np.nonzero((codes[None, :] >> np.arange(d)[:, None] & 1) == 0)
    stats = node_statistics(x, interventions)
    gaussians = _node_gaussians(model, stats, nodes, _code_masks(codes, d))
    table = np.full((d, 1 << d), np.nan)
    table[nodes, codes] = _log_marginals(model, stats, nodes, gaussians)
    return table


# ------------------------------------------------------------ public: P(G | D)


@dataclasses.dataclass
class ExactPosterior:
    """The exact posterior over every DAG on d <= 5 nodes, with its features.

    graphs uint8 [M, d, d]; log_probs float64 [M] (normalised log P(G | D));
    edge / path / markov float64 [d, d] (features.py); metadata: JSON-ready dict.
    """

    graphs: np.ndarray
    log_probs: np.ndarray
    edge: np.ndarray
    path: np.ndarray
    markov: np.ndarray
    metadata: dict

    @property
    def num_variables(self):
        return self.graphs.shape[-1]


@functools.cache
def _all_dags(num_variables):
    dags = enumerate_dags(num_variables)
    dags.setflags(write=False)
    return dags


def graph_prior_metadata(graph_prior):
    """JSON-ready record of a GraphPrior, readable by evaluate.graph_prior_from_metadata."""
    return {"name": graph_prior.name, "log_edge_weight": float(graph_prior.log_edge_weight)}


def posterior_metadata(dataset, model, graph_prior):
    """What every exact.npz records of its model, prior, dataset and software (JSON-ready)."""
    return {
        "model": model.name,
        "model_kwargs": model.kwargs(),
        "graph_prior": graph_prior_metadata(graph_prior),
        "dataset": dataset.source,
        "dataset_sha256": dataset.fingerprint(),
        "dataset_seed": dataset.meta.get("seed"),
        "names": list(dataset.names),
        "num_train": int(dataset.train.shape[0]),
        "interventional": dataset.train_interventions is not None,
        "provenance": provenance(),
    }


def compute_exact_posterior(dataset, model, graph_prior):
    """P(G | D) for every DAG, by summing precomputed local scores.

    log P(G | D) = sum_j log P(x_j | x_pa_j) + log P(G) - log Z over the M DAGs
    (M = 29,281 at d = 5). Raises JspgfnError for d > 5 or a non-linear model.
    """
    _check_linear(model)
    d = dataset.num_variables
    if d > MAX_EXACT_VARIABLES:
        raise JspgfnError(
            f"the exact posterior enumerates every DAG and is limited to d <= {MAX_EXACT_VARIABLES} "
            f"variables; {dataset.source or 'this dataset'} has d={d}"
        )
    source = dataset.source or "dataset"
    check_values(dataset.train, source, dataset.names, what="training data")
    graphs = _all_dags(d)
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # checked below instead
            table = local_score_table(model, dataset.train, dataset.train_interventions)
    except np.linalg.LinAlgError:
        table = None
    valid = (np.arange(1 << d)[None, :] >> np.arange(d)[:, None] & 1) == 0  # entries without a self-loop
    if table is None or not np.all(np.isfinite(table[valid])):
        raise DataError(
            source,
            f"the exact posterior is not finite for this data with obs_var={model.obs_var}, "
            f"prior_var={model.prior_var} (values too large or too badly scaled for float64); rescale the data",
        )
    log_joint = table[np.arange(d), parent_codes(graphs)].sum(axis=-1)
    with jax.enable_x64(True):
        log_joint = log_joint + np.asarray(graph_prior.log_prob(graphs.astype(np.float64)), dtype=np.float64)
    log_probs = log_joint - logsumexp(log_joint)
    weights = np.exp(log_probs)
    metadata = {**posterior_metadata(dataset, model, graph_prior), "num_dags": int(graphs.shape[0])}
    posterior = ExactPosterior(
        graphs=np.array(graphs),
        log_probs=log_probs,
        edge=edge_features(graphs, weights),
        path=path_features(graphs, weights),
        markov=markov_features(graphs, weights),
        metadata=metadata,
    )
    problem = _posterior_problem(posterior)
    if problem is not None:
        raise DataError(source, f"the exact posterior of this data is invalid ({problem}); rescale the data")
    return posterior


def _posterior_problem(posterior):
    """None when every array of an ExactPosterior is finite and normalised, else the problem."""
    log_probs = np.asarray(posterior.log_probs, dtype=np.float64)
    if np.any(np.isnan(log_probs) | (log_probs == np.inf)) or not np.any(np.isfinite(log_probs)):
        return "log_probs are NaN or infinite"
    if abs(logsumexp(log_probs)) > 1e-6:
        return "log_probs are not normalised"
    for name in ("edge", "path", "markov"):
        feature = np.asarray(getattr(posterior, name), dtype=np.float64)
        if not np.all(np.isfinite(feature)) or np.any(feature < 0) or np.any(feature > 1 + 1e-9):
            return f"the {name} marginals are not probabilities"
    return None


def save_exact(path, posterior):
    """Write one .npz (edge, path, markov, graphs, log_probs, metadata JSON), atomically.

    Raises DataError(path, ...) and writes nothing when an array is not finite or not normalised.
    """
    problem = _posterior_problem(posterior)
    if problem is not None:
        raise DataError(path, f"not written: {problem}")
    arrays = {
        "edge": posterior.edge,
        "path": posterior.path,
        "markov": posterior.markov,
        "graphs": posterior.graphs.astype(np.uint8),
        "log_probs": posterior.log_probs.astype(np.float64),
    }
    write_npz(path, arrays, posterior.metadata)


def load_exact(path):
    """Read a save_exact file; raise DataError(path, problem) when it is missing or inconsistent."""
    arrays, metadata = read_npz(path, ("edge", "path", "markov", "graphs", "log_probs"), "an exact-posterior file")
    graphs, log_probs = arrays["graphs"], arrays["log_probs"]
    if not isinstance(metadata, dict):
        raise DataError(path, f"metadata must be a JSON object, got {type(metadata).__name__}")
    if not np.isin(graphs, (0, 1)).all() or not np.issubdtype(log_probs.dtype, np.floating):
        raise DataError(path, "graphs must hold only 0 and 1, log_probs floats")
    if graphs.ndim != 3 or graphs.shape[1] != graphs.shape[2] or log_probs.shape != graphs.shape[:1]:
        raise DataError(path, f"graphs {graphs.shape} and log_probs {log_probs.shape} do not match [M, d, d] / [M]")
    d = graphs.shape[-1]
    for name in ("edge", "path", "markov"):
        feature = arrays[name]
        if (
            feature.shape != (d, d)
            or not np.issubdtype(feature.dtype, np.floating)
            or not np.all((feature >= 0) & (feature <= 1))
        ):
            raise DataError(path, f"{name} must be a [{d}, {d}] array of probabilities")
    if not np.all(np.isfinite(log_probs) | (log_probs == -np.inf)) or abs(logsumexp(log_probs)) > 1e-6:
        raise DataError(path, "log_probs are not a normalised log-distribution")
    return ExactPosterior(
        graphs=graphs.astype(np.uint8),
        log_probs=log_probs.astype(np.float64),
        edge=arrays["edge"],
        path=arrays["path"],
        markov=arrays["markov"],
        metadata=metadata,
    )


def sample_exact(posterior, dataset, model, rng, num_samples):
    """num_samples draws (G, theta) of the exact joint posterior: G ~ P(G | D), theta ~ P(theta | G, D).

    `model` must be the one the posterior was computed with. rng: numpy Generator.
    Returns PosteriorSamples (metadata method "exact", model "lingauss", seed None: the caller sets it).
    """
    _check_linear(model)
    recorded = posterior.metadata.get("model_kwargs")
    if recorded is not None and recorded != model.kwargs():
        raise JspgfnError(f"the exact posterior was computed with {recorded}, not {model.kwargs()}")
    if posterior.num_variables != dataset.num_variables:
        raise JspgfnError(f"the exact posterior has d={posterior.num_variables}, the dataset d={dataset.num_variables}")
    probs = np.exp(posterior.log_probs)
    index = rng.choice(len(probs), size=num_samples, p=probs / probs.sum())
    graphs = posterior.graphs[index]
    theta = sample_posterior_theta(model, dataset.train, graphs, rng, dataset.train_interventions)
    metadata = {
        "method": "exact",
        "model": model.name,
        "model_kwargs": model.kwargs(),
        "seed": None,
        "graph_prior": posterior.metadata.get("graph_prior", "uniform"),
        "num_samples": int(num_samples),
        "theta_layout": model.layout(dataset.num_variables),
        "dataset": dataset.source,
        "dataset_sha256": dataset.fingerprint(),
    }
    return PosteriorSamples(graphs=graphs.astype(np.uint8), theta=theta, metadata=metadata)
