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

import inspect

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


def get_model(name, **kwargs):
    """Likelihood model for a name, e.g. 'lingauss' or 'mlp-gauss' (combined names accepted)."""
    likelihood, _ = parse_model_name(name)
    model_class = LIKELIHOODS[likelihood]
    settings = inspect.signature(model_class).parameters
    unknown = sorted(set(kwargs) - set(settings))
    if unknown:  # a setting of another model (e.g. obs_var for mlp-categorical)
        raise JspgfnError(
            f"model '{likelihood}' has no setting {', '.join(unknown)} (its settings: {', '.join(settings)})"
        )
    return model_class(**kwargs)


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
    "model_from_metadata",
    "parse_model_name",
    "log_reward",
    "LIKELIHOODS",
    "FAMILIES",
]
