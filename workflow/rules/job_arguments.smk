# The arguments, inputs and resources of jobs, read from the validated config: the exact rule's time and
# memory, a method's conda environment, --param options, `jspgfn realdata` and `jspgfn sample --log-pt`
# options. Functions and tables only (no rules here).

import json
import math
from pathlib import Path


def exact_resources(wildcards):
    """(minutes, MB) for the exact rule: 30 min and 4 GB while exact_dp_cost.dp_cost estimates under a minute
    (d <= 16), beyond twice its estimate plus 30 min for the exact samples (d = 20: 94 min, 4 GB)."""
    from jspgfn.exact_dp_cost import dp_cost

    seconds, peak = dp_cost(experiment(wildcards)["data"]["d"])
    minutes = 30 if seconds < 60 else 30 + math.ceil(2 * seconds / 60)
    return minutes, max(4000, math.ceil(2 * peak / 2**20))


def method_env(wildcards):
    """The conda environment of a method for --use-conda: a baseline's (its method.yaml's `environment`,
    else the default baselines/shared/environment.yaml), the core's for JSP-GFN."""
    entry = method(wildcards)
    if entry["kind"] != "baseline":
        return str(Path(workflow.basedir, "workflow", "envs", "jspgfn.yaml"))
    return registry().specs[entry["name"]]["environment_file"]


def recipe_args(method):
    """`--recipe=NAME` of a JSP-GFN method with a recipe (one list item), else no item."""
    return [] if method.get("recipe") is None else [f"--recipe={method['recipe']}"]


def param_args(params):
    """--param=KEY=VALUE options (values as JSON, which the CLI parses as YAML), one list item each:
    the shell command quotes each with {params.extra:q}."""
    return [f"--param={k}={json.dumps(v)}" for k, v in sorted(params.items())]


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


def log_pt_args(wildcards):
    """`jspgfn sample` options estimating log P_T for the experiment's figures, or none."""
    log_pt = experiment(wildcards)["log_pt"]
    if not log_pt["enabled"]:
        return []
    args = ["--log-pt", "--beam-size", str(log_pt["beam_size"]), "--mc-samples", str(log_pt["mc_samples"])]
    if log_pt["proposal"] != "uniform":  # the default adds no option, so runs sampled before it stay valid
        args += ["--log-pt-proposal", log_pt["proposal"]]
    return args
