"""jspgfn: joint posterior over Bayesian network structure and parameters with a GFlowNet."""

__version__ = "0.1.0"
