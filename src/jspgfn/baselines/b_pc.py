"""B-PC*: bootstrap PC (Fisher-z, alpha 0.01, halved on a non-extendable CPDAG) + exact theta posterior."""

from jspgfn.baselines.bootstrap import CAPABILITIES, run_bootstrap  # noqa: F401


def fit(dataset, model, seed, num_bootstrap=100, alpha=0.01, max_alpha_halvings=5):
    return run_bootstrap("b-pc", dataset, model, seed, num_bootstrap, alpha, max_alpha_halvings)
