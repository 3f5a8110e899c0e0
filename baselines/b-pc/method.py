"""B-PC*: bootstrap PC (Fisher-z tests, alpha halved on a non-extendable CPDAG) + exact theta posterior."""

from jspgfn_baselines.shared.bootstrap import run_bootstrap


def fit(dataset, model, seed, *, num_bootstrap, alpha, max_alpha_halvings):
    return run_bootstrap("b-pc", dataset, model, seed, num_bootstrap, alpha, max_alpha_halvings)
