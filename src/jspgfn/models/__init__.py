"""Likelihood models P(D | G, theta) with priors P(theta | G), and graph priors P(G).

Every likelihood model exposes the same pure functions (see `base.LikelihoodModel`);
`get_model(name)` builds one from its command-line name.
"""

from jspgfn.models.base import LikelihoodModel, log_reward
from jspgfn.models.graph_prior import GraphPrior, get_graph_prior
from jspgfn.models.lingauss import LinearGaussian
from jspgfn.models.mlp import MLPGaussian

# Command-line / config names. The "-diag"/"-full" suffix names the GFlowNet's
# posterior family for theta; the likelihood is the same linear Gaussian.
MODEL_NAMES = ("lingauss-diag", "lingauss-full", "mlp-gauss")


def get_model(name, **kwargs):
    """Likelihood model for a command-line name, e.g. 'lingauss-diag' or 'mlp-gauss'."""
    from jspgfn.errors import JspgfnError

    if name in ("lingauss", "lingauss-diag", "lingauss-full", "linear"):
        return LinearGaussian(**kwargs)
    if name in ("mlp-gauss", "mlp"):
        return MLPGaussian(**kwargs)
    raise JspgfnError(f"unknown model '{name}': choose one of {', '.join(MODEL_NAMES)}")


def model_from_metadata(metadata):
    """Rebuild the likelihood model recorded in a PosteriorSamples metadata dict."""
    return get_model(metadata["model"], **metadata.get("model_kwargs", {}))


__all__ = ["LikelihoodModel", "LinearGaussian", "MLPGaussian", "GraphPrior", "get_graph_prior",
           "get_model", "model_from_metadata", "log_reward", "MODEL_NAMES"]
