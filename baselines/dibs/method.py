"""DiBS: joint SVGD over (Z, theta) through dibs-lib, every particle weighted equally (shared/dibs.py)."""

from jspgfn_baselines.shared.dibs import run_dibs


def fit(
    dataset,
    model,
    seed,
    *,
    num_particles,
    steps,
    n_grad_mc_samples,
    h_latent,
    h_theta,
    latent_dim,
    edges_per_node,
    stepsize,
):
    return run_dibs(
        dataset,
        model,
        seed,
        "empirical",
        num_particles,
        steps,
        n_grad_mc_samples,
        h_latent,
        h_theta,
        latent_dim,
        edges_per_node,
        stepsize,
    )
