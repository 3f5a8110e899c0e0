"""MH-MC3: structure MCMC proposing (G', theta') jointly (shared/mc3.py)."""

from jspgfn_baselines.shared.mc3 import run_mc3


def fit(dataset, model, seed, **params):
    """params: every parameter of method.yaml, defaults filled in."""
    return run_mc3("mh-mc3", dataset, model, seed, **params)
