"""Metrics of one PosteriorSamples file, from the samples, the dataset and (optionally) the exact posterior.

Evaluation never knows which method produced the samples: everything it needs (the likelihood
model, its hyper-parameters, the graph prior) is read from the samples' metadata. Every
expectation over samples uses `samples.weights()` (uniform unless log_weights are given).

DiBS's particles can have cyclic graphs: the held-out NLL, E-SHD and AUROC leave them out (as DiBS's
own metrics do) and `share_cyclic_dropped` reports the weight left out; see evaluate().

Likelihoods run in JAX under a scoped `jax.enable_x64(True)`, so held-out NLL and log-rewards are
float64 like the closed forms in conjugate.py: an NLL over N' rows is a sum of N' d terms and a
predictive NLL is a log-mean-exp of such sums, where float32 rounding (~1e-7 relative on values
of 1e3-1e5) would be visible in the reported digits. The rest of the process keeps JAX's default.
"""

import functools
import math

import jax
import numpy as np
from scipy.special import logsumexp

from jspgfn.conjugate import log_marginal_likelihood_graphs, log_posterior_theta
from jspgfn.errors import DataError, JspgfnError
from jspgfn.features import edge_features, markov_features, offdiagonal, path_features
from jspgfn.graphs import is_dag, shd
from jspgfn.models import LinearGaussian, get_graph_prior, log_reward, model_from_metadata
from jspgfn.models.graph_prior import GraphPrior
from jspgfn.samples import PosteriorSamples

_MAP_BATCH = 64  # samples per vectorised likelihood evaluation (bounds memory for the MLP model)
RANSAC_SEED = 0


# ------------------------------------------------------------ small helpers


def rmse(a, b):
    return float(np.sqrt(np.mean((np.asarray(a, float) - np.asarray(b, float)) ** 2)))


def pearson(a, b, label, notes):
    """Pearson's r, or None (with a note) when either vector is constant."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        notes.append(f"{label}: Pearson's r undefined (a constant vector), reported as null")
        return None
    return float(np.corrcoef(a, b)[0, 1])


def ransac_slope(log_rewards, log_probs, random_state=RANSAC_SEED):
    """Slope and intercept of log_probs ~ a * log_rewards + b by RANSAC (robust to outliers).

    Args: two float arrays [K]. Returns (a, b) as floats.
    """
    from sklearn.linear_model import RANSACRegressor

    fit = RANSACRegressor(random_state=random_state).fit(
        np.asarray(log_rewards, float)[:, None], np.asarray(log_probs, float)
    )
    return float(fit.estimator_.coef_[0]), float(fit.estimator_.intercept_)


def graph_prior_from_metadata(value, num_variables):
    """GraphPrior from a metadata entry: a name ('uniform'), {'name', 'log_edge_weight'} or {'name', **kwargs}."""
    if value is None:
        return get_graph_prior("uniform", num_variables)
    if isinstance(value, str):
        return get_graph_prior(value, num_variables)
    if isinstance(value, dict) and "name" in value:
        if "log_edge_weight" in value:
            return GraphPrior(value["name"], float(value["log_edge_weight"]))
        kwargs = {k: v for k, v in value.items() if k != "name"}
        return get_graph_prior(value["name"], num_variables, **kwargs)
    raise JspgfnError(f"cannot read the graph prior {value!r} from the samples' metadata")


# ------------------------------------------------------------ batched likelihoods (float64)


@functools.partial(jax.jit, static_argnums=(0,))
def _log_likelihoods(model, theta, graphs, x, interventions):
    """log P(x | G_k, theta_k) for every sample: theta [K, ...], graphs [K, d, d] -> [K]."""
    one = lambda pair: model.log_likelihood(pair[0], pair[1], x, interventions)  # noqa: E731
    return jax.lax.map(one, (theta, graphs), batch_size=_MAP_BATCH)


@functools.partial(jax.jit, static_argnums=(0, 1))
def _log_rewards(model, graph_prior, theta, graphs, x, interventions):
    """log R(G_k, theta_k) on the full data for every sample -> [K]."""
    one = lambda pair: log_reward(model, graph_prior, pair[0], pair[1], x, interventions)  # noqa: E731
    return jax.lax.map(one, (theta, graphs), batch_size=_MAP_BATCH)


def _float64_call(fn, *args):
    with jax.enable_x64(True):
        args = [None if a is None else np.asarray(a, dtype=np.float64) for a in args]
        return np.asarray(fn(*args), dtype=np.float64)


def per_sample_log_likelihood(model, theta, graphs, x, interventions=None):
    """float64 [K]: log P(x | G_k, theta_k), entries with interventions == 1 left out."""
    return _float64_call(functools.partial(_log_likelihoods, model), theta, graphs, x, interventions)


def per_sample_log_reward(model, graph_prior, theta, graphs, x, interventions=None):
    """float64 [K]: log P(D | G_k, theta_k) + log P(theta_k | G_k) + log P(G_k) (models.log_reward)."""
    return _float64_call(functools.partial(_log_rewards, model, graph_prior), theta, graphs, x, interventions)


# ------------------------------------------------------------ metric groups


def _identification(samples, dataset):
    meta = samples.metadata
    return {
        "method": meta.get("method"),
        "model": meta.get("model"),
        "seed": meta.get("seed"),
        "dataset": dataset.source,
        "dataset_seed": dataset.meta.get("seed"),
        "num_samples": int(samples.num_samples),
        "share_cyclic": samples.share_cyclic(),
    }


def _feature_metrics(samples, weights, exact, notes):
    if exact.num_variables != samples.num_variables:
        raise JspgfnError(f"the exact posterior has d={exact.num_variables}, the samples d={samples.num_variables}")
    out, features = {}, {}
    for name, feature in (("edge", edge_features), ("path", path_features), ("markov", markov_features)):
        estimate = offdiagonal(feature(samples.graphs, weights))
        reference = offdiagonal(getattr(exact, name))
        out[f"{name}_rmse"] = rmse(estimate, reference)
        out[f"{name}_pearson"] = pearson(estimate, reference, f"{name} features", notes)
        features[name] = {"estimate": estimate.tolist(), "exact": reference.tolist()}
    out["features"] = features  # per pair, in offdiagonal() order; aggregate_features() tabulates them
    return out


def _graph_score_metrics(samples, weights, dataset, exact, notes):
    """Size and score of the sampled graphs beside the exact posterior's (needs `exact`).

    num_edges_mean: E_q[|E(G)|] over every sample (= the sum of the estimated edge marginals);
    exact_num_edges: the exact posterior's expected number of edges (the sum of its edge marginals).
    With the exact posterior's linear Gaussian model and graph prior (its metadata): log P(D | G) + log P(G)
    (conjugate.log_marginal_likelihood_graphs, the prior unnormalised: 0 under the uniform prior) of the acyclic
    samples, log_pdg_mean (weighted mean, weights renormalised over the acyclic samples) and log_pdg_best
    (the largest of the samples of weight > 0), and exact_log_pdg_mean, its expectation under P(G | D)
    (over every listed DAG for d <= 5; beyond, over the exact posterior's i.i.d. samples, a Monte Carlo
    estimate whose standard error goes into the notes).
    """
    edges = samples.graphs.astype(np.int64).sum(axis=(-2, -1))
    out = {
        "num_edges_mean": float(np.sum(weights * edges)),
        "exact_num_edges": float(np.sum(offdiagonal(exact.edge))),
        "log_pdg_mean": None,
        "log_pdg_best": None,
        "exact_log_pdg_mean": None,
    }
    meta = exact.metadata
    if meta.get("model") != "lingauss" or "model_kwargs" not in meta:
        notes.append(
            "log_pdg_mean, log_pdg_best, exact_log_pdg_mean: the exact posterior records no linear Gaussian model"
        )
        return out
    model = LinearGaussian(**meta["model_kwargs"])
    prior = graph_prior_from_metadata(meta.get("graph_prior"), samples.num_variables)
    score = functools.partial(
        log_marginal_likelihood_graphs,
        model,
        dataset.train,
        interventions=dataset.train_interventions,
        graph_prior=prior,
    )
    acyclic = is_dag(samples.graphs) & (weights > 0)
    if not acyclic.any():
        notes.append("log_pdg_mean, log_pdg_best: no sample of weight > 0 has an acyclic graph, reported as null")
    else:
        if not acyclic.all():
            notes.append(
                f"log_pdg_mean, log_pdg_best: {int((~acyclic).sum())} samples with a cyclic graph or weight 0 "
                "left out, the weights renormalised over the others"
            )
        values = score(samples.graphs[acyclic])
        kept = weights[acyclic] / np.sum(weights[acyclic])
        out["log_pdg_mean"], out["log_pdg_best"] = float(np.sum(kept * values)), float(np.max(values))
    probs = np.exp(exact.log_probs - logsumexp(exact.log_probs))
    listed = probs > 0
    values = score(exact.graphs[listed])
    out["exact_log_pdg_mean"] = float(np.sum(probs[listed] * values))
    num_exact = meta.get("num_exact_samples")
    if num_exact:  # beyond d = 5: frequencies of exact i.i.d. samples
        spread = math.sqrt(max(float(np.sum(probs[listed] * values**2)) - out["exact_log_pdg_mean"] ** 2, 0.0))
        notes.append(
            f"exact_log_pdg_mean: Monte Carlo over the exact posterior's {num_exact} i.i.d. samples "
            f"(standard error {spread / math.sqrt(num_exact):.3g})"
        )
    return out


def _acyclic_part(samples, notes):
    """The acyclic samples, reweighted as DiBS's own metrics do (cyclic samples dropped, weights renormalised).

    Returns (subset, share_dropped): subset is a PosteriorSamples of the K' acyclic samples (graphs
    [K', d, d], theta [K', ...], log_weights [K'] or None), so that subset.weights() is samples.weights()
    restricted to them and renormalised; it is `samples` itself when no graph is cyclic, and None when no
    acyclic sample has weight > 0. share_dropped is the weighted share of the cyclic samples (a float).
    """
    acyclic = is_dag(samples.graphs)
    if acyclic.all():
        return samples, 0.0
    weights = samples.weights()
    share = float(np.sum(weights[~acyclic]))
    if not np.any(weights[acyclic] > 0):
        notes.append(
            "nll_expected, nll_predictive, expected_shd, auroc: every sample (of weight > 0) has a cyclic graph, "
            "reported as null"
        )
        return None, 1.0
    notes.append(
        f"nll_expected, nll_predictive, expected_shd, auroc: {int((~acyclic).sum())} of {samples.num_samples} "
        f"samples ({100 * share:.1f}% of the weight) have a cyclic graph and are left out, the weights "
        "renormalised over the acyclic ones (as in DiBS's metrics)"
    )
    subset = PosteriorSamples(
        graphs=samples.graphs[acyclic],
        theta=samples.theta[acyclic],
        metadata=samples.metadata,
        log_weights=None if samples.log_weights is None else np.asarray(samples.log_weights)[acyclic],
    )
    return subset, share


def _nll_metrics(acyclic, dataset, model):
    """Held-out NLL over the acyclic samples `acyclic` (PosteriorSamples, or None: no acyclic sample)."""
    out = {"nll_expected": None, "nll_predictive": None, "num_test": int(dataset.test.shape[0])}
    if acyclic is None:
        return out
    weights = acyclic.weights()
    loglik = per_sample_log_likelihood(model, acyclic.theta, acyclic.graphs, dataset.test, dataset.test_interventions)
    out["nll_expected"] = float(-np.sum(weights * loglik))
    out["nll_predictive"] = float(-logsumexp(loglik, b=weights))
    return out


def _true_graph_metrics(acyclic, dataset, notes):
    """E-SHD and AUROC over the acyclic samples `acyclic` (PosteriorSamples, or None: both null)."""
    if acyclic is None:
        return {"expected_shd": None, "auroc": None}
    weights = acyclic.weights()
    truth = offdiagonal(dataset.graph)
    out = {"expected_shd": float(np.sum(weights * shd(acyclic.graphs, dataset.graph)))}
    if truth.min() == truth.max():
        notes.append("auroc undefined: the true graph has a single class of off-diagonal entries (empty)")
        out["auroc"] = None
    else:
        from sklearn.metrics import roc_auc_score

        out["auroc"] = float(roc_auc_score(truth, offdiagonal(edge_features(acyclic.graphs, weights))))
    return out


def _log_pt_metrics(samples, dataset, model, notes):
    log_pt = np.asarray(samples.extras["log_prob_terminating"], dtype=np.float64)
    if log_pt.shape != (samples.num_samples,):
        raise JspgfnError(f"log_prob_terminating has shape {log_pt.shape}, expected [{samples.num_samples}]")
    prior = graph_prior_from_metadata(samples.metadata.get("graph_prior"), samples.num_variables)
    log_r = per_sample_log_reward(
        model, prior, samples.theta, samples.graphs, dataset.train, dataset.train_interventions
    )
    finite = np.isfinite(log_pt) & np.isfinite(log_r)
    if not finite.all():
        notes.append(f"log_pt: {int((~finite).sum())} samples with a non-finite log P_T or log R left out")
    x, y = log_r[finite], log_pt[finite]
    out = {"log_pt_pearson": pearson(x, y, "log P_T vs log R", notes), "log_pt_slope": None, "log_pt_intercept": None}
    # The points of Figure 3c: the K'' finite samples (index in the file, edges, log R, log P_T), lists [K''].
    out["log_pt_points"] = {
        "sample": np.flatnonzero(finite).tolist(),
        "num_edges": samples.graphs[finite].sum(axis=(1, 2)).astype(int).tolist(),
        "log_reward": x.tolist(),
        "log_pt": y.tolist(),
    }
    if len(x) >= 3 and np.ptp(x) > 0:
        out["log_pt_slope"], out["log_pt_intercept"] = ransac_slope(x, y)
    else:
        notes.append("log_pt_slope undefined: fewer than 3 samples or a constant log-reward")
    return out


def _theta_cross_entropy(samples, weights, dataset, model, exact, notes):
    """-E_q[log P(theta | G, D)] under the exact posterior's model when given, else the samples' model."""
    reference = model
    if exact is not None and "model_kwargs" in exact.metadata:
        reference = LinearGaussian(**exact.metadata["model_kwargs"])
        if reference != model:
            notes.append(
                f"theta_cross_entropy uses the exact posterior's model {reference.kwargs()}, "
                f"not the samples' {model.kwargs()}"
            )
    if samples.share_cyclic() > 0:
        notes.append("theta_cross_entropy includes cyclic graphs (per-node closed form applied to them)")
    log_q = log_posterior_theta(reference, dataset.train, samples.graphs, samples.theta, dataset.train_interventions)
    return float(-np.sum(weights * log_q))


def _check_theta_shape(samples, model):
    expected = (samples.num_samples,) + tuple(model.theta_shape(samples.num_variables))
    if samples.theta.shape != expected:
        raise JspgfnError(f"samples theta has shape {samples.theta.shape}, model '{model.name}' expects {expected}")


def check_dataset_identity(samples, dataset, exact, notes, samples_source="samples", exact_source="exact posterior"):
    """DataError unless the samples (and the exact posterior) record the dataset's fingerprint.

    Every writer records `dataset_sha256` (dataset.data_fingerprint of the training data); a file
    without it (written by an older version) is accepted with a note.
    """
    expected = dataset.fingerprint()
    for source, what, metadata in (
        (samples_source, "the samples were drawn", samples.metadata),
        (exact_source, "the exact posterior was computed", None if exact is None else exact.metadata),
    ):
        if metadata is None:
            continue
        recorded = metadata.get("dataset_sha256")
        if recorded is None:
            notes.append(f"{source} records no dataset_sha256 (written by an older version): data not checked")
        elif recorded != expected:
            raise DataError(
                source,
                f"{what} for other data than {dataset.source or 'the dataset given'} "
                f"(dataset_sha256 {str(recorded)[:12]}... vs {expected[:12]}...)",
            )


# ------------------------------------------------------------ entry point


def evaluate(samples, dataset, exact=None, samples_source="samples", exact_source="exact posterior"):
    """JSON-ready metrics of `samples` (PosteriorSamples) fitted on `dataset` (Dataset).

    Keys: identification (method, model, seed, dataset, dataset_seed, num_samples, share_cyclic);
    with `exact` (ExactPosterior): {edge,path,markov}_{rmse,pearson} on off-diagonal entries, and
    `features` {edge,path,markov: {estimate, exact}} (lists in offdiagonal() order) for the figures, and
    num_edges_mean, exact_num_edges, log_pdg_mean, log_pdg_best, exact_log_pdg_mean (_graph_score_metrics:
    edges per sample and log P(D | G) + log P(G) of the samples beside the exact posterior's expectations);
    linear Gaussian model: theta_cross_entropy = -E_q[log P(theta | G, D)] (closed form, any d; under
    the exact posterior's model settings when `exact` is given);
    with a test set: nll_expected = -E_q[log P(D' | G, theta)], nll_predictive = -log E_q[P(D' | G, theta)]
    (totals over the N' held-out rows, intervened entries left out) and num_test;
    with a true graph: expected_shd, auroc. These four follow DiBS's own metric code: samples with a
    cyclic graph are left out and the weights renormalised over the acyclic ones; share_cyclic_dropped
    is the weighted share left out (0.0 when none; with a test set or a true graph), and the four are
    null with a note when no acyclic sample is left. The feature and theta metrics keep every sample.
    With extras['log_prob_terminating']: log_pt_slope (RANSAC), log_pt_intercept, log_pt_pearson against
    log R, and log_pt_points {sample, num_edges, log_reward, log_pt} (lists over the samples with a
    finite log P_T and log R, the ones fitted); wall_seconds when recorded; notes: why any metric is null.

    samples_source / exact_source name the files in errors. Raises DataError when the samples or the
    exact posterior were computed on other data (check_dataset_identity) and JspgfnError when a metric
    comes out NaN without a reason (a null with a note is kept where the reason is known).
    """
    if samples.num_variables != dataset.num_variables:
        raise JspgfnError(f"the samples have d={samples.num_variables}, the dataset d={dataset.num_variables}")
    notes = []
    check_dataset_identity(samples, dataset, exact, notes, samples_source, exact_source)
    weights = samples.weights()
    model = model_from_metadata(samples.metadata)
    _check_theta_shape(samples, model)
    metrics = _identification(samples, dataset)
    if exact is not None:
        metrics.update(_feature_metrics(samples, weights, exact, notes))
        metrics.update(_graph_score_metrics(samples, weights, dataset, exact, notes))
    if isinstance(model, LinearGaussian):
        metrics["theta_cross_entropy"] = _theta_cross_entropy(samples, weights, dataset, model, exact, notes)
    if dataset.test is not None or dataset.graph is not None:
        acyclic, metrics["share_cyclic_dropped"] = _acyclic_part(samples, notes)
    if dataset.test is not None:
        metrics.update(_nll_metrics(acyclic, dataset, model))
    if dataset.graph is not None:
        metrics.update(_true_graph_metrics(acyclic, dataset, notes))
    if "log_prob_terminating" in samples.extras:
        metrics.update(_log_pt_metrics(samples, dataset, model, notes))
    if "wall_seconds" in samples.metadata:
        metrics["wall_seconds"] = samples.metadata["wall_seconds"]
    metrics["notes"] = notes
    return {key: _finite_or_none(value, key, notes, samples_source) for key, value in metrics.items()}


def edge_marginals(samples, dataset):
    """JSON-ready edge marginals of the samples: {names: d variable names, marginal: d x d lists (entry
    [i][j] = weighted share of samples with the edge i -> j, every sample counted), reference: the dataset's
    graph.csv as d x d 0/1 lists, or None without one}. For the edge-marginal heatmap (aggregate_edges)."""
    if samples.num_variables != dataset.num_variables:
        raise JspgfnError(f"the samples have d={samples.num_variables}, the dataset d={dataset.num_variables}")
    marginal = edge_features(samples.graphs, samples.weights())
    reference = None if dataset.graph is None else np.asarray(dataset.graph).astype(int).tolist()
    return {"names": list(dataset.names), "marginal": np.asarray(marginal, float).tolist(), "reference": reference}


def _finite_or_none(value, key, notes, source):
    """JSON has no NaN/inf: an infinite float becomes None with a note; NaN (no meaning) is an error."""
    if _has_nan(value):
        raise JspgfnError(f"{source}: metric {key} came out NaN; metrics not written")
    if isinstance(value, float) and not math.isfinite(value):
        notes.append(f"{key} was {value}, reported as null")
        return None
    return value


def _has_nan(value):
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, dict):
        return any(_has_nan(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_nan(v) for v in value)
    return False
