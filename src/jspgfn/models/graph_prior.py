"""Priors over DAGs. All three are modular in the number of edges:
log P(G) = log_edge_weight * |E(G)| + const, which is all the posterior needs.
"""

import dataclasses
import math

import jax.numpy as jnp

from jspgfn.errors import JspgfnError

GRAPH_PRIORS = ("uniform", "erdos_renyi", "edge")


@dataclasses.dataclass(frozen=True)
class GraphPrior:
    name: str
    log_edge_weight: float

    def log_prob(self, graph):
        """Unnormalised log P(G) for graph(s) [..., d, d] -> [...]."""
        return self.log_edge_weight * jnp.sum(graph, axis=(-2, -1))


def get_graph_prior(name, num_variables, expected_edges=None, beta=0.5):
    """Build a prior by name.

    uniform: every DAG equally likely.
    erdos_renyi: each edge present with p = expected_edges / (d (d - 1) / 2), default expected_edges = d.
    edge: P(G) proportional to beta ** |E| (beta < 1 favours sparse graphs).
    """
    if name == "uniform":
        return GraphPrior(name, 0.0)
    if name == "erdos_renyi":
        pairs = num_variables * (num_variables - 1) / 2
        expected = num_variables if expected_edges is None else expected_edges
        p = min(max(expected / pairs, 1e-6), 1 - 1e-6)
        return GraphPrior(name, math.log(p) - math.log1p(-p))
    if name == "edge":
        if beta <= 0:
            raise JspgfnError(f"edge prior needs beta > 0, got {beta}")
        return GraphPrior(name, math.log(beta))
    raise JspgfnError(f"unknown graph prior '{name}': choose one of {', '.join(GRAPH_PRIORS)}")
