"""Posterior features of a distribution over graphs (Friedman & Koller 2003;
paper appendix "Comparing JSP-GFN with the exact posterior against features").

From graphs [K, d, d] and optional weights [K] (normalised here; uniform by default):
  edge[i, j]   = P(i -> j)
  path[i, j]   = P(there is a directed path i ~> j of length >= 1)
  markov[i, j] = P(i is in the Markov blanket of j)
each a float64 [d, d] array. Diagonals are 0 for every DAG (no self-loops, no path i ~> i, a node
is not in its own blanket), so comparisons between features use `offdiagonal` only: the d
structural zeros would otherwise lower the RMSE and raise Pearson's r of any method for free.
"""

import numpy as np

from jspgfn.graphs import markov_blanket, transitive_closure


def _weights(graphs, weights):
    k = graphs.shape[0]
    if weights is None:
        return np.full(k, 1.0 / k)
    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape != (k,) or np.any(weights < 0) or weights.sum() <= 0:
        raise ValueError(f"weights must be {k} non-negative numbers with a positive sum")
    return weights / weights.sum()


def _expectation(indicators, weights):
    """indicators [K, d, d], weights [K] or None -> float64 [d, d] in [0, 1].

    The clip removes the ~1e-15 excess that summing 29,281 normalised weights can leave.
    """
    total = np.einsum("k,kij->ij", _weights(indicators, weights), indicators.astype(np.float64))
    return np.clip(total, 0.0, 1.0)


def edge_features(graphs, weights=None):
    """P(i -> j): graphs [K, d, d], weights [K] -> [d, d]."""
    return _expectation(np.asarray(graphs), weights)


def path_features(graphs, weights=None):
    """P(i ~> j) through the transitive closure: graphs [K, d, d], weights [K] -> [d, d]."""
    return _expectation(transitive_closure(graphs), weights)


def markov_features(graphs, weights=None):
    """P(i in MB(j)) (parent, child or co-parent): graphs [K, d, d], weights [K] -> [d, d]."""
    return _expectation(markov_blanket(graphs), weights)


def offdiagonal(matrix):
    """The d (d - 1) off-diagonal entries of a [d, d] array, row-major -> [d (d - 1)]."""
    matrix = np.asarray(matrix)
    return matrix[~np.eye(matrix.shape[0], dtype=bool)]
