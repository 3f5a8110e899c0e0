"""VBG: a DAG-GFlowNet alternated with a closed-form Variational Bayes update of q(theta) (shared/vbg.py)."""

from jspgfn_baselines.shared.vbg import run_vbg


def fit(dataset, model, seed, **params):
    """params: every parameter of method.yaml, defaults filled in."""
    return run_vbg(dataset, model, seed, **params)
