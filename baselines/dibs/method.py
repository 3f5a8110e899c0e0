"""DiBS: joint SVGD over (Z, theta) through dibs-lib, every particle weighted equally (shared/dibs.py)."""

from jspgfn_baselines.shared.dibs import run_dibs


def fit(dataset, model, seed, **params):
    """params: every parameter of method.yaml, defaults filled in."""
    return run_dibs(dataset, model, seed, "empirical", **params)
