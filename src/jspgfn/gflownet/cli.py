"""`jspgfn train` and `jspgfn sample` (registered by jspgfn.cli through add_subcommands)."""

from jspgfn.errors import JspgfnError

METHODS = {"lingauss-diag": "jspgfn-diag", "lingauss": "jspgfn-diag", "linear": "jspgfn-diag",
           "lingauss-full": "jspgfn-full", "mlp-gauss": "jspgfn-mlp", "mlp": "jspgfn-mlp"}


def _parse_overrides(items):
    import yaml

    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise JspgfnError(f"--set expects KEY=VALUE, got {item!r}")
        out[key.strip().replace("-", "_")] = yaml.safe_load(value)
    return out


def add_subcommands(sub):
    p = sub.add_parser("train", help="train (or resume) JSP-GFN on a dataset")
    p.add_argument("data", help="dataset folder or CSV file")
    p.add_argument("--model", default="lingauss-diag", help="lingauss-diag, lingauss-full or mlp-gauss")
    p.add_argument("--preset", default="quick", help="smoke, quick or paper")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--set", "--param", dest="set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a training option, e.g. --set num_iterations=5000 (repeatable; "
                        "value parsed as YAML/JSON)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--out", required=True, help="run folder (resumed if it has a checkpoint)")
    p.set_defaults(run=_run_train)

    p = sub.add_parser("sample", help="draw (G, theta) samples from a trained JSP-GFN run")
    p.add_argument("run_dir", help="run folder written by `jspgfn train`")
    p.add_argument("--num", type=int, default=1000, help="number of samples K")
    p.add_argument("--seed", type=int, default=0, help="sampling seed")
    p.add_argument("--log-pt", action="store_true",
                   help="also estimate log P_T(G, theta) (beam search + Monte Carlo, appendix D.3.2)")
    p.add_argument("--beam-size", type=int, default=16)
    p.add_argument("--mc-samples", type=int, default=64)
    p.add_argument("--out", required=True, help="samples.npz to write")
    p.set_defaults(run=_run_sample)


def _run_train(args):
    from jspgfn.gflownet.train import train

    _, _, info = train(args.data, args.model, args.preset, args.seed, args.out,
                       overrides=_parse_overrides(args.set), progress=not args.no_progress)
    print(f"trained {args.out}: {info['iteration']} iterations, {info['wall_seconds']:.0f} s")


def _run_sample(args):
    if args.num < 1:
        raise JspgfnError(f"--num must be >= 1, got {args.num}")
    samples = sample_run(args.run_dir, args.num, args.seed, args.log_pt, args.beam_size, args.mc_samples)
    from jspgfn.samples import save_samples

    save_samples(args.out, samples)
    print(f"wrote {args.out}: {samples.num_samples} samples")


def sample_run(run_dir, num, seed=0, log_pt=False, beam_size=16, mc_samples=64):
    """PosteriorSamples of K = num pairs (G, theta) from a run folder."""
    import time

    import jax
    import numpy as np

    from jspgfn import provenance
    from jspgfn.gflownet.sample import sample_joint
    from jspgfn.gflownet.train import enable_compilation_cache, load_run
    from jspgfn.samples import PosteriorSamples

    enable_compilation_cache()
    trainer, state, info, config = load_run(run_dir)
    start = time.time()
    apply_fn, d = trainer.network.apply, trainer.num_variables
    graphs, theta = sample_joint(apply_fn, trainer.model, state.params, jax.random.PRNGKey(seed), num, d,
                                 trainer.cfg.max_parents)
    extras = {}
    if log_pt:
        from jspgfn.gflownet.log_pt import log_prob_terminating

        extras["log_prob_terminating"] = log_prob_terminating(
            apply_fn, trainer.model, state.params, graphs, theta, seed, beam_size, mc_samples,
            trainer.cfg.max_parents)
    metadata = {"method": METHODS.get(config["model"], "jspgfn"), "model": config["model"],
                "model_kwargs": config["model_kwargs"], "graph_prior": trainer.cfg.graph_prior,
                "seed": config["seed"], "sample_seed": seed, "wall_seconds": float(info["wall_seconds"]),
                "sampling_seconds": time.time() - start, "iterations": int(info["iteration"]),
                "preset": config["preset"], "hyperparameters": config["train_config"],
                "theta_layout": trainer.model.layout(d), "data": config.get("data", ""),
                "provenance": provenance.provenance()}
    if log_pt:
        metadata["log_pt"] = {"beam_size": beam_size, "mc_samples": mc_samples}
    return PosteriorSamples(graphs=graphs, theta=np.asarray(theta, np.float64), metadata=metadata,
                            extras=extras)
