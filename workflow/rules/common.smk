# The helpers that rules use: ids, paths, arguments and resources read from the validated config
# (config.smk loads and checks it). Functions only (no rules here).

import json
import math
import os
import re
from pathlib import Path


def experiment(wildcards):
    return config["experiments"][wildcards.experiment]


def method(wildcards):
    return config["methods"][wildcards.method]


def dataset_ids(eid):
    exp = config["experiments"][eid]
    return [str(exp["first_seed"] + i) for i in range(exp["num_datasets"])]


def exact_dataset_ids(eid):
    """Ids of the datasets of experiment `eid` that get the exact posterior: the first exact.datasets ones
    (all when null; none when exact is not enabled)."""
    exact = config["experiments"][eid]["exact"]
    if not exact["enabled"]:
        return []
    ids = dataset_ids(eid)
    return ids if exact["datasets"] is None else ids[: exact["datasets"]]


def exact_resources(wildcards):
    """(minutes, MB) for the exact rule: 30 min and 4 GB while exact_dp.dp_cost estimates under a minute
    (d <= 16), beyond twice its estimate plus 30 min for the exact samples (d = 20: 94 min, 4 GB)."""
    from jspgfn.exact_dp import dp_cost

    seconds, peak = dp_cost(experiment(wildcards)["data"]["d"])
    minutes = 30 if seconds < 60 else 30 + math.ceil(2 * seconds / 60)
    return minutes, max(4000, math.ceil(2 * peak / 2**20))


def method_ids(kind):
    """Ids of the methods of one kind that some experiment uses."""
    used = {m for exp in config["experiments"].values() for m in exp["methods"]}
    return sorted(m for m in used if config["methods"][m]["kind"] == kind)


def id_regex(ids):
    """Wildcard constraint matching exactly these ids (matches nothing when empty)."""
    return "|".join(re.escape(str(i)) for i in ids) if ids else "(?!x)x"


def method_env(wildcards):
    """The conda environment of a method for --use-conda: a baseline's (its method.yaml's `environment`,
    else the default baselines/shared/environment.yaml), the core's for JSP-GFN."""
    entry = method(wildcards)
    if entry["kind"] != "baseline":
        return str(Path(workflow.basedir, "workflow", "envs", "jspgfn.yaml"))
    return registry().specs[entry["name"]]["environment_file"]


def param_args(params):
    """--param=KEY=VALUE options (values as JSON, which the CLI parses as YAML), one list item each:
    the shell command quotes each with {params.extra:q}."""
    return [f"--param={k}={json.dumps(v)}" for k, v in sorted(params.items())]


def experiment_metrics(eid):
    """Every metrics.json that results/{preset}/{eid}/metrics.csv aggregates."""
    exp = config["experiments"][eid]
    return expand(
        f"{RESULTS}/{eid}/metrics/{{method}}/{{dataset}}.json", method=exp["methods"], dataset=dataset_ids(eid)
    )


# ----------------------------------------------------------------- tables and figures (figures.smk)

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


def experiment_methods(eid):
    return config["experiments"][eid]["methods"]


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


def enabled_experiments():
    """Ids of the experiments built by default (enabled true), the others only when asked for by name."""
    return [eid for eid, exp in config["experiments"].items() if exp["enabled"]]


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


def edge_experiments():
    """Ids of the experiments with an edge_marginals figure."""
    return [eid for eid, exp in config["experiments"].items() if "edge_marginals" in exp["figures"].values()]


def edge_marginal_files(eid):
    """The edge-marginal JSON of every JSP-GFN run of experiment `eid` (aggregated into edges.csv)."""
    ours = [m for m in experiment_methods(eid) if config["methods"][m]["kind"] == "jspgfn"]
    return expand(f"{RESULTS}/{eid}/edges/{{method}}/{{dataset}}.json", method=ours, dataset=dataset_ids(eid))


# `jspgfn realdata` options of each data source (the config key, the option, None: left out when null).
REALDATA_OPTIONS = {
    "sachs": (["realdata", "sachs"], [("num_train", "--num-train"), ("bnlearn_file", "--bnlearn-file")]),
    "gene_expression_simulated": (
        ["realdata", "gene-expression"],
        [
            ("num_genes", "--num-genes"),
            ("num_train", "--num-train"),
            ("num_test", "--num-test"),
            ("num_train_knockouts", "--num-train-knockouts"),
            ("num_test_knockouts", "--num-test-knockouts"),
        ],
    ),
    "gene_expression": (
        ["realdata", "gene-expression"],
        [("path", "--input"), ("target_column", "--target-column"), ("held_out", "--held-out")],
    ),
}


def realdata_arguments(wildcards):
    """The `jspgfn realdata ...` arguments (before --seed and --out) that write a real-data experiment's
    dataset, one list item each (quoted by the rule)."""
    data = experiment(wildcards)["data"]
    command, options = REALDATA_OPTIONS[data["source"]]
    arguments = list(command)
    for key, option in options:
        value = data.get(key)
        if isinstance(value, list):
            value = ",".join(value)
        if value is not None:
            arguments += [option, str(value)]
    return arguments


def realdata_inputs(wildcards):
    """Files a dataset is read from: the user's table (gene_expression) or bnlearn's file (sachs), if any."""
    data = experiment(wildcards)["data"]
    return [data[key] for key in ("path", "bnlearn_file") if data.get(key) is not None]


def data_experiments(real):
    """Ids of the experiments with real data (a data `source`) or, real=False, with synthetic data."""
    return [eid for eid in config["experiments"] if is_real_data(eid) == real]


def is_real_data(eid):
    return config["experiments"][eid]["data"].get("source") is not None


def log_pt_args(wildcards):
    """`jspgfn sample` options estimating log P_T for the experiment's figures, or none."""
    log_pt = experiment(wildcards)["log_pt"]
    if not log_pt["enabled"]:
        return []
    args = ["--log-pt", "--beam-size", str(log_pt["beam_size"]), "--mc-samples", str(log_pt["mc_samples"])]
    if log_pt["proposal"] != "uniform":  # the default adds no option, so runs sampled before it stay valid
        args += ["--log-pt-proposal", log_pt["proposal"]]
    return args


def reduction(eid):
    """The caption sentence on what experiment `eid` of this preset reduces against the paper preset
    (config/config.yaml): datasets and budgets (jspgfn.report.reductions); '' in the paper preset."""
    from jspgfn.registry import load_registry
    from jspgfn.report.reductions import reduction_note

    paper = yaml.safe_load(Path(workflow.basedir, "config", "config.yaml").read_text())
    return reduction_note(config, eid, paper, load_registry(workflow.basedir))
