"""The `jspgfn` command. Each subcommand parses its options and calls one library function.

Errors caused by the input (bad file, bad option) print one line
`jspgfn: error: <file>: <problem>` on stderr and exit with status 2; nothing is
left where a finished output file is expected. Warnings about the input (a constant
column) print one line `jspgfn: warning: <file>: <problem>` and the command goes on.
"""

import argparse
import math
import sys
import warnings

from jspgfn.errors import DataError, JspgfnError, OptionError


def _check_positive(option, value):
    """JspgfnError unless a numeric option is finite and > 0 (argparse's float() accepts nan and inf)."""
    if not (math.isfinite(value) and value > 0):
        raise JspgfnError(f"{option} must be a finite number > 0, got {value}")


def _check_output_file(path):
    """DataError before any work when --out names an existing folder (the output is one file)."""
    from pathlib import Path

    if path is not None and Path(path).is_dir():
        raise DataError(path, "is a folder; --out names the file to write")


def _add_generate(sub):
    p = sub.add_parser("generate", help="simulate a synthetic dataset folder")
    p.add_argument("--graph", default="er1", help="er1, er2, ... (k*d expected edges)")
    p.add_argument("--model", default="linear", choices=["linear", "mlp"])
    p.add_argument("--d", type=int, default=5, help="number of variables")
    p.add_argument("--n", type=int, default=100, help="training rows")
    p.add_argument("--n-test", type=int, default=100, help="held-out rows")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--obs-var", type=float, default=0.01, help="noise variance")
    p.add_argument(
        "--interventional-fraction",
        type=float,
        default=0.0,
        help="share of rows with one variable set by a hard intervention",
    )
    p.add_argument("--out", required=True, help="dataset folder to write")
    p.set_defaults(run=_run_generate)


def _run_generate(args):
    from pathlib import Path

    from jspgfn.dataset import write_dataset
    from jspgfn.generate import generate

    _check_positive("--obs-var", args.obs_var)
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise DataError(args.out, "is a file; --out names the dataset folder to write")
    dataset = generate(
        args.graph,
        args.model,
        args.d,
        args.n,
        args.n_test,
        args.seed,
        obs_var=args.obs_var,
        interventional_fraction=args.interventional_fraction,
    )
    write_dataset(args.out, dataset)
    print(f"wrote {args.out}: d={args.d}, {dataset.graph.sum()} edges, {args.n} train / {args.n_test} test rows")


def _add_exact(sub):
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
    from jspgfn.exact_dp import check_dp_fits, compute_dp_posterior, dp_terms
    from jspgfn.models import LinearGaussian, get_graph_prior

    _check_positive("--obs-var", args.obs_var)
    _check_positive("--prior-var", args.prior_var)
    _check_output_file(args.out)
    _check_positive("--samples", args.samples)
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


def _add_evaluate(sub):
    p = sub.add_parser("evaluate", help="metrics of a PosteriorSamples file")
    p.add_argument("samples", help="samples.npz")
    p.add_argument("data", help="dataset folder or CSV file the samples were fitted on")
    p.add_argument("--exact", default=None, help="exact.npz of the same dataset (feature metrics)")
    p.add_argument(
        "--label",
        default=None,
        help="id of the run in tables (e.g. the config's method id; default: the samples' method)",
    )
    p.add_argument(
        "--display-name",
        default=None,
        help="how tables and figures name the method (default: the samples' display_name)",
    )
    p.add_argument(
        "--edge-marginals",
        action="store_true",
        help="also record the d x d edge marginals with the variable names (the edge_marginals figure)",
    )
    p.add_argument("--out", required=True, help="metrics.json to write")
    p.set_defaults(run=_run_evaluate)


def _run_evaluate(args):
    from jspgfn.atomic import write_json
    from jspgfn.dataset import load_dataset
    from jspgfn.evaluate import evaluate
    from jspgfn.exact import load_exact
    from jspgfn.samples import load_samples

    _check_output_file(args.out)
    samples = load_samples(args.samples)
    dataset = load_dataset(args.data)
    exact = load_exact(args.exact) if args.exact else None
    metrics = evaluate(samples, dataset, exact, samples_source=args.samples, exact_source=args.exact)
    if args.edge_marginals:
        from jspgfn.evaluate import edge_marginals

        metrics["edge_marginals"] = edge_marginals(samples, dataset)
    metrics["label"] = args.label or metrics["method"]
    metrics["display_name"] = args.display_name or samples.metadata.get("display_name") or metrics["label"]
    write_json(args.out, metrics)
    print(f"wrote {args.out}")


def _add_aggregate(sub):
    p = sub.add_parser("aggregate", help="collect metrics.json files into one tidy CSV")
    p.add_argument("metrics", nargs="+", help="metrics.json files")
    p.add_argument(
        "--column",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="constant column to add to every row (repeatable), e.g. preset=quick",
    )
    p.add_argument("--out", default=None, help="CSV to write (one row per run)")
    p.add_argument(
        "--features-out",
        default=None,
        help="also write the per-pair edge/path/Markov features (exact vs estimate) to this CSV",
    )
    p.add_argument(
        "--log-pt-out",
        default=None,
        help="also write the per-sample log P_T and log R points (Figure 3c) to this CSV",
    )
    p.add_argument(
        "--edges-out",
        default=None,
        help="also write the edge marginals of runs evaluated with --edge-marginals (one row per pair) to this CSV",
    )
    p.set_defaults(run=_run_aggregate)


def _run_aggregate(args):
    from jspgfn.aggregate import aggregate_edges, aggregate_features, aggregate_log_pt, aggregate_metrics

    columns = {}
    for item in args.column:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise JspgfnError(f"--column expects NAME=VALUE, got {item!r}")
        columns[name] = value
    if not (args.out or args.features_out or args.log_pt_out or args.edges_out):
        raise JspgfnError("aggregate needs at least one of --out, --features-out, --log-pt-out, --edges-out")
    if args.out:
        table = aggregate_metrics(args.metrics, args.out, columns)
        print(f"wrote {args.out}: {len(table)} rows")
    if args.features_out:
        features = aggregate_features(args.metrics, args.features_out, columns)
        print(f"wrote {args.features_out}: {len(features)} rows")
    if args.log_pt_out:
        points = aggregate_log_pt(args.metrics, args.log_pt_out, columns)
        print(f"wrote {args.log_pt_out}: {len(points)} rows")
    if args.edges_out:
        edges = aggregate_edges(args.metrics, args.edges_out, columns)
        print(f"wrote {args.edges_out}: {len(edges)} rows")


def _add_baseline(sub):
    p = sub.add_parser("baseline", help="fit a baseline method and write PosteriorSamples")
    p.add_argument("name", nargs="?", help="baseline name (see `jspgfn baseline --list`)")
    p.add_argument("data", nargs="?", help="dataset folder or CSV file")
    p.add_argument(
        "--list",
        action="store_true",
        help="list the baselines (the method registry's folders), their parameters and capabilities",
    )
    p.add_argument("--model", default="lingauss", help="likelihood model: lingauss or mlp-gauss")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="hyper-parameter override (repeatable), value parsed as YAML",
    )
    p.add_argument("--out", help="samples.npz to write")
    p.set_defaults(run=_run_baseline)


def _run_baseline(args):
    import yaml

    from jspgfn.api import baseline
    from jspgfn.competitors import baseline_specs, baselines_package
    from jspgfn.gflownet.cli import parse_value

    if args.list:
        for name, spec in baseline_specs().items():
            capabilities = " ".join(f"{key}={value}" for key, value in spec["capabilities"].items())
            parameters = ", ".join(f"{key}={schema['default']}" for key, schema in spec["parameters"].items())
            print(
                f"{name:14s}{spec['display_name']}: {', '.join(spec['likelihoods'])}; {capabilities}\n"
                f"{'':14s}parameters: {parameters}"
            )
        return
    if args.name is None or args.data is None or args.out is None:
        raise JspgfnError("baseline needs NAME, DATA and --out (or --list)")
    params = {}
    for item in args.param:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise JspgfnError(f"--param expects KEY=VALUE, got {item!r}")
        try:
            params[key] = parse_value(value)
        except yaml.YAMLError:
            raise JspgfnError(f"--param {item!r}: the value is not valid YAML") from None
    baselines_package(args.name).get_spec(args.name)  # an unknown name fails before the output path is checked
    _check_output_file(args.out)
    samples = baseline(args.name, args.data, args.model, args.seed, **params)
    samples.save(args.out)
    print(f"wrote {args.out}: {samples.num_samples} samples")


def _add_capabilities(sub):
    p = sub.add_parser("probe", help="probe runs of one method for Table A.1 (non-linear model, sampler)")
    p.add_argument("--label", required=True, help="the method's id")
    p.add_argument("--method", required=True, help="its config entry as JSON (kind, name, display_name, params)")
    p.add_argument("--out", required=True, help="probe JSON to write")
    p.set_defaults(run=_run_probe)

    p = sub.add_parser("capabilities", help="tidy capabilities table (Table A.1) from probes and runs")
    p.add_argument("probes", nargs="+", help="probe JSON files written by `jspgfn probe`")
    p.add_argument("--metrics", required=True, help="metrics.csv with the methods' runs (share_cyclic)")
    p.add_argument("--out", required=True, help="capabilities.csv to write")
    p.set_defaults(run=_run_capabilities)


def _run_probe(args):
    import json

    from jspgfn.atomic import write_json
    from jspgfn.capabilities import declared, probe

    try:
        method = json.loads(args.method)
    except json.JSONDecodeError as exc:
        raise JspgfnError(f"--method is not valid JSON ({exc})") from None
    record = {
        "label": args.label,
        "display_name": method.get("display_name") or args.label,
        "declared": declared(method),
        "probes": probe(method),
    }
    write_json(args.out, record)
    print(f"wrote {args.out}")


def _run_capabilities(args):
    import json
    from pathlib import Path

    import pandas as pd

    from jspgfn import atomic
    from jspgfn.capabilities import capability_table
    from jspgfn.errors import DataError

    probes = []
    for path in args.probes:
        try:
            probes.append(json.loads(Path(path).read_text()))
        except (OSError, json.JSONDecodeError) as exc:
            raise DataError(path, f"not a readable probe JSON file ({exc})") from None
    table = capability_table(probes, pd.read_csv(args.metrics))
    with atomic.atomic_path(args.out) as tmp:
        table.to_csv(tmp, index=False)
    print(f"wrote {args.out}: {len(probes)} methods")


def build_parser():
    parser = argparse.ArgumentParser(prog="jspgfn", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    from jspgfn.gflownet.cli import add_subcommands as add_train_sample
    from jspgfn.realdata.cli import add_subcommands as add_realdata
    from jspgfn.report.cli import add_subcommands as add_report

    for add in (
        _add_generate,
        add_realdata,
        _add_exact,
        _add_evaluate,
        _add_aggregate,
        _add_baseline,
        _add_capabilities,
        add_report,
    ):
        add(sub)
    add_train_sample(sub)  # JSP-GFN: `jspgfn train` and `jspgfn sample`
    return parser


def _os_error_message(exc):
    """`<file>: <problem>` of an OSError from the operating system (file missing, a folder, no permission)."""
    problem = exc.strerror or str(exc)
    if exc.filename is None:
        return problem
    if exc.filename2 is not None:
        return f"{exc.filename} -> {exc.filename2}: {problem}"
    return f"{exc.filename}: {problem}"


def _error_message(exc, args):
    """The error's message; a setting the command has an option for is named by that option's flag."""
    if isinstance(exc, OptionError) and exc.name in vars(args):
        return f"--{exc.name.replace('_', '-')} {exc.problem}"
    return str(exc)


def _show_warning(message, category, filename, lineno, file=None, line=None, _default=warnings.showwarning):
    """The input's warnings (DataWarning) on one line like the errors; others as Python shows them."""
    from jspgfn.dataset import DataWarning

    if issubclass(category, DataWarning):
        print(f"jspgfn: warning: {message}", file=sys.stderr if file is None else file)
    else:
        _default(message, category, filename, lineno, file, line)


def main(argv=None):
    """Run the command. Exit status 2 and one line `jspgfn: error: ...` for an error of the input
    (JspgfnError, or an OSError of a named file); any other exception is a bug and shows its traceback."""
    args = build_parser().parse_args(argv)
    from jspgfn.dataset import DataWarning

    with warnings.catch_warnings():
        warnings.simplefilter("always", DataWarning)
        warnings.showwarning = _show_warning
        try:
            status = args.run(args)  # None, or a status of the command's own (e.g. 3: training unfinished)
        except JspgfnError as exc:
            print(f"jspgfn: error: {_error_message(exc, args)}", file=sys.stderr)
            return 2
        except OSError as exc:
            if exc.errno is None:  # not from the operating system: a bug
                raise
            print(f"jspgfn: error: {_os_error_message(exc)}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("jspgfn: interrupted", file=sys.stderr)
            return 130
    return status or 0


if __name__ == "__main__":
    sys.exit(main())
