"""Directed acyclic graphs as dense adjacency matrices.

Convention everywhere in jspgfn: `adjacency[i, j] == 1` means the edge i -> j
(i is a parent of j). Graphs are uint8/bool arrays of shape [d, d] or batches
[..., d, d]. NumPy functions here are for data generation and evaluation; the
JAX ones (suffix `_jax`) run inside jitted training.
"""

import itertools

import jax.numpy as jnp
import numpy as np

# --------------------------------------------------------------------- sampling


def sample_er_dag(rng, num_nodes, expected_edges):
    """Erdos-Renyi DAG with `expected_edges` edges on average, in a random node order.

    A lower-triangular Bernoulli mask (p = expected_edges / (d (d - 1) / 2)) is
    permuted by a random ordering, so node indices carry no causal order.

    Args:
      rng: numpy Generator.
      num_nodes: d.
      expected_edges: mean number of edges (d for ER1, 2d for ER2).
    Returns:
      uint8 [d, d] adjacency.
    """
    d = num_nodes
    num_pairs = d * (d - 1) // 2
    if num_pairs == 0:
        return np.zeros((d, d), dtype=np.uint8)
    p = min(1.0, expected_edges / num_pairs)
    lower = np.tril(rng.random((d, d)) < p, k=-1)  # edge j -> i for j < i in topological order
    order = rng.permutation(d)
    adjacency = np.zeros((d, d), dtype=np.uint8)
    # lower[i, j] (j < i): node order[j] is a parent of node order[i].
    src, dst = np.nonzero(lower.T)
    adjacency[order[src], order[dst]] = 1
    return adjacency


# ---------------------------------------------------------------- properties


def transitive_closure(adjacency):
    """closure[..., i, j] = 1 iff there is a directed path of length >= 1 from i to j.

    Repeated squaring of (A + I) on booleans: O(d^3 log d), fine for d <= 100.
    Shape [..., d, d] -> same shape, uint8.
    """
    a = np.asarray(adjacency).astype(bool)
    d = a.shape[-1]
    reach = a.copy()
    for _ in range(max(1, int(np.ceil(np.log2(max(d, 2)))))):
        reach = reach | (reach.astype(np.int64) @ reach.astype(np.int64) > 0)
    return reach.astype(np.uint8)


def is_dag(adjacency):
    """True iff the graph(s) have no directed cycle. [..., d, d] -> bool [...]."""
    closure = transitive_closure(adjacency)
    return ~np.any(np.diagonal(closure, axis1=-2, axis2=-1), axis=-1)


def topological_order(adjacency):
    """A topological order (parents first) of a DAG; raises ValueError on a cycle."""
    a = np.asarray(adjacency).astype(bool)
    indegree = a.sum(axis=0)
    order, ready = [], [i for i in range(a.shape[0]) if indegree[i] == 0]
    while ready:
        node = ready.pop(0)
        order.append(node)
        for child in np.nonzero(a[node])[0]:
            indegree[child] -= 1
            if indegree[child] == 0:
                ready.append(int(child))
    if len(order) != a.shape[0]:
        raise ValueError("graph has a cycle")
    return order


def shd(graph, true_graph):
    """Structural Hamming distance: additions + deletions + reversals to turn graph into true_graph.

    A reversed edge counts once. Shapes [..., d, d] (broadcast) -> int [...].
    """
    g = np.asarray(graph).astype(bool)
    t = np.asarray(true_graph).astype(bool)
    diff = g != t
    # An unordered pair {i, j} counts once if anything differs on it.
    pair_diff = diff | np.swapaxes(diff, -1, -2)
    return np.triu(pair_diff, k=1).sum(axis=(-2, -1))


def markov_blanket(adjacency):
    """mb[..., i, j] = 1 iff i is in the Markov blanket of j (parent, child or co-parent), i != j."""
    a = np.asarray(adjacency).astype(np.int64)
    coparents = (a @ np.swapaxes(a, -1, -2)) > 0  # i and j share a child
    mb = a.astype(bool) | np.swapaxes(a, -1, -2).astype(bool) | coparents
    d = a.shape[-1]
    mb &= ~np.eye(d, dtype=bool)
    return mb.astype(np.uint8)


# ------------------------------------------------------------- enumeration


def enumerate_dags(num_nodes):
    """Every labelled DAG on `num_nodes` nodes, as uint8 [M, d, d].

    M = 1, 3, 25, 543, 29281 for d = 1..5. Nodes are added in index order; the
    new node picks any parent set among the placed nodes and any child set that
    contains no ancestor of those parents, so every result is acyclic and every
    DAG is produced exactly once.
    """
    d = num_nodes
    if d > 6:
        raise ValueError(f"enumerating DAGs is only feasible for d <= 6, got d={d}")
    graphs = [np.zeros((0, 0), dtype=np.uint8)]
    for k in range(d):
        grown = []
        for g in graphs:
            closure = transitive_closure(g) if k > 0 else g
            for parents_bits in range(1 << k):
                parents = [i for i in range(k) if parents_bits >> i & 1]
                # New node k: children must not be ancestors of any parent (else a cycle).
                ancestors_of_parents = set(parents)
                for p in parents:
                    ancestors_of_parents |= set(np.nonzero(closure[:, p])[0].tolist())
                allowed_children = [i for i in range(k) if i not in ancestors_of_parents]
                for r in range(len(allowed_children) + 1):
                    for children in itertools.combinations(allowed_children, r):
                        new = np.zeros((k + 1, k + 1), dtype=np.uint8)
                        new[:k, :k] = g
                        new[parents, k] = 1
                        new[k, list(children)] = 1
                        grown.append(new)
        graphs = grown
    return np.stack(graphs).reshape(len(graphs), d, d)


# ------------------------------------------------------------------ JAX side


def valid_actions_jax(adjacency, closure, max_parents=None):
    """Mask of edges i -> j that can be added without a cycle or duplicate.

    Args:
      adjacency: [..., d, d] current graph (0/1).
      closure: [..., d, d] transitive closure of `adjacency`, closure[i, j] = path i ~> j.
      max_parents: optional int, forbid edges into nodes that already have that many parents.
    Returns:
      bool [..., d, d]: True where adding i -> j keeps a DAG (no existing edge,
      i != j, and no path j ~> i).
    """
    d = adjacency.shape[-1]
    eye = jnp.eye(d, dtype=bool)
    mask = ~(adjacency.astype(bool) | jnp.swapaxes(closure.astype(bool), -1, -2) | eye)
    if max_parents is not None:
        full = jnp.sum(adjacency, axis=-2) >= max_parents  # [..., d] per child j
        mask = mask & ~full[..., None, :]
    return mask


def transitive_closure_jax(adjacency):
    """Transitive closure by repeated squaring (ceil(log2 d) matmuls): [..., d, d] -> uint8 [..., d, d]."""
    d = adjacency.shape[-1]
    reach = adjacency.astype(jnp.float32)
    for _ in range(max(1, (max(d, 2) - 1).bit_length())):
        reach = jnp.minimum(reach + reach @ reach, 1.0)
    return reach.astype(jnp.uint8)


def update_closure_jax(closure, source, target):
    """Transitive closure after adding the edge source -> target (no recomputation).

    Every node that reaches `source` (or is `source`) now reaches every node
    reachable from `target` (and `target` itself). Shapes: closure [d, d], ints.
    """
    d = closure.shape[-1]
    onehot_s = jnp.arange(d) == source
    onehot_t = jnp.arange(d) == target
    reaches_source = closure[:, source].astype(bool) | onehot_s  # [d]
    from_target = closure[target, :].astype(bool) | onehot_t  # [d]
    return (closure.astype(bool) | (reaches_source[:, None] & from_target[None, :])).astype(closure.dtype)
