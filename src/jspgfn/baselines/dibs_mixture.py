"""DiBS+ : DiBS particles weighted by p(G, theta, D) (the mixture weighting of dibs-lib)."""

from jspgfn.baselines.dibs import CAPABILITIES, run_dibs  # noqa: F401


def fit(dataset, model, seed, num_particles=30, steps=3000, n_grad_mc_samples=128, h_latent=5.0, h_theta=None,
        latent_dim=None, edges_per_node=1, stepsize=0.005):
    return run_dibs(dataset, model, seed, "mixture", num_particles, steps, n_grad_mc_samples, h_latent, h_theta,
                    latent_dim, edges_per_node, stepsize)
