"""B-PC*: bootstrap PC (Fisher-z tests, alpha halved on a non-extendable CPDAG) + exact theta posterior."""

from jspgfn_baselines.shared.bootstrap import run_bootstrap


def fit(dataset, model, seed, **params):
    """params: every parameter of method.yaml, defaults filled in."""
    return run_bootstrap("b-pc", dataset, model, seed, **params)
