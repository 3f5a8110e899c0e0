"""benchmarks/accuracy_seeds.py's edge classes (--classes): on a hand-made case, each class sums the marginals of
exactly its edges, and the classes partition the off-diagonal pairs (true / reversed / other, and the bands)."""

import numpy as np
import pytest

from conftest import benchmark_module


def test_the_classes_sum_their_edges_and_partition_the_pairs():
    graph = np.zeros((3, 3), np.uint8)
    graph[0, 1] = graph[1, 2] = 1
    exact = np.array([[0.0, 0.95, 0.2], [0.05, 0.0, 0.6], [0.01, 0.3, 0.0]])
    approx = np.array([[0.5, 0.8, 0.1], [0.1, 0.5, 0.4], [0.0, 0.2, 0.5]])  # a diagonal that must be left out
    classes = benchmark_module("accuracy_seeds").edge_classes(approx, exact, graph)
    assert classes["true"] == pytest.approx((0.8 + 0.4, 0.95 + 0.6))
    assert classes["reversed"] == pytest.approx((0.1 + 0.2, 0.05 + 0.3))
    assert classes["other"] == pytest.approx((0.1 + 0.0, 0.2 + 0.01))
    assert classes["exact>=0.9"] == pytest.approx((0.8, 0.95))
    assert classes["exact>=0.5"] == pytest.approx((0.4, 0.6))
    assert classes["exact>=0.1"] == pytest.approx((0.1 + 0.2, 0.2 + 0.3))
    assert classes["exact>=0.0"] == pytest.approx((0.1 + 0.0, 0.05 + 0.01))
    off_total = approx.sum() - np.trace(approx)
    for names in (("true", "reversed", "other"), [k for k in classes if k.startswith("exact")]):
        assert np.isclose(sum(classes[k][0] for k in names), off_total)
    assert "true" not in benchmark_module("accuracy_seeds").edge_classes(approx, exact, None)
