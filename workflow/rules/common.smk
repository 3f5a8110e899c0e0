# Config loading, validation and the helpers that rules use. Functions only (no rules here).
#
# A bad config stops the workflow before anything runs, with ONE line on stderr:
#   <config file>: <key.path>: <problem>
# and exit status 1. See docs/decisions.md ("Config validation").

import copy
import functools
import json
import math
import os
import re
import sys
from pathlib import Path

import jsonschema
import yaml

SCHEMA_FILE = Path(workflow.basedir, "workflow", "schemas", "config.schema.yaml")


def _display_path(path):
    path = Path(path)
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)
    return str(path) if rel.startswith("..") else rel


def _config_sources():
    """(files that make up the config, the --config overrides)."""
    files = [Path(f) for f in workflow.config_settings.configfiles]
    return files or [Path(workflow.basedir, "config", "config.yaml")], dict(workflow.config_settings.config)


def _blame(path_items):
    """Name the input that sets `path_items` (the last one wins), for the error message."""
    files, overrides = _config_sources()
    if path_items and path_items[0] in overrides:
        return "--config"
    for file in reversed(files):
        try:
            node = yaml.safe_load(Path(file).read_text())
        except (OSError, yaml.YAMLError):
            continue
        found = True
        for key in path_items:
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and isinstance(key, int) and key < len(node):
                node = node[key]
            else:
                found = False
                break
        if found:
            return _display_path(file)
    if len(path_items) > 1 and path_items[0] == "methods" and path_items[1] in registry():
        return _display_path(registry().sources[path_items[1]])  # set by the method registry
    return _display_path(files[-1])


def config_error(path_items, problem):
    """Print `<file>: <key.path>: <problem>` on one line and stop (exit status 1)."""
    parts = [_blame(list(path_items)), ".".join(str(item) for item in path_items), problem]
    print(": ".join(part for part in parts if part), file=sys.stderr, flush=True)
    sys.exit(1)


def _validator_with_defaults(schema):
    """A jsonschema validator that also fills in every `default` of the schema, at any depth."""
    base = jsonschema.validators.validator_for(schema)
    check_properties = base.VALIDATORS["properties"]

    def properties(validator, props, instance, schema_):
        if isinstance(instance, dict):
            for name, sub in props.items():
                if "default" in sub and name not in instance:
                    instance[name] = copy.deepcopy(sub["default"])
        yield from check_properties(validator, props, instance, schema_)

    return jsonschema.validators.extend(base, {"properties": properties})(schema)


# The characters of the schema's $defs.path pattern: a folder name (results, figures, jax_cache) reaches
# shell commands (always quoted with :q) and Snakemake's file patterns ({ } are wildcards), so it is
# limited to characters that mean nothing to either.
PATH_CHARACTERS = re.compile(r"[\w ./+,=@%-]")
PATH_ALLOWED = "use letters, digits, spaces and - _ . / + , = @ %"


def _path_problem(value):
    """A readable one-line reason why `value` does not match the schema's $defs.path pattern."""
    bad = dict.fromkeys(ch for ch in value if not PATH_CHARACTERS.fullmatch(ch))
    if bad:
        shown = " ".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in bad)
        return f"{value!r} has characters not allowed in a path: {shown}; {PATH_ALLOWED}"
    if value.startswith("-"):
        return f"{value!r} starts with '-', which a command would read as an option"
    return f"{value!r} is not a valid path; {PATH_ALLOWED}"


def load_config(config):
    """Validate the snakemake `config` in place (defaults filled), then cross-check ids."""
    if not config:
        config_error([], "empty config: expected a mapping with preset, methods and experiments")
    from jspgfn.registry import resolve_methods

    # Every method of the registry for this preset, with the config's own `methods` entries over them.
    if isinstance(config.get("methods", {}), dict):
        config["methods"] = resolve_methods(config, registry())
    schema = yaml.safe_load(SCHEMA_FILE.read_text())
    validator = _validator_with_defaults(schema)
    # Fill defaults first (a full pass), then report the most relevant error.
    errors = list(validator.iter_errors(config))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        if error.validator == "pattern" and error.schema is schema["$defs"]["path"]:
            problem = _path_problem(error.instance)
        else:
            problem = " ".join(error.message.split())
        config_error(list(error.absolute_path), problem)

    methods = config["methods"]
    for mid, method in methods.items():
        if method["preset"] is None:
            method["preset"] = config["preset"] if config["preset"] != "custom" else "quick"
        check = _check_baseline if method["kind"] == "baseline" else _check_jspgfn
        check(mid, method)
    if not config["experiments"]:
        config_error(["experiments"], "no experiment defined")
    for eid, exp in config["experiments"].items():
        for i, mid in enumerate(exp["methods"]):
            if mid not in methods:
                known = ", ".join(sorted(methods)) or "none"
                config_error(
                    ["experiments", eid, "methods", i], f"unknown method '{mid}' (defined in methods: {known})"
                )
        source = exp["data"].get("source")
        if source == "gene_expression" and exp["data"].get("path") is None:
            config_error(["experiments", eid, "data", "path"], "data source gene_expression needs the path of a table")
        if exp["exact"]["enabled"] and source is not None:
            config_error(
                ["experiments", eid, "exact", "enabled"], f"the exact posterior needs synthetic data, not {source}"
            )
        if exp["exact"]["enabled"] and (exp["data"]["model"] != "linear" or exp["data"]["d"] > 20):
            config_error(
                ["experiments", eid, "exact", "enabled"], "the exact posterior needs data.model linear and data.d <= 20"
            )
        for kind in ("exact_edges", "exact_graphs"):
            if kind in exp["figures"].values() and not exp["exact"]["enabled"]:
                config_error(["experiments", eid, "figures"], f"the {kind} figure needs exact.enabled")
        first = exp["exact"]["datasets"]
        if first is not None and not exp["exact"]["enabled"]:
            config_error(["experiments", eid, "exact", "datasets"], "needs exact.enabled: true")
        if first is not None and first > exp["num_datasets"]:
            config_error(
                ["experiments", eid, "exact", "datasets"],
                f"{first} datasets with the exact posterior, but the experiment has num_datasets {exp['num_datasets']}",
            )
        if not exp["exact"]["enabled"] and not exp["methods"]:
            config_error(["experiments", eid, "methods"], "no method and no exact posterior: nothing to run")
        shown = {}
        for i, mid in enumerate(exp["methods"]):
            name = methods[mid]["display_name"]
            if name in shown:
                config_error(
                    ["experiments", eid, "methods", i],
                    f"methods '{shown[name]}' and '{mid}' are both shown as '{name}': give one a display_name",
                )
            shown[name] = mid
        if config["max_datasets"] is not None:
            exp["num_datasets"] = min(exp["num_datasets"], config["max_datasets"])
    _check_figures(config)
    # Every entry was checked; the config keeps (and results/{preset}/config.yaml records) the ones it runs.
    used = {mid for exp in config["experiments"].values() for mid in exp["methods"]}
    config["methods"] = {mid: entry for mid, entry in methods.items() if mid in used}
    config["experiments"] = config.pop("experiments")  # recorded after the methods, as a preset lists them
    return config


# Stems that the small-graph experiment writes (figures.smk); an experiment's `figures` may not reuse them.
SMALL_GRAPH_STEMS = ("table_a1", "table_d1", "figure_2a", "figure_2b", "figure_d1")


def _check_figures(config):
    """Each experiment figure stem is written once, and a log_pt figure has log P_T estimates to draw."""
    owner = dict.fromkeys(SMALL_GRAPH_STEMS, "the small-graph figures")
    for eid, exp in config["experiments"].items():
        for stem, kind in exp["figures"].items():
            where = ["experiments", eid, "figures", stem]
            if stem in owner:
                config_error(where, f"'{stem}' is already written by {owner[stem]}: choose another name")
            owner[stem] = f"experiment '{eid}'"
            if kind in ("log_pt", "log_pt_slopes"):
                if not exp["log_pt"]["enabled"]:
                    config_error(where, f"a {kind} figure needs log_pt.enabled: true in experiment '{eid}'")
                if not any(config["methods"][m]["kind"] == "jspgfn" for m in exp["methods"]):
                    config_error(where, f"a {kind} figure needs a method of kind jspgfn in experiment '{eid}'")


@functools.cache
def registry():
    """The method registry of this checkout (jspgfn.registry: config/methods.yaml and the folders of
    baselines/, read as files); a malformed file stops the workflow with one line naming it."""
    from jspgfn.registry import RegistryError, load_registry

    try:
        return load_registry(workflow.basedir)
    except RegistryError as exc:
        print(exc, file=sys.stderr, flush=True)
        sys.exit(1)


def registry_files():
    """The files of the method registry (input of the rules that read it: `jspgfn report table-d1`)."""
    from jspgfn.registry import files

    return [_display_path(path) for path in files(registry())]


def _check_baseline(mid, method):
    """A baseline's name, likelihood and parameters against its method.yaml; fill its display name."""
    from jspgfn.baseline_spec import check_params

    specs = registry().specs
    where = ["methods", mid]
    if method["family"] is not None:
        config_error(where + ["family"], "only methods of kind jspgfn have a posterior family")
    if method["name"] is None:
        method["name"] = mid
    else:
        where = where + ["name"]
    if method["name"] not in specs:
        config_error(where, f"unknown baseline '{method['name']}' (baselines/ has: {', '.join(specs)})")
    spec = specs[method["name"]]
    if method["likelihood"] not in spec["likelihoods"]:
        config_error(
            ["methods", mid, "likelihood"],
            f"baseline '{spec['id']}' supports only {', '.join(spec['likelihoods'])}, not '{method['likelihood']}'",
        )
    problem = check_params(spec, method["params"])
    if problem is not None:
        config_error(["methods", mid, "params", problem[0]], problem[1])
    method["display_name"] = method["display_name"] or spec["display_name"]


def _check_jspgfn(mid, method):
    """JSP-GFN's params against TrainConfig (training options) and its likelihood's settings (obs_var,
    prior_var, hidden, ...: jspgfn.models.SETTING_NAMES); fill its family and display name."""
    from jspgfn.errors import JspgfnError
    from jspgfn.gflownet.presets import option_problem
    from jspgfn.models import SETTING_NAMES, get_model

    if method["name"] is not None:
        config_error(["methods", mid, "name"], "only methods of kind baseline have a name")
    for key, value in method["params"].items():
        if key in SETTING_NAMES:
            try:
                get_model(method["likelihood"], **{key: value})
            except JspgfnError as exc:
                config_error(["methods", mid, "params", key], str(exc))
            continue
        problem = option_problem(key, value)
        if problem is not None:
            config_error(["methods", mid, "params", key], problem)
    method["family"] = method["family"] or "diag"
    method["display_name"] = method["display_name"] or f"JSP-GFN ({method['family']})"


# ----------------------------------------------------------------- helpers used by the rules


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
