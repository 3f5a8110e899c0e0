"""benchmarks/reward_range.py against the independent per-node marginal likelihood of benchmarks/_exact_linear.py
(a dense N x N Gaussian, no shared code with jspgfn.conjugate): the one-edge gains and the gain to given graphs."""

import numpy as np

from conftest import benchmark_module
from jspgfn.models import get_model


def test_the_gains_match_the_dense_marginal_likelihood():
    rng = np.random.default_rng(0)
    x = rng.normal(scale=0.3, size=(40, 3))
    x[:, 1] += 2.0 * x[:, 0]
    x[:, 2] += -1.0 * x[:, 1]
    graphs = np.zeros((2, 3, 3), np.uint8)
    graphs[0, 0, 1] = graphs[0, 1, 2] = 1
    graphs[1, 0, 1] = graphs[1, 0, 2] = graphs[1, 1, 2] = 1
    model = get_model("lingauss", obs_var=0.05, prior_var=1.0)
    variance, single, to_graphs = benchmark_module("reward_range").reward_range(model, x, graphs)

    node = benchmark_module("_exact_linear").node_log_marginal
    empty = [node(x, j, [], 0.05, 1.0) for j in range(3)]
    gains = [node(x, j, [i], 0.05, 1.0) - empty[j] for i in range(3) for j in range(3) if i != j]
    totals = [sum(node(x, j, np.flatnonzero(g[:, j]), 0.05, 1.0) for j in range(3)) - sum(empty) for g in graphs]
    assert abs(single - max(gains)) < 1e-6 * abs(max(gains))
    assert abs(to_graphs - np.mean(totals)) < 1e-6 * abs(np.mean(totals))
    assert abs(variance - x.var(axis=0).max()) < 1e-12
    assert single > 10.0  # the strong edge 0 -> 1 gains many nats: the comparison is not between two zeros
