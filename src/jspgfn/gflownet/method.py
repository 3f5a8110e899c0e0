"""JSP-GFN behind the interface of the baselines: declared capabilities, `fit` and `sample_run`.

    fit(dataset, likelihood, seed, family=..., preset=..., num_samples=...) -> PosteriorSamples
    sample_run(run_dir, num, seed) -> PosteriorSamples          (a trained run folder)

`jspgfn train` + `jspgfn sample` are the same two steps with the run folder kept (resumable).
"""

import time

import numpy as np

DISPLAY_NAME = "JSP-GFN"
# DAGs by construction (acyclic actions only), the max_parents option of the environment, a trained
# sampler, mini-batch rewards (minibatch_rows); discrete data through the `mlp-categorical` likelihood
# (softmax MLP on one-hot parents, used on the discretised Sachs data).
CAPABILITIES = {
    "joint": True,
    "nonlinear": True,
    "dag_support": True,
    "discrete": True,
    "max_parents": True,
    "sampler": True,
    "minibatch": True,
}


def display_name(family):
    """How tables name JSP-GFN with a posterior family: 'JSP-GFN (diag)', as in the paper."""
    return f"{DISPLAY_NAME} ({family})"


def sample_run(run_dir, num, seed=0, log_pt=False, beam_size=16, mc_samples=64, log_pt_proposal="uniform"):
    """PosteriorSamples of K = num pairs (G, theta) drawn from a trained run folder.

    log_pt: also estimate log P_T(G, theta) of each pair (beam search + Monte Carlo, appendix D.3.2),
    stored as the extra array `log_prob_terminating` [K]. log_pt_proposal: the Monte Carlo orders'
    proposal, 'uniform' (the paper's) or 'mixture' (`log_pt.log_prob_graphs`).
    """
    import jax

    from jspgfn import provenance
    from jspgfn.gflownet.sample import sample_joint
    from jspgfn.gflownet.train import enable_compilation_cache, load_run
    from jspgfn.samples import PosteriorSamples

    enable_compilation_cache()
    trainer, state, info, config = load_run(run_dir)
    start = time.time()
    apply_fn, d = trainer.network.apply, trainer.num_variables
    graphs, theta = sample_joint(
        apply_fn, trainer.model, state.params, jax.random.PRNGKey(seed), num, d, trainer.cfg.max_parents
    )
    extras = {}
    if log_pt:
        from jspgfn.gflownet.log_pt import log_prob_terminating

        extras["log_prob_terminating"] = log_prob_terminating(
            apply_fn,
            trainer.model,
            state.params,
            graphs,
            theta,
            seed,
            beam_size,
            mc_samples,
            trainer.cfg.max_parents,
            log_pt_proposal,
        )
    metadata = {
        "method": "jspgfn",
        "display_name": display_name(trainer.family),
        "model": config["model"],
        "family": trainer.family,
        "model_kwargs": config["model_kwargs"],
        "graph_prior": trainer.cfg.graph_prior,
        "seed": config["seed"],
        "sample_seed": seed,
        "wall_seconds": float(info["wall_seconds"]),
        "sampling_seconds": time.time() - start,
        "iterations": int(info["iteration"]),
        "preset": config["preset"],
        "hyperparameters": config["train_config"],
        "theta_layout": trainer.model.layout(d),
        "data": config.get("data", ""),
        "variable_names": config.get("variable_names"),
        "dataset_sha256": config.get("data_sha256"),
        "provenance": provenance.provenance(),
    }
    if log_pt:
        metadata["log_pt"] = {"beam_size": beam_size, "mc_samples": mc_samples, "proposal": log_pt_proposal}
    return PosteriorSamples(graphs=graphs, theta=np.asarray(theta, np.float64), metadata=metadata, extras=extras)


def fit(
    dataset,
    likelihood,
    seed,
    *,
    family="diag",
    preset="quick",
    num_samples=1000,
    overrides=None,
    model_kwargs=None,
    run_dir=None,
    progress=False,
):
    """Train JSP-GFN on a Dataset and draw num_samples (G, theta) pairs (sampling seed = seed).

    overrides: training options; model_kwargs: the likelihood's settings (e.g. {"obs_var": 0.1});
    run_dir: where the run folder goes (kept, resumable); None = a temporary folder, removed after.
    """
    from jspgfn.api import fit as fit_run

    options = {**(overrides or {}), **(model_kwargs or {})}
    run = fit_run(dataset, likelihood, preset, seed, run_dir, family=family, progress=progress, **options)
    return sample_run(run.folder, num_samples, seed)
