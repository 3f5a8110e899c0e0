"""B-GES*: bootstrap GES (BIC score) + exact theta posterior."""

from jspgfn_baselines.shared.bootstrap import run_bootstrap


def fit(dataset, model, seed, **params):
    """params: every parameter of method.yaml, defaults filled in."""
    return run_bootstrap("b-ges", dataset, model, seed, **params)
