"""MH-MC3: structure MCMC proposing (G', theta') jointly (shared/mc3.py)."""

from jspgfn_baselines.shared.mc3 import run_mc3


def fit(
    dataset, model, seed, *, num_chains, burn_in, thinning, num_samples, proposal_std, graph_prior, hastings_correction
):
    return run_mc3(
        "mh-mc3",
        dataset,
        model,
        seed,
        num_chains,
        burn_in,
        thinning,
        num_samples,
        proposal_std,
        graph_prior,
        hastings_correction,
    )
