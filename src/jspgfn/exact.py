"""The exact posterior P(G | D) of the linear Gaussian model, by enumerating every DAG (d <= 5).

Paper appendix "Posterior of the linear Gaussian model". The per-node closed forms (P(theta | G, D),
the local marginal likelihoods) are in conjugate.py; this module sums them over every DAG, and reads,
writes and samples the exact-posterior file (exact.npz).
"""

import dataclasses
import functools

import jax
import numpy as np
from scipy.special import logsumexp

from jspgfn.conjugate import check_linear, local_score_table, parent_codes, sample_posterior_theta
from jspgfn.dataset import check_values
from jspgfn.errors import DataError, JspgfnError
from jspgfn.features import edge_features, markov_features, path_features
from jspgfn.graphs import enumerate_dags
from jspgfn.npzfile import read_npz, write_npz
from jspgfn.provenance import provenance
from jspgfn.samples import PosteriorSamples

MAX_EXACT_VARIABLES = 5


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
    check_linear(model)
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
    check_linear(model)
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
