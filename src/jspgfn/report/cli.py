"""`jspgfn report ...`: one table or figure from the aggregated tables of an experiment."""

from jspgfn.errors import JspgfnError

TABLE_D1_NOTE = "'paper': Table D.1 of Deleu et al. (2023), mean ± its 95% CI; '–': not in the paper."


def add_subcommands(sub):
    p = sub.add_parser("report", help="draw a table or figure of the paper from aggregated tables")
    kinds = p.add_subparsers(dest="report", required=True)

    t = kinds.add_parser("table-d1", help="Table D.1: feature RMSE / Pearson r vs the exact posterior")
    t.add_argument("--metrics", required=True, help="metrics.csv of the small-graph experiment")
    t.add_argument(
        "--paper",
        help="the paper's Table D.1 as CSV (method, edge_rmse, edge_rmse_ci, ...); default: the numbers of the "
        "method registry (`paper_table_d1` of each entry, jspgfn.registry)",
    )
    t.add_argument("--title", default="Table D.1: comparison with the exact posterior (d = 5)")
    t.add_argument("--out", required=True, help="output stem: writes STEM.csv, STEM.tex, STEM.pdf")
    t.set_defaults(run=_table_d1)

    f = kinds.add_parser("features", help="scatter of exact vs estimated features (Figure 2a, Figure D.1)")
    f.add_argument("--features", required=True, help="features.csv of the small-graph experiment")
    f.add_argument("--methods", nargs="+", required=True, help="method ids (rows)")
    f.add_argument("--kinds", nargs="+", default=["edge"], choices=["edge", "path", "markov"], help="columns")
    f.add_argument("--out", required=True, help="output stem: writes STEM.pdf and STEM.png")
    f.set_defaults(run=_features)

    a = kinds.add_parser("table-a1", help="Table A.1: capabilities, declared and probed")
    a.add_argument("--capabilities", required=True, help="capabilities.csv written by `jspgfn capabilities`")
    a.add_argument("--out", required=True, help="output stem: writes STEM.csv, STEM.tex, STEM.pdf")
    a.set_defaults(run=_table_a1)

    m = kinds.add_parser(
        "metrics", help="mean and 95%% CI per method, with every dataset's value as a dot (Figures 2b, 3a, 3b, D.2)"
    )
    m.add_argument("--metrics", required=True, help="metrics.csv")
    m.add_argument("--columns", nargs="+", default=["edge_rmse", "edge_pearson", "theta_cross_entropy"])
    m.add_argument("--title", default=None, help="figure title")
    m.add_argument("--out", required=True, help="output stem: writes STEM.pdf and STEM.png")
    m.set_defaults(run=_metrics)

    g = kinds.add_parser("log-pt", help="log P_T against log R of one dataset, per method (Figure 3c)")
    g.add_argument("--table", required=True, help="log_pt.csv written by `jspgfn aggregate --log-pt-out`")
    g.add_argument("--metrics", required=True, help="metrics.csv of the same runs (log_pt_slope, log_pt_intercept)")
    g.add_argument("--methods", nargs="+", required=True, help="method ids (one panel each)")
    g.add_argument("--dataset-seed", type=int, default=None, help="dataset drawn (default: the smallest in --table)")
    g.add_argument("--title", default=None, help="figure title")
    g.add_argument("--out", required=True, help="output stem: writes STEM.pdf and STEM.png")
    g.set_defaults(run=_log_pt)

    s = kinds.add_parser("table-slopes", help="RANSAC slope and Pearson r of log P_T vs log R per dataset")
    s.add_argument("--metrics", required=True, help="metrics.csv (log_pt_slope, log_pt_pearson)")
    s.add_argument("--title", default="Slope Δ and Pearson r of log P_T against log R (Figure 3c)")
    s.add_argument("--out", required=True, help="output stem: writes STEM.csv, STEM.tex, STEM.pdf")
    s.set_defaults(run=_table_slopes)

    e = kinds.add_parser("edge-marginals", help="heatmap of the edge marginals of one dataset, per method")
    e.add_argument("--table", required=True, help="edges.csv written by `jspgfn aggregate --edges-out`")
    e.add_argument("--methods", nargs="+", required=True, help="method ids (one panel each)")
    e.add_argument("--dataset-seed", type=int, default=None, help="dataset drawn (default: the smallest in --table)")
    e.add_argument("--title", default=None, help="figure title")
    e.add_argument("--out", required=True, help="output stem: writes STEM.pdf and STEM.png")
    e.set_defaults(run=_edge_marginals)

    x = kinds.add_parser(
        "table-exact-graphs",
        help="edges per sample and log P(D | G) of each method's samples beside the exact posterior's",
    )
    x.add_argument("--metrics", required=True, help="metrics.csv of runs evaluated with --exact")
    x.add_argument("--title", default="Sampled graphs against the exact posterior")
    x.add_argument("--out", required=True, help="output stem: writes STEM.csv, STEM.tex, STEM.pdf")
    x.set_defaults(run=_table_exact_graphs)

    r = kinds.add_parser("table-graph", help="E-SHD and AUROC per method against the dataset's graph.csv")
    r.add_argument("--metrics", required=True, help="metrics.csv (expected_shd, auroc)")
    r.add_argument("--title", default="E-SHD and AUROC against the graph of the data")
    r.add_argument("--note", default=None, help="a line under the table (default: what the columns are)")
    r.add_argument("--out", required=True, help="output stem: writes STEM.csv, STEM.tex, STEM.pdf")
    r.set_defaults(run=_table_graph)

    q = kinds.add_parser(
        "posterior",
        help="one self-contained HTML page about one samples file: edge marginals, top graphs, weights, "
        "log P_T, training curve, E-SHD / AUROC",
    )
    q.add_argument("samples", help="samples.npz (PosteriorSamples) of any method")
    q.add_argument("data", help="dataset folder or CSV file the samples were fitted on")
    q.add_argument(
        "--run",
        dest="run_folder",
        default=None,
        metavar="RUN_FOLDER",
        help="JSP-GFN run folder: adds the training curve",
    )
    q.add_argument("--top", type=int, default=5, metavar="K", help="draw the K most probable graphs (default 5)")
    q.add_argument("--title", default=None, help="page title (default: the method and the data)")
    q.add_argument("--out", required=True, help="the HTML file to write")
    q.set_defaults(run=_posterior)  # args.run is the command: the folder is args.run_folder


TITLES = {
    "edge_rmse": "Edge features: RMSE",
    "edge_pearson": "Edge features: Pearson's r",
    "theta_cross_entropy": "Cross-entropy -E[log P(θ | G, D)]",
    "nll_expected": "Held-out NLL",
    "expected_shd": "E-SHD",
    "nll_predictive": "Held-out predictive NLL",
    "auroc": "AUROC",
}
TABLE_SLOPES_NOTE = (
    "Δ: slope of the RANSAC fit of log P_T(G, θ) against log R(G, θ) (1 for a perfect sampler); r: Pearson's r. "
    "One row per dataset, then one per method:"
)


def _require_plotting():
    """A one-line error when the plotting packages (the `workflow` extra) are not installed."""
    import importlib.util

    missing = [name for name in ("matplotlib", "seaborn") if importlib.util.find_spec(name) is None]
    if missing:
        raise JspgfnError(
            f"jspgfn report needs {' and '.join(missing)}, which the lean core does not install: "
            "pip install -e '.[workflow]' (or make setup)"
        )


def _read(path):
    import pandas as pd

    from jspgfn.errors import DataError

    try:
        return pd.read_csv(path)
    except FileNotFoundError:
        raise DataError(path, "file not found") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise DataError(path, f"not a readable CSV table ({exc})") from None


def _require(table, columns, path, rows=True):
    """DataError naming `path` when a column is missing or (rows=True) the table has no row."""
    from jspgfn.errors import DataError

    missing = [column for column in columns if column not in table.columns]
    if missing:
        raise DataError(path, f"missing column(s) {', '.join(missing)}")
    if rows and table.empty:
        raise DataError(path, "the table has no rows")


def _table_d1(args):
    _require_plotting()
    from jspgfn.report.tables import table_d1, write_table

    metrics = _read(args.metrics)
    _require(metrics, ["label", "edge_rmse"], args.metrics)
    if args.paper is None:
        import pandas as pd

        from jspgfn.registry import load_registry, paper_table_d1

        paper = pd.DataFrame(paper_table_d1(load_registry()))
    else:
        paper = _read(args.paper)
        _require(paper, ["method", "edge_rmse", "edge_rmse_ci"], args.paper)
    numbers, shown = table_d1(metrics, paper)
    write_table(numbers, shown, args.out, args.title, TABLE_D1_NOTE)
    print(f"wrote {args.out}.csv/.tex/.pdf: {len(shown)} methods")


def _table_a1(args):
    _require_plotting()
    from jspgfn.report.tables import table_a1, write_table

    capabilities = _read(args.capabilities)
    _require(capabilities, ["label", "display_name", "capability", "value", "evidence", "probed"], args.capabilities)
    numbers, shown = table_a1(capabilities)
    note = (
        "✓ yes, ✗ no, ? unknown (neither declared nor probed); * checked by a probe run, "
        f"what it saw is in the evidence column of {args.out}.csv"
    )
    write_table(
        numbers, shown, args.out, "Table A.1: capabilities of the methods in this project", note, intervals=False
    )
    print(f"wrote {args.out}.csv/.tex/.pdf: {len(shown)} methods")


def _features(args):
    _require_plotting()
    from jspgfn.report.figures import figure_features

    features = _read(args.features)
    _require(features, ["label", "feature", "exact", "estimate"], args.features)
    try:
        figure_features(features, args.methods, args.kinds, args.out)
    except ValueError as exc:
        raise JspgfnError(f"{args.features}: {exc}") from None
    print(f"wrote {args.out}.pdf/.png")


def _metrics(args):
    _require_plotting()
    from jspgfn.report.figures import figure_metrics

    metrics = _read(args.metrics)
    _require(metrics, ["label", *args.columns], args.metrics)
    titles = [TITLES.get(c, c) for c in args.columns]
    figure_metrics(metrics, args.columns, titles, args.out, title=args.title)
    print(f"wrote {args.out}.pdf/.png")


def _log_pt(args):
    _require_plotting()
    from jspgfn.report.figures import figure_log_pt

    points, metrics = _read(args.table), _read(args.metrics)
    _require(points, ["label", "dataset_seed", "num_edges", "log_reward", "log_pt"], args.table, rows=False)
    _require(metrics, ["label", "dataset_seed", "log_pt_slope", "log_pt_intercept"], args.metrics)
    figure_log_pt(
        points,
        metrics,
        args.methods,
        args.out,
        dataset_seed=args.dataset_seed,
        title=args.title,
        points_source=args.table,
        metrics_source=args.metrics,
    )
    print(f"wrote {args.out}.pdf/.png")


def _table_slopes(args):
    _require_plotting()
    from jspgfn.report.tables import table_slopes, write_table

    metrics = _read(args.metrics)
    _require(metrics, ["label", "dataset_seed", "log_pt_slope", "log_pt_pearson"], args.metrics)
    try:
        numbers, shown = table_slopes(metrics)
    except ValueError as exc:
        raise JspgfnError(f"{args.metrics}: {exc}") from None
    write_table(numbers, shown, args.out, args.title, TABLE_SLOPES_NOTE)
    print(f"wrote {args.out}.csv/.tex/.pdf: {numbers['label'].nunique()} methods")


TABLE_GRAPH_NOTE = (
    "E-SHD: expected structural Hamming distance to graph.csv (lower is better); AUROC of the edge marginals "
    "against it (higher is better)."
)


def _edge_marginals(args):
    _require_plotting()
    from jspgfn.report.figures import figure_edge_marginals

    edges = _read(args.table)
    _require(edges, ["label", "dataset_seed", "source", "target", "source_name", "target_name", "marginal"], args.table)
    figure_edge_marginals(
        edges, args.methods, args.out, dataset_seed=args.dataset_seed, title=args.title, source=args.table
    )
    print(f"wrote {args.out}.pdf/.png")


def _per_method_table(args, table_name, note):
    """Write the per-method table jspgfn.report.tables.<table_name>(metrics) -> (numbers, shown) of
    args.metrics to args.out (the tables module needs the plotting packages: imported after the check)."""
    _require_plotting()
    from jspgfn.report import tables

    make_table = getattr(tables, table_name)

    metrics = _read(args.metrics)
    _require(metrics, ["label"], args.metrics)
    try:
        numbers, shown = make_table(metrics)
    except ValueError as exc:
        raise JspgfnError(f"{args.metrics}: {exc}") from None
    tables.write_table(numbers, shown, args.out, args.title, note)
    print(f"wrote {args.out}.csv/.tex/.pdf: {len(numbers)} methods")


def _table_graph(args):
    note = TABLE_GRAPH_NOTE if args.note is None else f"{args.note} {TABLE_GRAPH_NOTE}"
    _per_method_table(args, "table_graph", note)


TABLE_EXACT_GRAPHS_NOTE = (
    "Over the datasets with the exact posterior. Edges per sample: E_q[|E(G)|]; exact E[edges]: the sum of the "
    "exact edge marginals. log P(D|G): the closed-form log marginal likelihood of the linear Gaussian model "
    "(theta integrated out) plus the log graph prior (unnormalised, 0 under the uniform prior), of the acyclic "
    "samples: weighted mean and best; exact E[log P(D|G)]: its expectation under the exact posterior (beyond d = 5 "
    "a Monte Carlo mean over its exact samples, 100,000 by default); gap: exact minus the samples' mean, per dataset."
)


def _table_exact_graphs(args):
    _per_method_table(args, "table_exact_graphs", TABLE_EXACT_GRAPHS_NOTE)


def _posterior(args):
    _require_plotting()
    from jspgfn.report.posterior_report import write_report

    write_report(args.out, args.samples, args.data, run=args.run_folder, top=args.top, title=args.title)
    print(f"wrote {args.out}")
