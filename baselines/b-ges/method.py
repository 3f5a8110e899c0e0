"""B-GES*: bootstrap GES (BIC score) + exact theta posterior."""

from jspgfn_baselines.shared.bootstrap import run_bootstrap


def fit(dataset, model, seed, *, num_bootstrap):
    return run_bootstrap("b-ges", dataset, model, seed, num_bootstrap)
