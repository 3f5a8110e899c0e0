"""DiBS+: DiBS particles weighted by p(G, theta, D), the mixture weighting of dibs-lib (shared/dibs.py)."""

from jspgfn_baselines.shared.dibs import run_dibs


def fit(dataset, model, seed, **params):
    """params: every parameter of method.yaml, defaults filled in."""
    return run_dibs(dataset, model, seed, "mixture", **params)
