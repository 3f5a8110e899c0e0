"""jspgfn-baselines: the competitor methods of JSP-GFN, one folder each, behind one call.

    fit_baseline(name, dataset, likelihood, seed, **params) -> jspgfn.samples.PosteriorSamples

A method is a folder of this package named by its id, holding `method.yaml` (its specification:
see spec.py and README.md) and `method.py`, whose `fit(dataset, model, seed, **params)` gets
every parameter of the spec (defaults filled in) and returns PosteriorSamples. Methods are found
from the folders; a method's code, and so its heavy dependencies, is imported only when it runs.
"""

import importlib
import importlib.util
import sys
import time

from jspgfn.errors import JspgfnError
from jspgfn.models import get_model
from jspgfn.provenance import provenance
from jspgfn_baselines.spec import MODEL_PARAMETERS, SpecError, check_params, defaults, load_specs

_SPECS = None


def specs():
    """{method id: spec} of every method folder (read once per process)."""
    global _SPECS
    if _SPECS is None:
        try:
            _SPECS = load_specs()
        except SpecError as exc:
            raise JspgfnError(str(exc)) from None
    return _SPECS


def baseline_names():
    return tuple(specs())


def get_spec(name):
    """The spec of baseline `name` (JspgfnError listing the valid names if unknown)."""
    if name not in specs():
        raise JspgfnError(f"unknown baseline '{name}': choose one of {', '.join(baseline_names())}")
    return specs()[name]


def load_method(name):
    """The `method.py` module of baseline `name`, after checking that what it requires is installed."""
    spec = get_spec(name)
    for module, distribution in spec.get("requires", {}).items():
        if importlib.util.find_spec(module) is None:
            raise JspgfnError(
                f"baseline '{name}' needs {distribution} (Python module '{module}'), which is not "
                f"installed: {spec.get('install') or 'pip install ' + distribution}"
            )
    module_name = f"jspgfn_baselines.methods.{name.replace('-', '_')}"
    if module_name not in sys.modules:
        loader_spec = importlib.util.spec_from_file_location(module_name, f"{spec['folder']}/method.py")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[module_name] = module
        loader_spec.loader.exec_module(module)
    return sys.modules[module_name]


def fit_baseline(name, dataset, likelihood, seed, **params):
    """Fit baseline `name` and return its PosteriorSamples.

    `params` are the method's parameters (method.yaml) and optional model settings (obs_var,
    prior_mean, prior_var, hidden) passed to `get_model(likelihood, ...)`. The metadata gets method,
    display name, seed, variable_names (the dataset's), wall_seconds (of fit), hyperparameters (defaults
    and overrides), provenance.
    """
    spec = get_spec(name)
    problem = check_params(spec, params)
    if problem is not None:
        raise JspgfnError(f"baseline '{name}': parameter {problem[0]}: {problem[1]}")
    model_kwargs = {key: params.pop(key) for key in MODEL_PARAMETERS if key in params}
    model = get_model(likelihood, **model_kwargs)
    if model.name not in spec["likelihoods"]:
        raise JspgfnError(
            f"baseline '{name}' supports only the likelihood model(s) "
            f"{', '.join(spec['likelihoods'])}, not '{likelihood}'"
        )
    module = load_method(name)
    hyperparameters = {**defaults(spec), **params}
    start = time.perf_counter()
    samples = module.fit(dataset, model, seed, **hyperparameters)
    wall = time.perf_counter() - start
    samples.metadata.update(
        {
            "method": name,
            "display_name": spec["display_name"],
            "seed": seed,
            "hyperparameters": hyperparameters,
            "provenance": provenance(["jspgfn-baselines", *spec.get("requires", {}).values()]),
            "dataset": dataset.source,
            "variable_names": list(dataset.names),
            "dataset_sha256": dataset.fingerprint(),
        }
    )
    samples.metadata.setdefault("wall_seconds", wall)
    samples.metadata.setdefault("model_kwargs", model.kwargs())
    return samples.validate(f"baseline {name}")
