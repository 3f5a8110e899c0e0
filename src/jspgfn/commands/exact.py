"""`jspgfn exact`: the exact posterior of the linear Gaussian model (exact.py for d <= 5, exact_dp_posterior beyond)."""

import sys

from jspgfn.commands.checks import check_output_file, check_positive
from jspgfn.errors import JspgfnError


def add_subcommands(sub):
    p = sub.add_parser(
        "exact",
        help="exact posterior over DAGs and features (linear Gaussian): every DAG listed for d <= 5; "
        "beyond, exact edge marginals by a subset dynamic program and the other features from exact samples",
    )
    p.add_argument("data", help="dataset folder or CSV file")
    p.add_argument("--graph-prior", default="uniform", choices=["uniform", "erdos_renyi", "edge"])
    p.add_argument("--obs-var", type=float, default=0.01)
    p.add_argument("--prior-var", type=float, default=1.0)
    p.add_argument("--samples", type=int, default=100_000, help="d > 5: exact DAG samples for path/Markov features")
    p.add_argument("--seed", type=int, default=0, help="d > 5: seed of those samples")
    p.add_argument("--max-parents", type=int, default=None, help="d > 5: at most this many parents per node")
    p.add_argument("--no-progress", action="store_true", help="d > 5: no progress bar")
    p.add_argument("--out", required=True, help="exact.npz to write")
    p.set_defaults(run=_run_exact)


def _progress_bar(total, enabled, desc, unit):
    """A tqdm bar over `total` work units (a no-op bar when not enabled)."""
    from tqdm.auto import tqdm

    return tqdm(total=total, disable=not enabled, desc=desc, unit=unit, unit_scale=True, dynamic_ncols=True)


def _run_exact(args):
    from jspgfn.dataset import load_dataset
    from jspgfn.exact import MAX_EXACT_VARIABLES, compute_exact_posterior, save_exact
    from jspgfn.exact_dp import dp_terms
    from jspgfn.exact_dp_cost import check_dp_fits
    from jspgfn.exact_dp_posterior import compute_dp_posterior
    from jspgfn.models import LinearGaussian, get_graph_prior

    check_positive("--obs-var", args.obs_var)
    check_positive("--prior-var", args.prior_var)
    check_output_file(args.out)
    check_positive("--samples", args.samples)
    if args.max_parents is not None and args.max_parents < 0:
        raise JspgfnError(f"--max-parents must be >= 0, got {args.max_parents}")
    dataset = load_dataset(args.data)
    model = LinearGaussian(obs_var=args.obs_var, prior_var=args.prior_var)
    prior = get_graph_prior(args.graph_prior, dataset.num_variables)
    d = dataset.num_variables
    if d <= MAX_EXACT_VARIABLES and args.max_parents is None:
        posterior = compute_exact_posterior(dataset, model, prior)
    else:
        seconds, peak = check_dp_fits(d, args.data, num_samples=args.samples)
        if seconds > 60:
            print(
                f"exact: d={d}: the subset dynamic program and {args.samples:,} exact samples, estimated "
                f"{seconds / 60:.0f} min and {peak / 2**30:.2g} GiB",
                file=sys.stderr,
            )
        show = not args.no_progress
        bars = [_progress_bar(dp_terms(d), show, "exact: subset DP", "term")]

        def samples_done(count):
            if len(bars) == 1:  # the DP is finished: its bar gives way to the samples' bar
                bars[0].close()
                bars.append(_progress_bar(args.samples, show, "exact: samples", "DAG"))
            bars[1].update(count)

        try:
            posterior = compute_dp_posterior(
                dataset, model, prior, args.samples, args.seed, args.max_parents, bars[0].update, samples_done
            )
        finally:
            for bar in bars:
                bar.close()
    save_exact(args.out, posterior)
    if "monte_carlo_max_standard_error" in posterior.metadata:
        error = posterior.metadata["monte_carlo_max_standard_error"]
        print(
            f"wrote {args.out}: exact edge marginals; path/Markov features from {args.samples} exact samples "
            f"(max standard error {max(error.values()):.4f}, {len(posterior.log_probs)} distinct DAGs)"
        )
    else:
        print(f"wrote {args.out}: {len(posterior.log_probs)} DAGs")
