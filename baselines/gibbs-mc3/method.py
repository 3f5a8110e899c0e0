"""Gibbs-MC3: structure MCMC alternating a structure move at fixed theta and a random-walk theta move
(shared/mc3.py)."""

from jspgfn_baselines.shared.mc3 import run_mc3


def fit(dataset, model, seed, **params):
    """params: every parameter of method.yaml, defaults filled in."""
    return run_mc3("gibbs-mc3", dataset, model, seed, **params)
