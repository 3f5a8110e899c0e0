"""BCD Nets: variational q(L) q(P | L) over linear SEMs W = (P L P^T)^T (shared/bcd.py)."""

from jspgfn_baselines.shared.bcd import run_bcd


def fit(dataset, model, seed, **params):
    """params: every parameter of method.yaml, defaults filled in."""
    return run_bcd("bcd-nets", dataset, model, seed, **params)
