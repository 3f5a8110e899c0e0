"""`jspgfn evaluate` (metrics of one samples file) and `jspgfn aggregate` (metrics files into tidy tables)."""

from jspgfn.commands.checks import check_output_file
from jspgfn.errors import JspgfnError


def add_subcommands(sub):
    _add_evaluate(sub)
    _add_aggregate(sub)


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

    check_output_file(args.out)
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
