"""jspgfn: joint posterior over Bayesian network structure and parameters with a GFlowNet.

    run = jspgfn.fit(data, model="lingauss", preset="quick", seed=0)   # data: DataFrame, array [N, d] or path
    posterior = run.sample(1000)                                       # jspgfn.Posterior
    posterior.edge_marginals(), posterior.top_graphs(5), posterior.theta_summary()
    jspgfn.baseline("b-ges", data), jspgfn.Posterior.load("samples.npz"), jspgfn.Run("run_folder")

These names are imported on first use (api.py, posterior.py): `import jspgfn` itself stays light.
"""

import importlib

__version__ = "0.1.0"

_LAZY = {"fit": "jspgfn.api", "baseline": "jspgfn.api", "Run": "jspgfn.api", "Posterior": "jspgfn.posterior"}
__all__ = ["__version__", *_LAZY]


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'jspgfn' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
