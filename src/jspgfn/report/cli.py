"""`jspgfn report ...`: one table or figure from the aggregated tables of an experiment."""

from jspgfn.errors import JspgfnError

TABLE_D1_NOTE = (
    "Mean ± 95% CI across datasets (Student t). 'paper': Table D.1 of Deleu et al. (2023); '–': not in the paper."
)


def add_subcommands(sub):
    p = sub.add_parser("report", help="draw a table or figure of the paper from aggregated tables")
    kinds = p.add_subparsers(dest="report", required=True)

    t = kinds.add_parser("table-d1", help="Table D.1: feature RMSE / Pearson r vs the exact posterior")
    t.add_argument("--metrics", required=True, help="metrics.csv of the small-graph experiment")
    t.add_argument("--paper", required=True, help="the paper's Table D.1 as CSV")
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

    m = kinds.add_parser("metrics", help="mean and 95%% CI per method (Figure 2b)")
    m.add_argument("--metrics", required=True, help="metrics.csv")
    m.add_argument("--columns", nargs="+", default=["edge_rmse", "edge_pearson", "theta_cross_entropy"])
    m.add_argument("--out", required=True, help="output stem: writes STEM.pdf and STEM.png")
    m.set_defaults(run=_metrics)


TITLES = {
    "edge_rmse": "Edge features: RMSE",
    "edge_pearson": "Edge features: Pearson's r",
    "theta_cross_entropy": "Cross-entropy -E[log P(θ | G, D)]",
    "nll_expected": "Held-out NLL",
    "expected_shd": "E-SHD",
    "auroc": "AUROC",
}


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


def _require(table, columns, path):
    from jspgfn.errors import DataError

    missing = [column for column in columns if column not in table.columns]
    if missing:
        raise DataError(path, f"missing column(s) {', '.join(missing)}")


def _table_d1(args):
    _require_plotting()
    from jspgfn.report.tables import table_d1, write_table

    metrics, paper = _read(args.metrics), _read(args.paper)
    _require(metrics, ["label", "edge_rmse"], args.metrics)
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
    write_table(numbers, shown, args.out, "Table A.1: capabilities of the methods in this project", note)
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
    figure_metrics(metrics, args.columns, [TITLES.get(c, c) for c in args.columns], args.out)
    print(f"wrote {args.out}.pdf/.png")
