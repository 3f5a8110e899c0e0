"""The reference sampler: (G, theta) drawn from the exact joint posterior (linear Gaussian, d <= 5)."""

import numpy as np

from jspgfn.exact import compute_exact_posterior, sample_exact
from jspgfn.models import get_graph_prior


def fit(dataset, model, seed, *, num_samples, graph_prior):
    """Enumerate every DAG, then draw num_samples pairs with numpy's Generator(seed)."""
    prior = get_graph_prior(graph_prior, dataset.num_variables)
    posterior = compute_exact_posterior(dataset, model, prior)
    return sample_exact(posterior, dataset, model, np.random.default_rng(seed), int(num_samples))
