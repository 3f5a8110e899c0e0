"""DiBS+: DiBS particles weighted by p(G, theta, D), the mixture weighting of dibs-lib (shared/dibs.py)."""

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
        "mixture",
        num_particles,
        steps,
        n_grad_mc_samples,
        h_latent,
        h_theta,
        latent_dim,
        edges_per_node,
        stepsize,
    )
