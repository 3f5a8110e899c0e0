"""Baselines behind one call: `fit_baseline(name, dataset, model_name, seed, **params) -> PosteriorSamples`.

Each method is a module of this package exposing
  fit(dataset, model, seed, **params) -> PosteriorSamples   (model: a jspgfn.models likelihood model)
  CAPABILITIES = {"joint", "nonlinear", "dag_support", "discrete", "max_parents", "sampler",
                  "minibatch"}: True / False, None when unknown (max_parents: int or None).
Adding a baseline = one module + one entry in BASELINES. Modules are imported on demand, so a
baseline's heavy dependencies are only needed when it runs.
"""

import importlib
import inspect
import time

from jspgfn.errors import JspgfnError
from jspgfn.models import get_model
from jspgfn.provenance import provenance

BASELINES = {  # name -> module (imported only when that baseline runs)
    "exact": "jspgfn.baselines.exact",
    "b-pc": "jspgfn.baselines.b_pc",
    "b-ges": "jspgfn.baselines.b_ges",
    "mh-mc3": "jspgfn.baselines.mh_mc3",
    "gibbs-mc3": "jspgfn.baselines.gibbs_mc3",
    "dibs": "jspgfn.baselines.dibs",
    "dibs-mixture": "jspgfn.baselines.dibs_mixture",
}
CAPABILITY_KEYS = ("joint", "nonlinear", "dag_support", "discrete", "max_parents", "sampler", "minibatch")
MODEL_KWARGS = ("obs_var", "prior_mean", "prior_var", "hidden")  # params that configure the model, not the fit


def baseline_names():
    return tuple(sorted(BASELINES))


def get_baseline(name):
    """The module implementing baseline `name` (JspgfnError listing valid names if unknown)."""
    if name not in BASELINES:
        raise JspgfnError(f"unknown baseline '{name}': choose one of {', '.join(baseline_names())}")
    return importlib.import_module(BASELINES[name])


def _fit_defaults(fit):
    """{name: default} of the keyword hyper-parameters of a fit(dataset, model, seed, ...) function."""
    parameters = list(inspect.signature(fit).parameters.values())[3:]
    return {p.name: p.default for p in parameters if p.default is not inspect.Parameter.empty}


def fit_baseline(name, dataset, model_name, seed, **params):
    """Fit baseline `name` and return its PosteriorSamples.

    `params` are the method's hyper-parameters, plus optional model settings (obs_var, prior_mean,
    prior_var, hidden) passed to `get_model(model_name, ...)`. The metadata gets method, seed,
    wall_seconds (of fit), hyperparameters (defaults and overrides) and provenance.
    """
    module = get_baseline(name)
    model_kwargs = {key: params.pop(key) for key in MODEL_KWARGS if key in params}
    model = get_model(model_name, **model_kwargs)
    if model.name != "lingauss" and not module.CAPABILITIES["nonlinear"]:
        raise JspgfnError(f"baseline '{name}' supports only the linear Gaussian model (lingauss), not '{model_name}'")
    defaults = _fit_defaults(module.fit)
    unknown = sorted(set(params) - set(defaults))
    if unknown:
        raise JspgfnError(f"baseline '{name}' has no parameter {', '.join(unknown)}; "
                          f"valid: {', '.join(sorted(defaults) + list(MODEL_KWARGS))}")
    start = time.perf_counter()
    samples = module.fit(dataset, model, seed, **params)
    wall = time.perf_counter() - start
    samples.metadata.update({"method": name, "seed": seed, "hyperparameters": {**defaults, **params},
                             "provenance": provenance(), "dataset": dataset.source})
    samples.metadata.setdefault("wall_seconds", wall)
    samples.metadata.setdefault("model_kwargs", model.kwargs())
    return samples.validate(f"baseline {name}")
