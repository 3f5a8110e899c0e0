"""Likelihood models P(D | G, theta) with priors P(theta | G), and graph priors P(G).

Every likelihood model exposes the same pure functions (see `base.LikelihoodModel`). This module is
the one registry of names:
  likelihoods  LIKELIHOODS: `lingauss` (linear Gaussian CPDs), `mlp-gauss` (an MLP per node),
               `mlp-zinormal` (zero-inflated Normal, MLP mean: gene expression),
               `mlp-categorical` (softmax MLP on one-hot parents: discretised flow cytometry)
  families     FAMILIES: JSP-GFN's posterior family for P(theta | G): `diag` or `full` covariance
The combined names of earlier versions (`lingauss-diag`, `lingauss-full`, and `linear`, `mlp`) are
still accepted wherever a model name is (`parse_model_name`), so existing command lines keep working.
"""

import dataclasses
import math
import numbers

from jspgfn.errors import JspgfnError
from jspgfn.models.base import LikelihoodModel, log_reward
from jspgfn.models.categorical import MLPCategorical
from jspgfn.models.graph_prior import GraphPrior, get_graph_prior
from jspgfn.models.lingauss import LinearGaussian
from jspgfn.models.mlp import MLPGaussian
from jspgfn.models.zinormal import ZINormalMLP

LIKELIHOODS = {
    "lingauss": LinearGaussian,
    "mlp-gauss": MLPGaussian,
    "mlp-zinormal": ZINormalMLP,
    "mlp-categorical": MLPCategorical,
}
FAMILIES = ("diag", "full")
# Earlier names: name -> (likelihood, family or None when the name does not say).
COMBINED_NAMES = {
    "lingauss-diag": ("lingauss", "diag"),
    "lingauss-full": ("lingauss", "full"),
    "linear": ("lingauss", None),
    "mlp": ("mlp-gauss", None),
}


def parse_model_name(name):
    """(likelihood, family or None) of a model name: 'lingauss', 'mlp-gauss' or a combined one."""
    if name in LIKELIHOODS:
        return name, None
    if name in COMBINED_NAMES:
        return COMBINED_NAMES[name]
    valid = ", ".join(list(LIKELIHOODS) + list(COMBINED_NAMES))
    raise JspgfnError(f"unknown model '{name}': choose one of {valid}")


# What a setting's value must be, besides its type (that of its default): (test, what).
_SETTING_RANGES = {
    "obs_var": (lambda v: v > 0, "> 0"),
    "prior_var": (lambda v: v > 0, "> 0"),
    "hidden": (lambda v: v >= 1, ">= 1"),
    "num_levels": (lambda v: v >= 2, ">= 2"),
}


def model_settings(likelihood):
    """{setting: default} of a likelihood's model: what `get_model` takes (e.g. obs_var, prior_var, hidden)."""
    return {f.name: f.default for f in dataclasses.fields(LIKELIHOODS[likelihood]) if f.name != "name"}


# Every setting of some likelihood model: `jspgfn train --param` tells them from training options by name.
SETTING_NAMES = frozenset(name for likelihood in LIKELIHOODS for name in model_settings(likelihood))


def split_settings(options):
    """(model settings, other options) of a {name: value} dict, told apart by name (SETTING_NAMES): what
    `jspgfn train --set` and `jspgfn.fit(**options)` pass to the model and to the training."""
    settings = {key: value for key, value in options.items() if key in SETTING_NAMES}
    return settings, {key: value for key, value in options.items() if key not in SETTING_NAMES}


def _checked_setting(likelihood, key, value, default):
    """`value` as setting `key` takes it (an int, or a float from any finite real); JspgfnError if not."""
    problem = f"model '{likelihood}' setting {key}={value!r}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise JspgfnError(f"{problem}: not a number")
    if isinstance(default, int) and not isinstance(value, numbers.Integral):
        raise JspgfnError(f"{problem}: not an integer")
    if not math.isfinite(value):
        raise JspgfnError(f"{problem}: not a finite number")
    test, what = _SETTING_RANGES.get(key, (lambda v: True, ""))
    if not test(value):
        raise JspgfnError(f"{problem}: must be {what}")
    return type(default)(value)


def get_model(name, /, **kwargs):
    """Likelihood model for a name, e.g. 'lingauss' or 'mlp-gauss' (combined names accepted), with settings
    `kwargs` (model_settings); JspgfnError (one line) for a setting it does not have or a value out of range."""
    likelihood, _ = parse_model_name(name)
    settings = model_settings(likelihood)
    unknown = sorted(set(kwargs) - set(settings))
    if unknown:  # a setting of another model (e.g. obs_var for mlp-categorical)
        raise JspgfnError(
            f"model '{likelihood}' has no setting {', '.join(unknown)} (its settings: {', '.join(settings)})"
        )
    values = {key: _checked_setting(likelihood, key, value, settings[key]) for key, value in kwargs.items()}
    return LIKELIHOODS[likelihood](**values)


def model_from_metadata(metadata):
    """Rebuild the likelihood model recorded in a PosteriorSamples metadata dict."""
    return get_model(metadata["model"], **metadata.get("model_kwargs", {}))


__all__ = [
    "LikelihoodModel",
    "LinearGaussian",
    "MLPGaussian",
    "ZINormalMLP",
    "MLPCategorical",
    "GraphPrior",
    "get_graph_prior",
    "get_model",
    "model_settings",
    "SETTING_NAMES",
    "split_settings",
    "model_from_metadata",
    "parse_model_name",
    "log_reward",
    "LIKELIHOODS",
    "FAMILIES",
]
