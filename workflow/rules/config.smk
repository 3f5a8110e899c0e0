# Config loading and validation: the method registry's entries with the preset over them (jspgfn.registry),
# checked against the schema, the baselines' method.yaml and JSP-GFN's options. Functions only (no rules
# here); the helpers that rules use are in common.smk, job_arguments.smk and figure_specs.smk.
#
# A bad config stops the workflow before anything runs, with ONE line on stderr:
#   <config file>: <key.path>: <problem>
# and exit status 1. See docs/decisions.md ("Config validation").

import copy
import functools
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
        config_error(
            [], "empty config: expected a mapping with preset and experiments (and methods overlaying the registry)"
        )
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
        if config["train_group_size"] is not None:
            exp["train_group_size"] = config["train_group_size"]
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
    if method["recipe"] is not None:
        config_error(where + ["recipe"], "only methods of kind jspgfn have a recipe")
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
    if method["recipe"] is not None:
        from jspgfn.gflownet.recipes import recipe_options

        try:
            recipe_options(method["recipe"], 1, method["likelihood"])  # the options do not depend on d here
        except JspgfnError as exc:
            config_error(["methods", mid, "recipe"], str(exc))
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
