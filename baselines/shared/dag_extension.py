"""Random consistent DAG extensions of partially directed graphs (Dor and Tarsi, 1992).

A PDAG is given as two arrays: `directed` [d, d] with directed[i, j] = 1 for i -> j,
and `undirected` [d, d], symmetric, 1 for i - j. A consistent extension orients
every undirected edge so that the result is acyclic and has exactly the
v-structures (unshielded colliders) of the PDAG. causal-learn's own pdag2dag is
deterministic and loops forever when no extension exists; this one draws among
valid sinks at random and returns None when none exists.
"""

import numpy as np


def from_causallearn(matrix):
    """causal-learn's endpoint matrix -> (directed, undirected) uint8 [d, d].

    Encoding: G[j, i] = 1 and G[i, j] = -1 means i -> j; both -1 means i - j;
    both 1 (a PC orientation conflict, i <-> j) is treated as undirected.
    """
    g = np.asarray(matrix)
    directed = ((g.T == 1) & (g == -1)).astype(np.uint8)
    undirected = (((g == -1) & (g.T == -1)) | ((g == 1) & (g.T == 1))).astype(np.uint8)
    np.fill_diagonal(undirected, 0)
    return directed, undirected


def random_dag_extension(directed, undirected, rng):
    """A uniformly random choice at each step of Dor-Tarsi; None if not extendable.

    Args:
      directed: [d, d] 0/1, directed[i, j] = 1 for i -> j.
      undirected: [d, d] 0/1 symmetric.
      rng: numpy Generator.
    Returns:
      uint8 [d, d] DAG, or None when the PDAG has no consistent extension.
    """
    directed = np.asarray(directed, dtype=bool).copy()
    undirected = np.asarray(undirected, dtype=bool).copy()
    d = directed.shape[0]
    result = directed.copy()
    remaining = np.ones(d, dtype=bool)
    while remaining.any():
        candidates = []
        for x in np.nonzero(remaining)[0]:
            if directed[x, remaining].any():  # x must be a sink among the remaining directed edges
                continue
            neighbours = np.nonzero(undirected[x] & remaining)[0]
            adjacent = np.nonzero((directed[:, x] | directed[x, :] | undirected[x]) & remaining)[0]
            # Every undirected neighbour y of x must be adjacent to all other nodes adjacent to x.
            if all(_adjacent(directed, undirected, y, z) for y in neighbours for z in adjacent if z != y):
                candidates.append(x)
        if not candidates:
            return None
        x = candidates[rng.integers(len(candidates))]
        for y in np.nonzero(undirected[x] & remaining)[0]:
            result[y, x] = True  # orient y -> x
        undirected[x, :] = undirected[:, x] = False
        directed[x, :] = directed[:, x] = False
        remaining[x] = False
    return result.astype(np.uint8)


def _adjacent(directed, undirected, a, b):
    return bool(directed[a, b] or directed[b, a] or undirected[a, b])


def v_structures(directed, undirected=None):
    """Set of unshielded colliders (i, k, j) with i < j: i -> k <- j and i, j not adjacent."""
    directed = np.asarray(directed, dtype=bool)
    undirected = np.zeros_like(directed) if undirected is None else np.asarray(undirected, dtype=bool)
    adjacent = directed | directed.T | undirected
    found = set()
    for k in range(directed.shape[0]):
        parents = np.nonzero(directed[:, k])[0]
        for a_idx, i in enumerate(parents):
            for j in parents[a_idx + 1 :]:
                if not adjacent[i, j]:
                    found.add((int(min(i, j)), k, int(max(i, j))))
    return found
