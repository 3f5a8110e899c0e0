"""Method specifications (method.yaml): the core's jspgfn.baseline_spec, with this folder as the default
root. See that module and README.md for what a method.yaml holds."""

from pathlib import Path

from jspgfn import baseline_spec
from jspgfn.baseline_spec import (  # noqa: F401  (the names this module has always offered)
    CAPABILITY_KEYS,
    DEFAULT_ENVIRONMENT,
    MODEL_PARAMETERS,
    SPEC_SCHEMA,
    SpecError,
    check_params,
    check_value,
    defaults,
    load_spec,
)

ROOT = Path(__file__).resolve().parent


def method_folders(root=ROOT):
    """{method id: folder} of every sub-folder of `root` holding a method.yaml, sorted by id."""
    return baseline_spec.method_folders(root)


def load_specs(root=ROOT):
    """{method id: spec} of every method folder under `root`."""
    return baseline_spec.load_specs(root)
