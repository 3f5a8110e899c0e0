# What the tables and figures are (figures.smk draws them): the small-graph ones (FIGURE_SPECS) and those
# an experiment lists in `figures:` (FIGURE_KINDS), their targets, inputs, `jspgfn report` arguments and
# titles. Functions and tables only (no rules here).

import os

# ----------------------------------------------------------------- tables and figures of the small graphs

# The figures of the small-graph experiment: the tidy table each is drawn from, and the arguments of
# `jspgfn report` that come before that table's path.
FIGURE_SPECS = {
    "figure_2a": {"table": "features.csv", "arguments": "features --kinds edge --methods {methods} --features"},
    "figure_2b": {
        "table": "metrics.csv",
        "arguments": "metrics --columns edge_rmse edge_pearson theta_cross_entropy --metrics",
    },
    "figure_d1": {
        "table": "features.csv",
        "arguments": "features --kinds edge path markov --methods {methods} --features",
    },
}


def scatter_methods():
    """Methods shown against the exact posterior: JSP-GFN when the config runs it, else every method."""
    methods = [m for m in experiment_methods(config["small_graphs"]) if m != "exact"]
    ours = [m for m in methods if config["methods"][m]["kind"] == "jspgfn"]
    return ours or methods


def figure_arguments(figure):
    """The arguments of `jspgfn report` before the table's path, one list item each (quoted by the rule)."""
    arguments = []
    for word in FIGURE_SPECS[figure]["arguments"].split():
        arguments.extend(scatter_methods() if word == "{methods}" else [word])
    return arguments


def figure_targets():
    """Tables and figures of the small-graph experiment (when the config runs it with the exact posterior)
    and of every enabled experiment's `figures`."""
    enabled = enabled_experiments()
    stems = [stem for stem, (eid, _) in experiment_figures().items() if eid in enabled]
    small = config["experiments"].get(config["small_graphs"])
    if small is not None and small["enabled"] and small["exact"]["enabled"]:
        stems = ["table_a1", "table_d1", *FIGURE_SPECS, *stems]
    return [f"{config['figures']}/{stem}.pdf" for stem in stems]


# ----------------------------------------------------------------- figures of any experiment (`figures:`)

# Kind -> (`jspgfn report` subcommand and options before the tables, what it writes). The tables are
# appended by experiment_figure_arguments; "figure" writes STEM.pdf and STEM.png, "table" STEM.pdf,
# STEM.csv and STEM.tex.
FIGURE_KINDS = {
    "nll": ("figure", ["metrics", "--columns", "nll_expected"]),
    "shd_auroc": ("figure", ["metrics", "--columns", "expected_shd", "auroc"]),
    "log_pt": ("figure", ["log-pt"]),
    "log_pt_slopes": ("table", ["table-slopes"]),
    "graph_table": ("table", ["table-graph"]),
    "edge_marginals": ("figure", ["edge-marginals"]),
    "exact_edges": ("figure", ["metrics", "--columns", "edge_rmse", "edge_pearson"]),
    "exact_graphs": ("table", ["table-exact-graphs"]),
}


FIGURE_TITLES = {
    "nll": "Held-out negative log-likelihood",
    "shd_auroc": "Against the true graph",
    "log_pt": "log P_T against log R",
    "edge_marginals": "Edge marginals of JSP-GFN's posterior",
    "exact_edges": "Edge marginals against the exact posterior",
    "exact_graphs": "Sampled graphs against the exact posterior",
}


# What graph.csv is, by data source, for the graph_table kind's title and note.
GRAPH_NOTES = {
    "sachs": (
        "E-SHD and AUROC against the Sachs consensus network",
        "The 17-arc consensus network of Sachs et al. (2005) is a REFERENCE, not a ground truth.",
    ),
    "gene_expression_simulated": (
        "E-SHD and AUROC against the simulated network",
        "SIMULATED data (sergio-rs stand-in): graph.csv is the network that generated it.",
    ),
}


def experiment_figures():
    """{stem: (experiment id, kind)} of every experiment's `figures` (load_config checked that stems are unique)."""
    return {stem: (eid, kind) for eid, exp in config["experiments"].items() for stem, kind in exp["figures"].items()}


def experiment_figure_ids(output):
    """Stems of the experiment figures that write `output` ("figure": pdf + png; "table": pdf + csv + tex)."""
    return [stem for stem, (_, kind) in experiment_figures().items() if FIGURE_KINDS[kind][0] == output]


def experiment_figure_inputs(wildcards):
    eid, kind = experiment_figures()[wildcards.figure]
    if kind == "edge_marginals":
        return {"edges": f"{RESULTS}/{eid}/edges.csv"}
    return {"metrics": f"{RESULTS}/{eid}/metrics.csv", "log_pt": f"{RESULTS}/{eid}/log_pt.csv"}


def experiment_figure_arguments(figure, inputs):
    """The arguments of `jspgfn report` for an experiment figure, one list item each (quoted by the rule)."""
    eid, kind = experiment_figures()[figure]
    arguments = list(FIGURE_KINDS[kind][1])
    if kind in FIGURE_TITLES:
        arguments += ["--title", f"{FIGURE_TITLES[kind]}: {experiment_title(eid)}{exact_scope(eid, kind)}"]
    ours = [m for m in experiment_methods(eid) if config["methods"][m]["kind"] == "jspgfn"]
    if kind == "log_pt":
        arguments += ["--table", inputs.log_pt, "--methods", *ours]
    if kind == "edge_marginals":
        return arguments + ["--table", inputs.edges, "--methods", *ours]
    if kind == "graph_table":
        source = config["experiments"][eid]["data"].get("source")
        title, note = GRAPH_NOTES.get(source, ("E-SHD and AUROC against the true graph", None))
        arguments += ["--title", f"{title}: {experiment_title(eid)}"] + (["--note", note] if note else [])
    return arguments + ["--metrics", inputs.metrics]


def exact_scope(eid, kind):
    """For a figure against the exact posterior when only some datasets have it: '; exact posterior on the
    first 1 of 5 datasets' (the metrics of the others have no exact columns); else ''."""
    if kind not in ("exact_edges", "exact_graphs"):
        return ""
    with_exact, total = len(exact_dataset_ids(eid)), config["experiments"][eid]["num_datasets"]
    return "" if with_exact == total else f"; exact posterior on the first {with_exact} of {total} datasets"


def experiment_title(eid):
    """A short description of an experiment's data for titles: 'ER2, d=20, linear, N=100 (quick preset)',
    'Sachs flow cytometry, d=11, N=100 (quick preset)'."""
    data = config["experiments"][eid]["data"]
    preset = f"({config['preset']} preset)"
    source = data.get("source")
    if source == "sachs":
        return f"Sachs flow cytometry, d=11, N={data.get('num_train') or 4200:,} {preset}"
    if source == "gene_expression_simulated":
        genes, cells = data.get("num_genes") or 61, data.get("num_train") or 2628
        return f"SIMULATED gene expression (sergio-rs), d={genes}, N={cells:,} {preset}"
    if source == "gene_expression":
        return f"gene expression ({os.path.basename(data['path'])}) {preset}"
    return f"{data['graph'].upper()}, d={data['d']}, {data['model']}, N={data['n']} {preset}"


def figure_category(wildcards):
    """The HTML report's section of an experiment figure: "Real data" (Figure 4) or "Larger graphs" (Figure 3)."""
    eid = experiment_figures()[wildcards.figure][0]
    return "Real data" if is_real_data(eid) else "Larger graphs"


def reduction(eid):
    """The caption sentence on what experiment `eid` of this preset reduces against the paper preset
    (config/config.yaml): datasets and budgets (jspgfn.report.reductions); '' in the paper preset."""
    from jspgfn.registry import load_registry
    from jspgfn.report.reductions import reduction_note

    paper = yaml.safe_load(Path(workflow.basedir, "config", "config.yaml").read_text())
    return reduction_note(config, eid, paper, load_registry(workflow.basedir))
