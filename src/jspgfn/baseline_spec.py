"""Baseline specifications: every folder of baselines/ that holds a `method.yaml` is one method.

The folder's name is the method's id (`jspgfn baseline ID`). `method.yaml` says (baselines/README.md):
  display_name, citation, description   how tables and users name and cite it
  likelihoods     the likelihood models it accepts (jspgfn.models.LIKELIHOODS names)
  requires        {python module: distribution} that its code imports
  install         one line saying how to install what it requires
  environment     its own conda environment for `snakemake --use-conda` (path relative to the folder);
                  absent: the default one, baselines/shared/environment.yaml (DEFAULT_ENVIRONMENT)
  capabilities    declared capabilities for Table A.1 (CAPABILITY_KEYS: true / false / null)
  parameters      {name: JSON schema of the value, with `default` and `description`}
  examples        small parameter sets that run in seconds (the tests run each one)
  benchmark       its entry in the method registry (budgets per preset, order, cost, the paper's
                  numbers): jspgfn.registry reads it

It lives in the core, which reads the method folders as files (the registry, `jspgfn baseline --list`,
the workflow's config checks) without importing jspgfn-baselines; that package re-exports it as
jspgfn_baselines.spec. It needs only PyYAML and jsonschema.
"""

from pathlib import Path

import jsonschema
import yaml

CAPABILITY_KEYS = ("joint", "nonlinear", "dag_support", "discrete", "max_parents", "sampler", "minibatch")

# Settings of the likelihood model that every baseline accepts besides its own parameters.
MODEL_PARAMETERS = {
    "obs_var": {"type": "number", "exclusiveMinimum": 0, "description": "noise variance of every CPD"},
    "prior_mean": {"type": "number", "description": "mean of the N(mean, var) prior on active parameters"},
    "prior_var": {"type": "number", "exclusiveMinimum": 0, "description": "variance of that prior"},
    "hidden": {"type": "integer", "minimum": 1, "description": "hidden units of the MLP model (mlp-gauss)"},
}

SPEC_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": [
        "display_name",
        "citation",
        "description",
        "likelihoods",
        "capabilities",
        "parameters",
        "examples",
    ],
    "properties": {
        "display_name": {"type": "string", "minLength": 1},
        "citation": {"type": "string", "minLength": 1},
        "description": {"type": "string", "minLength": 1},
        "likelihoods": {
            "type": "array",
            "minItems": 1,
            "items": {"enum": ["lingauss", "mlp-gauss", "mlp-categorical", "mlp-zinormal"]},
        },
        "requires": {"type": "object", "additionalProperties": {"type": "string"}},
        "install": {"type": "string"},
        "environment": {"type": "string", "pattern": r"\.ya?ml$"},
        "capabilities": {
            "type": "object",
            "additionalProperties": False,
            "required": list(CAPABILITY_KEYS),
            "properties": {key: {"type": ["boolean", "null"]} for key in CAPABILITY_KEYS},
        },
        "parameters": {
            "type": "object",
            "propertyNames": {"pattern": "^[a-z][a-z0-9_]*$"},
            "additionalProperties": {"type": "object", "required": ["default", "description"]},
        },
        "examples": {"type": "array", "minItems": 1, "items": {"type": "object"}},
        "benchmark": {"type": "object"},
    },
}
# The conda environment of a method folder without an `environment` of its own (relative to baselines/).
DEFAULT_ENVIRONMENT = "shared/environment.yaml"


class SpecError(Exception):
    """A method.yaml is malformed, or parameters do not fit it. The message is one line."""


def method_folders(root):
    """{method id: folder} of every sub-folder of `root` holding a method.yaml, sorted by id."""
    return {path.parent.name: path.parent for path in sorted(Path(root).glob("*/method.yaml"))}


def load_spec(folder):
    """The validated method.yaml of a method folder, with `id`, `folder` and `environment_file` (the
    absolute path of its conda environment: its own, or the default one) added."""
    folder = Path(folder)
    path = folder / "method.yaml"
    try:
        spec = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise SpecError(f"{path}: cannot be read ({' '.join(str(exc).split())})") from None
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(SPEC_SCHEMA).iter_errors(spec))
    if error is not None:
        where = ".".join(str(item) for item in error.absolute_path)
        raise SpecError(f"{path}: {where + ': ' if where else ''}{' '.join(error.message.split())}")
    environment = folder / spec["environment"] if "environment" in spec else folder.parent / DEFAULT_ENVIRONMENT
    spec = dict(spec, id=folder.name, folder=str(folder), environment_file=str(environment.resolve()))
    for name, schema in spec["parameters"].items():
        if check_value(name, schema, schema["default"]) is not None:
            raise SpecError(f"{path}: parameters.{name}: the default {schema['default']!r} does not fit its schema")
    for i, example in enumerate(spec["examples"]):
        problem = check_params(spec, example)
        if problem is not None:
            raise SpecError(f"{path}: examples.{i}.{problem[0]}: {problem[1]}")
    return spec


def load_specs(root):
    """{method id: spec} of every method folder under `root`."""
    return {mid: load_spec(folder) for mid, folder in method_folders(root).items()}


def check_value(name, schema, value):
    """None if `value` fits the JSON schema of parameter `name`, else the problem (one line)."""
    schema = {key: item for key, item in schema.items() if key not in ("default", "description")}
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(value))
    return None if error is None else " ".join(error.message.split())


def check_params(spec, params):
    """None if `params` fit the method's parameters, else (parameter name, problem)."""
    known = {**spec["parameters"], **MODEL_PARAMETERS}
    for name, value in params.items():
        if name not in known:
            return name, f"unknown parameter of baseline '{spec['id']}' (valid: {', '.join(sorted(known))})"
        problem = check_value(name, known[name], value)
        if problem is not None:
            return name, problem
    return None


def defaults(spec):
    """{parameter: default} of a method's own parameters."""
    return {name: schema["default"] for name, schema in spec["parameters"].items()}
