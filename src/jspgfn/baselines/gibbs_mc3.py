"""Gibbs-MC3: structure MCMC alternating a structure move at fixed theta and a random-walk theta move
(see mc3.py). Original settings: burn-in 1e5, thinning 1e4, proposal std 0.05 (linear, d=20)."""

from jspgfn.baselines.mc3 import CAPABILITIES, run_mc3  # noqa: F401  (CAPABILITIES is read by the registry)


def fit(dataset, model, seed, num_chains=10, burn_in=100_000, thinning=10_000, num_samples=1000,
        proposal_std=0.05, graph_prior="uniform", hastings_correction=True):
    return run_mc3("gibbs-mc3", dataset, model, seed, num_chains, burn_in, thinning, num_samples, proposal_std,
                   graph_prior, hastings_correction)
