"""DiBS (Lorch et al., 2021) through the dibs-lib package: joint SVGD over (Z, theta).

The particles' graphs come from the latent Z at the final inverse temperature;
DiBS does not guarantee acyclicity, so cyclic particles are kept as returned
(evaluation reports their share). `weighting="empirical"` gives every particle
the same weight; "mixture" (DiBS+) weights particles by p(G, theta, D).
Settings of the DiBS paper (joint inference, d = 20): latent dimension d,
h_latent 5, h_theta 500 (1000 non-linear), 3000 SVGD steps, 128 MC samples.
"""

import time

import numpy as np

from jspgfn.errors import JspgfnError
from jspgfn.models import MLPGaussian
from jspgfn_baselines.shared.common import check_finite_data, make_samples


def _dibs_models(likelihood, d, edges_per_node):
    from dibs.models import DenseNonlinearGaussian, ErdosReniDAGDistribution, LinearGaussian

    # The ER prior with k edges per node has p = k d / (d (d - 1) / 2): p >= 1 gives NaN losses.
    if edges_per_node * d >= d * (d - 1) / 2:
        raise JspgfnError(
            f"dibs: edges_per_node={edges_per_node} gives an Erdos-Renyi edge probability >= 1 "
            f"at d={d}; use a smaller value (1 for d=5)"
        )
    graph_model = ErdosReniDAGDistribution(n_vars=d, n_edges_per_node=edges_per_node)
    if isinstance(likelihood, MLPGaussian):
        model = DenseNonlinearGaussian(
            n_vars=d,
            hidden_layers=[likelihood.hidden],
            obs_noise=likelihood.obs_var,
            sig_param=float(np.sqrt(likelihood.prior_var)),
        )
    else:
        model = LinearGaussian(
            n_vars=d,
            obs_noise=likelihood.obs_var,
            mean_edge=likelihood.prior_mean,
            sig_edge=float(np.sqrt(likelihood.prior_var)),
            min_edge=0.0,
        )
    return graph_model, model


def theta_from_dibs(likelihood, theta, graphs):
    """dibs-lib parameters -> jspgfn layout, masked by the graphs.

    Linear: [K, d, d] already has theta[i, j] = weight of i -> j. MLP: the stax pytree
    [(W1 [K, d, d_in, H], b1 [K, d, H]), (), (W2 [K, d, H, 1], b2 [K, d, 1])] -> [K, d, P].
    """
    if isinstance(likelihood, MLPGaussian):
        (w1, b1), _, (w2, b2) = theta
        k, d = np.asarray(b1).shape[:2]
        flat = np.concatenate(
            [np.asarray(w1).reshape(k, d, -1), np.asarray(b1), np.asarray(w2)[..., 0], np.asarray(b2)], axis=-1
        )
    else:
        flat = np.asarray(theta)
    return flat * np.asarray(likelihood.parameter_mask(np.asarray(graphs, dtype=np.float32)))


def run_dibs(
    dataset,
    model,
    seed,
    weighting,
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
    """JointDiBS particles as PosteriorSamples (log_weights set for the mixture weighting)."""
    import jax
    import jax.numpy as jnp
    from dibs.inference import JointDiBS

    x = check_finite_data(dataset)
    d = dataset.num_variables
    nonlinear = isinstance(model, MLPGaussian)
    h_theta = h_theta or (1000.0 if nonlinear else 500.0)
    graph_model, dibs_model = _dibs_models(model, d, edges_per_node)
    interventions = None if dataset.train_interventions is None else jnp.asarray(dataset.train_interventions)
    start = time.perf_counter()
    dibs = JointDiBS(
        x=jnp.asarray(x),
        interv_mask=interventions,
        graph_model=graph_model,
        likelihood_model=dibs_model,
        kernel_param={"h_latent": float(h_latent), "h_theta": float(h_theta)},
        optimizer_param={"stepsize": float(stepsize)},
        n_grad_mc_samples=int(n_grad_mc_samples),
    )
    graphs, theta = dibs.sample(
        key=jax.random.PRNGKey(seed), n_particles=int(num_particles), steps=int(steps), n_dim_particles=latent_dim or d
    )
    log_weights = None
    if weighting == "mixture":
        log_weights = np.asarray(dibs.get_mixture(graphs, theta).logp, dtype=np.float64)
    graphs = np.asarray(graphs, dtype=np.uint8)
    return make_samples(
        "dibs" if weighting == "empirical" else "dibs-mixture",
        model,
        seed,
        graphs,
        theta_from_dibs(model, theta, graphs),
        time.perf_counter() - start,
        dataset,
        graph_prior="erdos_renyi",
        log_weights=log_weights,
        extra_metadata={"h_theta_used": h_theta, "edges_per_node": edges_per_node},
    )
