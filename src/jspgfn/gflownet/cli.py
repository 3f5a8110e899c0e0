"""`jspgfn train` and `jspgfn sample` (registered by jspgfn.cli through add_subcommands)."""

import re

from jspgfn.errors import JspgfnError
from jspgfn.gflownet.recipes import RECIPES

_FLOAT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def parse_value(text):
    """A --set / --param value: YAML, except that 1e-4 is the float YAML 1.1 would leave a string."""
    import yaml

    if _FLOAT.fullmatch(text.strip()) and not re.fullmatch(r"[-+]?\d+", text.strip()):
        return float(text)
    return yaml.safe_load(text)


def _parse_overrides(items):
    """(likelihood settings, training options) of the --set KEY=VALUE items, told apart by name
    (models.SETTING_NAMES: obs_var, prior_mean, prior_var, hidden, num_levels)."""
    import yaml

    from jspgfn.models import split_settings

    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise JspgfnError(f"--set expects KEY=VALUE, got {item!r}")
        try:
            out[key.strip().replace("-", "_")] = parse_value(value)
        except yaml.YAMLError as exc:
            problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise JspgfnError(f"--set {item!r}: the value is not valid YAML ({problem})") from None
    return split_settings(out)


def add_subcommands(sub):
    p = sub.add_parser(
        "train",
        help="train (or resume) JSP-GFN on a dataset, or on several of the same shape in one process",
        description="Train (or resume) JSP-GFN. Several datasets (DATA... with one --out RUN each) of the same "
        "d and number of rows are trained in one process with one compiled step, each into its own run folder, "
        "as a run on its own would be.",
    )
    p.add_argument("data", nargs="+", help="dataset folder or CSV file (several: trained together, one --out each)")
    p.add_argument(
        "--model",
        default="lingauss",
        help="likelihood model: lingauss or mlp-gauss (lingauss-diag / lingauss-full also name the family)",
    )
    p.add_argument(
        "--family",
        default=None,
        choices=["diag", "full"],
        help="posterior family of P(theta | G): diagonal (default) or full covariance",
    )
    p.add_argument(
        "--preset",
        default=None,
        help="smoke, quick or paper (default: quick; with --recipe lingauss, quick with the 15,000 iterations "
        "the recipe was measured with)",
    )
    p.add_argument(
        "--recipe",
        default=None,
        choices=RECIPES,
        help="paper (default): the paper's method; lingauss (beyond the paper, linear Gaussian model): the "
        "options measured closest to the exact posterior, chosen by the number of variables and recorded in "
        "config.json (docs/own-data.md); --set options win over it",
    )
    p.add_argument(
        "--seed",
        type=int,
        nargs="+",
        default=[0],
        help="training seed: one for every run, or one per dataset (default 0)",
    )
    p.add_argument(
        "--set",
        "--param",
        dest="set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a training option, e.g. --set num_iterations=5000, or a setting of the likelihood model: obs_var "
        "(noise variance, default 0.01), prior_mean, prior_var (N(mean, var) prior on weights, default 0, 1), "
        "hidden (MLP units) (repeatable; value parsed as YAML/JSON; recorded in the run's config.json)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--max-iterations",
        type=int,
        default=None,
        metavar="N",
        help="train at most up to iteration N in this invocation (checkpoint there); "
        "the same command without it continues to num_iterations",
    )
    p.add_argument(
        "--time-limit",
        type=float,
        default=None,
        metavar="SECONDS",
        help="stop at the first chunk boundary after SECONDS of wall time in this invocation (checkpoint there)",
    )
    p.add_argument(
        "--out",
        required=True,
        nargs="+",
        help="run folder (resumed if it has a checkpoint); one per dataset, in the order of DATA",
    )
    p.set_defaults(run=_run_train)

    p = sub.add_parser("sample", help="draw (G, theta) samples from a trained JSP-GFN run")
    p.add_argument("run_dir", help="run folder written by `jspgfn train`")
    p.add_argument("--num", type=int, default=1000, help="number of samples K")
    p.add_argument("--seed", type=int, default=0, help="sampling seed")
    p.add_argument(
        "--log-pt",
        action="store_true",
        help="also estimate log P_T(G, theta) (beam search + Monte Carlo, appendix D.3.2)",
    )
    p.add_argument("--beam-size", type=int, default=16)
    p.add_argument("--mc-samples", type=int, default=64)
    p.add_argument(
        "--log-pt-proposal",
        choices=("uniform", "mixture"),
        default="uniform",
        help="Monte Carlo orders of the log P_T estimate: uniform (the paper's) or mixture (half drawn from the "
        "policy; far closer on dense graphs, docs/decisions.md)",
    )
    p.add_argument("--out", required=True, help="samples.npz to write")
    p.set_defaults(run=_run_sample)


def _run_train(args):
    """Exit status 3 when --max-iterations or --time-limit stopped an unfinished run,
    so that a workflow does not take the run for done; rerunning the command resumes it."""
    import sys

    from jspgfn.gflownet.train import train_group

    model_kwargs, overrides = _parse_overrides(args.set)
    trainer, _, infos = train_group(
        args.data,
        args.model,
        args.preset,
        args.seed,
        args.out,
        overrides=overrides,
        progress=not args.no_progress,
        max_iterations=args.max_iterations,
        time_limit=args.time_limit,
        family=args.family,
        model_kwargs=model_kwargs,
        recipe=args.recipe,
    )
    status = None
    for out, info in zip(args.out, infos):
        if not info["finished"]:
            which = f"{out}: " if len(infos) > 1 else ""
            print(
                f"jspgfn: {which}stopped at iteration {info['iteration']} of {trainer.cfg.num_iterations} "
                f"({info['stop_reason']}); run the same command again to resume",
                file=sys.stderr,
            )
            status = 3
        else:
            print(f"trained {out}: {info['iteration']} iterations, {info['wall_seconds']:.0f} s")
    return status


def _run_sample(args):
    from pathlib import Path

    from jspgfn.errors import DataError

    if args.num < 1:
        raise JspgfnError(f"--num must be >= 1, got {args.num}")
    if Path(args.out).is_dir():  # refused before sampling, which may take a while
        raise DataError(args.out, "is a folder; --out names the samples file to write (e.g. samples.npz)")
    from jspgfn.gflownet.method import sample_run
    from jspgfn.samples import save_samples

    samples = sample_run(
        args.run_dir, args.num, args.seed, args.log_pt, args.beam_size, args.mc_samples, args.log_pt_proposal
    )
    save_samples(args.out, samples)
    print(f"wrote {args.out}: {samples.num_samples} samples")
