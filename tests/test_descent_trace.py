"""benchmarks/descent_trace.py: its binning of edge counts and its slope, the two numbers its report is read by."""

import numpy as np

from conftest import benchmark_module


def test_edge_bins_cover_every_count_and_the_complete_dag():
    trace = benchmark_module("descent_trace")
    num_bins = 45 // trace.EDGE_BIN + 1  # d=10: 0..45 edges, the complete DAG alone in the last bin
    counts = np.array([0, 4, 5, 9, 10, 44, 45, 45])
    share = trace.share_by_edges(counts, num_bins)
    assert share.shape == (num_bins,)
    np.testing.assert_allclose(share.sum(), 1.0)
    np.testing.assert_allclose(share[[0, 1, 2, 8, 9]], [2 / 8, 2 / 8, 1 / 8, 1 / 8, 2 / 8])


def test_ols_recovers_a_known_slope_and_refuses_degenerate_input():
    trace = benchmark_module("descent_trace")
    rng = np.random.default_rng(0)
    x = rng.normal(size=2000)
    slope, r = trace.ols(x, 1.5 * x + 0.1 * rng.normal(size=2000) - 7.0)
    assert abs(slope - 1.5) < 0.01 and r > 0.99
    assert np.isnan(trace.ols(np.ones(10), x[:10])[0])  # one distinct graph score: no slope
    assert np.isnan(trace.ols(x[:2], x[:2])[0])


def test_distinct_subset_keeps_distinct_graphs_only():
    trace = benchmark_module("descent_trace")
    graphs = np.zeros((6, 3, 3), np.uint8)
    graphs[3:, 0, 1] = 1  # two distinct graphs, three copies each
    assert len(trace.distinct_subset(graphs, 10, np.random.default_rng(0))) == 2
    assert len(trace.distinct_subset(graphs, 1, np.random.default_rng(0))) == 1
