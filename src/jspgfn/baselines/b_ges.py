"""B-GES*: bootstrap GES (BIC score) + exact theta posterior."""

from jspgfn.baselines.bootstrap import CAPABILITIES, run_bootstrap  # noqa: F401


def fit(dataset, model, seed, num_bootstrap=100):
    return run_bootstrap("b-ges", dataset, model, seed, num_bootstrap)
