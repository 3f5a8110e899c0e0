"""benchmarks/open_pair_choice.py: the optimal flows from posterior samples against exact_flows, and its helpers."""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
from jspgfn.gflownet.exact_flows import dag_lattice, optimal_flows  # noqa: E402
from open_pair_choice import log_scores, open_pairs, optimal_log_flow  # noqa: E402


def test_optimal_log_flow_with_every_dag_is_the_exact_optimal_flow():
    lattice = dag_lattice(4)
    rng = np.random.default_rng(0)
    log_target = rng.normal(0, 2, len(lattice.graphs))
    log_target -= np.logaddexp.reduce(log_target)
    log_flow, _ = optimal_flows(lattice, log_target)
    ours, support = optimal_log_flow(lattice.graphs, lattice.graphs, np.exp(log_target))
    assert np.all(support >= 1)
    np.testing.assert_allclose(ours, log_flow, atol=1e-9)
    assert abs(ours[lattice.num_edges == 0][0]) < 1e-9  # F*(empty) = 1


def test_optimal_log_flow_from_samples_converges():
    lattice = dag_lattice(3)
    rng = np.random.default_rng(1)
    log_target = rng.normal(0, 1, len(lattice.graphs))
    p = np.exp(log_target - np.logaddexp.reduce(log_target))
    log_flow, _ = optimal_flows(lattice, np.log(p))
    draws = lattice.graphs[rng.choice(len(p), size=200_000, p=p)]
    ours, _ = optimal_log_flow(lattice.graphs, draws)
    np.testing.assert_allclose(ours, log_flow, atol=0.05)


def test_log_scores_sums_each_nodes_local_score():
    rng = np.random.default_rng(2)
    table = rng.normal(size=(3, 8))
    graph = np.zeros((1, 3, 3), np.uint8)
    graph[0, 0, 2] = graph[0, 1, 2] = graph[0, 0, 1] = 1  # parents: 1 <- {0}, 2 <- {0, 1}
    expected = table[0, 0] + table[1, 0b001] + table[2, 0b011]
    np.testing.assert_allclose(log_scores(table, graph), [expected])


def test_open_pairs_keeps_joined_pairs_with_both_directions():
    edge = np.zeros((3, 3))
    edge[0, 1], edge[1, 0] = 0.5, 0.45  # open
    edge[0, 2], edge[2, 0] = 0.9, 0.05  # one direction
    edge[1, 2], edge[2, 1] = 0.2, 0.2  # rarely joined
    assert open_pairs(edge) == [(0, 1)]
