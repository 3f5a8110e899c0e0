"""What every baseline shares: input checks and the PosteriorSamples it returns."""

import numpy as np

from jspgfn.errors import JspgfnError
from jspgfn.samples import PosteriorSamples


def check_finite_data(dataset):
    x = np.asarray(dataset.train, dtype=np.float64)
    if not np.all(np.isfinite(x)):
        raise JspgfnError(f"{dataset.source}: training data has non-finite values")
    return x


def require_observational(method, dataset):
    if dataset.train_interventions is not None and dataset.train_interventions.any():
        raise JspgfnError(f"{method} supports only observational data, but {dataset.source} has interventions")


def make_samples(
    method,
    likelihood,
    seed,
    graphs,
    theta,
    wall_seconds,
    dataset,
    graph_prior="uniform",
    log_weights=None,
    extra_metadata=None,
):
    """PosteriorSamples with the metadata every method records.

    `fit_baseline` adds the hyper-parameters (defaults and overrides) and the provenance on top.
    """
    metadata = {
        "method": method,
        "model": likelihood.name,
        "model_kwargs": likelihood.kwargs(),
        "seed": int(seed),
        "graph_prior": graph_prior,
        "wall_seconds": float(wall_seconds),
        "theta_layout": likelihood.layout(graphs.shape[-1]),
        "dataset": dataset.source,
        **(extra_metadata or {}),
    }
    return PosteriorSamples(
        graphs=np.asarray(graphs, dtype=np.uint8),
        theta=np.asarray(theta, dtype=np.float64),
        metadata=metadata,
        log_weights=log_weights,
    )
