# Config loading, validation and the helpers that rules use. Functions only (no rules here).
#
# A bad config stops the workflow before anything runs, with ONE line on stderr:
#   <config file>: <key.path>: <problem>
# and exit status 1. See docs/decisions.md ("Config validation").

import copy
import json
import os
import re
import shlex
import sys
from pathlib import Path

import jsonschema
import yaml

SCHEMA_FILE = Path(workflow.basedir, "workflow", "schemas", "config.schema.yaml")
JSPGFN_RULES = Path(workflow.basedir, "workflow", "rules", "jspgfn.smk")


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


def load_config(config):
    """Validate the snakemake `config` in place (defaults filled), then cross-check ids."""
    if not config:
        config_error([], "empty config: expected a mapping with preset, methods and experiments")
    schema = yaml.safe_load(SCHEMA_FILE.read_text())
    validator = _validator_with_defaults(schema)
    # Fill defaults first (a full pass), then report the most relevant error.
    errors = list(validator.iter_errors(config))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        problem = " ".join(error.message.split())
        config_error(list(error.absolute_path), problem)

    methods = config["methods"]
    for mid, method in methods.items():
        if method["name"] is None:
            method["name"] = mid
        if method["preset"] is None:
            method["preset"] = config["preset"] if config["preset"] != "custom" else "quick"
        if method["kind"] == "jspgfn" and not JSPGFN_RULES.exists():
            config_error(["methods", mid, "kind"], "'jspgfn' needs workflow/rules/jspgfn.smk, which is not there yet")
    if not config["experiments"]:
        config_error(["experiments"], "no experiment defined")
    for eid, exp in config["experiments"].items():
        for i, mid in enumerate(exp["methods"]):
            if mid not in methods:
                known = ", ".join(sorted(methods)) or "none"
                config_error(["experiments", eid, "methods", i], f"unknown method '{mid}' (defined in methods: {known})")
        if exp["exact"]["enabled"] and (exp["data"]["model"] != "linear" or exp["data"]["d"] > 5):
            config_error(["experiments", eid, "exact", "enabled"],
                         "the exact posterior needs data.model linear and data.d <= 5")
        if not exp["exact"]["enabled"] and not exp["methods"]:
            config_error(["experiments", eid, "methods"], "no method and no exact posterior: nothing to run")
    return config


# ----------------------------------------------------------------- helpers used by the rules

def experiment(wildcards):
    return config["experiments"][wildcards.experiment]


def method(wildcards):
    return config["methods"][wildcards.method]


def dataset_ids(eid):
    exp = config["experiments"][eid]
    return [str(exp["first_seed"] + i) for i in range(exp["num_datasets"])]


def method_ids(kind):
    """Ids of the methods of one kind that some experiment uses."""
    used = {m for exp in config["experiments"].values() for m in exp["methods"]}
    return sorted(m for m in used if config["methods"][m]["kind"] == kind)


def id_regex(ids):
    """Wildcard constraint matching exactly these ids (matches nothing when empty)."""
    return "|".join(re.escape(str(i)) for i in ids) if ids else "(?!x)x"


def param_args(params):
    """--param KEY=VALUE options (values as JSON, which the CLI parses as YAML)."""
    return " ".join(shlex.quote(f"--param={k}={json.dumps(v)}") for k, v in sorted(params.items()))


def experiment_metrics(eid):
    """Every metrics.json that results/{preset}/{eid}/metrics.csv aggregates."""
    exp = config["experiments"][eid]
    return expand(
        f"{RESULTS}/{eid}/metrics/{{method}}/{{dataset}}.json", method=exp["methods"], dataset=dataset_ids(eid)
    )


# ----------------------------------------------------------------- tables and figures (figures.smk)

def scatter_methods():
    """Methods shown against the exact posterior: JSP-GFN when the config runs it, else every method."""
    methods = [m for m in config["experiments"][config["small_graphs"]]["methods"] if m != "exact"]
    ours = [m for m in methods if config["methods"][m]["kind"] == "jspgfn"]
    return ours or methods


def figure_targets():
    """Tables and figures of the small-graph experiment, when the config runs it with the exact posterior."""
    small = config["experiments"].get(config["small_graphs"])
    if small is None or not small["exact"]["enabled"]:
        return []
    stems = ["table_a1.pdf", "table_d1.pdf", "figure_2a.pdf", "figure_2b.pdf", "figure_d1.pdf"]
    return [f"{config['figures']}/{stem}" for stem in stems]
