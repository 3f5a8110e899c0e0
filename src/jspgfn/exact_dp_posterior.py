"""The exact.npz contract beyond d = 5 (exact.ExactPosterior): exact edge marginals from the subset
dynamic program (exact_dp.py); path and Markov features and the listed graphs from exact i.i.d. samples
(exact_sampler.py), a Monte Carlo stand-in for the full list of DAGs, which is too long beyond d = 5.
"""

import numpy as np

from jspgfn.errors import JspgfnError
from jspgfn.exact_dp import local_scores, subset_posterior
from jspgfn.exact_sampler import sample_dags

FEATURE_CHUNK = 4096  # sampled graphs whose path / Markov indicators are held at once (float64)


def _chunked_features(feature, graphs, weights):
    """feature(graphs, weights) [d, d] (weights summing to 1), FEATURE_CHUNK graphs at a time: the float64
    indicators of 100,000 distinct d = 20 DAGs alone would take 320 MB."""
    total = sum(
        feature(graphs[start : start + FEATURE_CHUNK], weights[start : start + FEATURE_CHUNK])
        * weights[start : start + FEATURE_CHUNK].sum()
        for start in range(0, len(graphs), FEATURE_CHUNK)
    )
    return np.clip(total, 0.0, 1.0)


def monte_carlo_error(frequencies, num_samples):
    """Standard error sqrt(p (1 - p) / K) of Monte Carlo feature estimates p [...] from K samples."""
    p = np.asarray(frequencies, dtype=np.float64)
    return np.sqrt(p * (1.0 - p) / max(int(num_samples), 1))


def compute_dp_posterior(
    dataset, model, graph_prior, num_samples=100_000, seed=0, max_parents=None, progress=None, sample_progress=None
):
    """exact.ExactPosterior for d > 5: exact edge marginals (subset DP); path and Markov features, and the
    listed graphs with their frequencies, from num_samples exact i.i.d. DAGs (Monte Carlo).

    graphs [M, d, d] are the distinct sampled DAGs and log_probs [M] their log sample frequencies (a Monte
    Carlo stand-in for the full list, which is too long beyond d = 5); metadata records the method, the
    number of samples, the seed and the largest standard error of the path and Markov features.
    progress(terms), if given, follows the dynamic program (dp_terms(d) in all), sample_progress(n) the
    samples (num_samples in all).
    """
    from jspgfn.exact import ExactPosterior, posterior_metadata
    from jspgfn.features import markov_features, path_features

    source = dataset.source or "dataset"
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            scores = local_scores(model, dataset.train, dataset.train_interventions, max_parents, graph_prior)
    except (JspgfnError, np.linalg.LinAlgError) as error:
        raise JspgfnError(
            f"{source}: the exact posterior is not finite for this data ({error}); rescale the data"
        ) from error
    posterior = subset_posterior(scores, progress)
    graphs = sample_dags(posterior, np.random.default_rng(seed), num_samples, sample_progress)
    unique, counts = np.unique(graphs.reshape(num_samples, -1), axis=0, return_counts=True)
    d = dataset.num_variables
    unique = unique.reshape(-1, d, d).astype(np.uint8)
    weights = counts / num_samples
    path, markov = (_chunked_features(feature, unique, weights) for feature in (path_features, markov_features))
    mc_error = {
        name: float(monte_carlo_error(f, num_samples).max()) for name, f in (("path", path), ("markov", markov))
    }
    metadata = {
        **posterior_metadata(dataset, model, graph_prior),
        "method": "subset dynamic program (edge marginals exact); path, markov, graphs: Monte Carlo",
        "max_parents": max_parents,
        "num_exact_samples": int(num_samples),
        "sample_seed": int(seed),
        "monte_carlo_max_standard_error": mc_error,
        "num_dags": int(len(unique)),
        "log_z": posterior.log_z,
    }
    edge = np.clip(posterior.edge, 0.0, 1.0)
    return ExactPosterior(unique, np.log(weights), edge, path, markov, metadata)
