"""benchmarks/edge_error_parts.py: the split of the squared edge error into adjacency and orientation parts,
against marginals built to have only one of the two kinds of error."""

import numpy as np

from conftest import benchmark_module


def _exact(d=5, seed=0):
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.uniform(0.0, 1.0, (d, d)), 1)
    split = rng.uniform(0.0, 1.0, (d, d))
    return upper * split + (upper * (1 - split)).T  # P(i -> j) + P(j -> i) <= 1 for every pair


def test_parts_sum_to_the_squared_error_over_ordered_pairs():
    parts = benchmark_module("edge_error_parts").error_parts
    exact = _exact()
    run = np.clip(exact + np.random.default_rng(1).normal(0, 0.1, exact.shape), 0, 1)
    np.fill_diagonal(run, 0)
    p = parts(run, exact)
    off = ~np.eye(5, dtype=bool)
    np.testing.assert_allclose(p["total"], np.sum((run - exact)[off] ** 2), rtol=1e-12)
    np.testing.assert_allclose(p["all_adj"] + p["all_ori"], p["total"], rtol=1e-12)
    for part in ("adj", "ori"):
        split = sum(p[f"{name}_{part}"] for name in ("sure", "likely", "weak", "absent"))
        np.testing.assert_allclose(split, p[f"all_{part}"], rtol=1e-12)
    assert sum(p[f"{name}_n"] for name in ("sure", "likely", "weak", "absent")) == p["all_n"] == 10


def test_reversed_directions_are_orientation_error_only():
    parts = benchmark_module("edge_error_parts").error_parts
    exact = _exact(seed=2)
    p = parts(exact.T.copy(), exact)  # every pair's two directions swapped: the same skeleton
    assert p["total"] > 0.1
    assert p["all_adj"] < 1e-12
    np.testing.assert_allclose(p["all_ori"], p["total"], rtol=1e-12)


def test_scaled_pairs_split_by_the_formula():
    parts = benchmark_module("edge_error_parts").error_parts
    exact = _exact(seed=3)
    run = 0.5 * exact  # each pair joined half as often, its directions in the same ratio
    p = parts(run, exact)
    assert p["total"] > 0.05
    # each pair's net direction shrinks with it: the orientation part is (e_ij - e_ji)^2 / 2 with e = -exact / 2,
    # the adjacency part (e_ij + e_ji)^2 / 2
    i, j = np.triu_indices(5, 1)
    np.testing.assert_allclose(p["all_ori"], np.sum((exact[i, j] - exact[j, i]) ** 2) / 8, rtol=1e-12)
    np.testing.assert_allclose(p["all_adj"], np.sum((exact[i, j] + exact[j, i]) ** 2) / 8, rtol=1e-12)
    assert p["all_signed"] < 0  # the run joins the pairs less often than the exact


def test_worst_pairs_lists_the_largest_errors_first():
    parts = benchmark_module("edge_error_parts")
    exact = np.zeros((3, 3))
    exact[0, 1], exact[1, 0], exact[1, 2] = 0.5, 0.5, 0.9
    run = exact.copy()
    run[0, 1], run[1, 0] = 0.9, 0.1  # error 0.32 on pair 0-1
    run[1, 2] = 0.8  # error 0.01 on pair 1-2
    graph = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]], np.uint8)
    lines = parts.worst_pairs(run, exact, graph, 2)
    assert lines[0].startswith("0-1 true 10 exact 0.50/0.50 run 0.90/0.10")
    assert lines[1].startswith("1-2 true 10 exact 0.90/0.00 run 0.80/0.00")
    assert lines[0].endswith("share 0.97")
