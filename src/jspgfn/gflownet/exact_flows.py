"""Exact flows of the DAG-building process over every DAG on d <= 5 nodes (diagnosis and tests).

With all M DAGs listed (29,281 at d = 5) nothing needs sampling:
  - `terminating_log_probs`: the sampler's own P_T(G) = F(G) P(stop | G), with the state flow
    F(G) = sum over parents G- of F(G-) P_F(G | G-), F(empty) = 1, by a forward pass over edge counts;
  - `optimal_flows`: for a target P(G) (normalised), the one forward policy that samples it with the
    uniform backward policy P_B(G | G') = 1 / |G'|: F*(G) = P(G) + sum over children G' = G + e of
    F*(G') / |G'|, P*(stop | G) = P(G) / F*(G), P*_F(G' | G) = F*(G') / (|G'| F*(G)).
Graphs are indexed as in `DagLattice.graphs`; log probabilities are float64 numpy arrays.
"""

import functools
from typing import NamedTuple

import numpy as np

from jspgfn.graphs import enumerate_dags


class DagLattice(NamedTuple):
    graphs: np.ndarray  # uint8 [M, d, d], sorted by code
    num_edges: np.ndarray  # int [M]
    children: np.ndarray  # int [M, d*d]: index of G + (i -> j) for action i*d + j, -1 where not a DAG


def _codes(graphs):
    d = graphs.shape[-1]
    flat = graphs.reshape(len(graphs), d * d).astype(np.int64)
    return flat @ (np.int64(1) << np.arange(d * d, dtype=np.int64))


@functools.cache
def dag_lattice(num_variables):
    """Every DAG on num_variables <= 5 nodes and the edge additions between them."""
    graphs = enumerate_dags(num_variables)
    codes = _codes(graphs)
    order = np.argsort(codes)
    graphs, codes = graphs[order], codes[order]
    d = num_variables
    bits = np.int64(1) << np.arange(d * d, dtype=np.int64)
    new_codes = codes[:, None] | bits[None, :]  # [M, d*d]
    pos = np.minimum(np.searchsorted(codes, new_codes), len(codes) - 1)
    present = graphs.reshape(len(graphs), -1) > 0
    valid = (codes[pos] == new_codes) & ~present
    children = np.where(valid, pos, -1)
    lattice = DagLattice(graphs, graphs.sum(axis=(1, 2)).astype(np.int64), children)
    for array in lattice:
        array.setflags(write=False)
    return lattice


def index_of(lattice, graphs):
    """Indices in lattice.graphs of graphs uint8 [K, d, d] (all must be DAGs): int [K]."""
    codes = _codes(lattice.graphs)
    wanted = _codes(np.asarray(graphs))
    pos = np.searchsorted(codes, wanted)
    if np.any(pos >= len(codes)) or np.any(codes[np.minimum(pos, len(codes) - 1)] != wanted):
        raise ValueError("a graph is not a DAG on the lattice's nodes")
    return pos


def edges_by_level(lattice, level):
    """(parent, action, child) int arrays of the edge additions out of graphs with `level` edges."""
    parents = np.flatnonzero(lattice.num_edges == level)
    rows, actions = np.nonzero(lattice.children[parents] >= 0)
    parent = parents[rows]
    return parent, actions, lattice.children[parent, actions]


def _scatter_logsumexp(values, index, size):
    out_max = np.full(size, -np.inf)
    np.maximum.at(out_max, index, values)
    safe = np.where(np.isfinite(out_max), out_max, 0.0)
    total = np.zeros(size)
    np.add.at(total, index, np.exp(values - safe[index]))
    with np.errstate(divide="ignore"):
        return np.where(total > 0, safe + np.log(total), -np.inf)


def terminating_log_probs(lattice, log_stop, log_edges):
    """The sampler's exact log P_T(G) and log state flow log F(G), both float64 [M].

    Args: log_stop [M] = log P(stop | G) (0 where stopping is forced); log_edges [M, d*d] =
      log P(G + (i -> j) | G), stop included (e.g. from log_pt.TrajectoryScorer.log_edges).
    """
    m = len(lattice.graphs)
    log_flow = np.full(m, -np.inf)
    log_flow[lattice.num_edges == 0] = 0.0
    for level in range(int(lattice.num_edges.max())):
        parent, action, child = edges_by_level(lattice, level)
        incoming = _scatter_logsumexp(log_flow[parent] + log_edges[parent, action], child, m)
        at_next = lattice.num_edges == level + 1
        log_flow[at_next] = incoming[at_next]
    return log_flow + log_stop, log_flow


def optimal_flows(lattice, log_target):
    """For a normalised target log P(G) [M]: (log F*(G) [M], log P*(stop | G) [M]) of the forward policy
    that samples the target exactly with the uniform backward policy."""
    m = len(lattice.graphs)
    log_flow = np.array(log_target, dtype=np.float64)
    for level in range(int(lattice.num_edges.max()) - 1, -1, -1):
        parent, _, child = edges_by_level(lattice, level)
        back = _scatter_logsumexp(log_flow[child] - np.log(lattice.num_edges[child]), parent, m)
        at_level = lattice.num_edges == level
        log_flow[at_level] = np.logaddexp(log_target[at_level], back[at_level])
    return log_flow, log_target - log_flow
