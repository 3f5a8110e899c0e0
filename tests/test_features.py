"""Edge, path and Markov features on hand-computed cases."""

import numpy as np
import pytest

from jspgfn.features import edge_features, markov_features, offdiagonal, path_features


def _graph(d, edges):
    g = np.zeros((d, d), dtype=np.uint8)
    for i, j in edges:
        g[i, j] = 1
    return g


CHAIN = _graph(3, [(0, 1), (1, 2)])  # 0 -> 1 -> 2
COLLIDER = _graph(3, [(0, 2), (1, 2)])  # 0 -> 2 <- 1


def test_chain():
    graphs = CHAIN[None]
    np.testing.assert_array_equal(edge_features(graphs), CHAIN)
    np.testing.assert_array_equal(path_features(graphs), [[0, 1, 1], [0, 0, 1], [0, 0, 0]])
    # Blankets: MB(0) = {1}, MB(1) = {0, 2}, MB(2) = {1}; markov[i, j] = 1 iff i in MB(j).
    np.testing.assert_array_equal(markov_features(graphs), [[0, 1, 0], [1, 0, 1], [0, 1, 0]])


def test_collider_makes_co_parents_neighbours_in_the_blanket():
    np.testing.assert_array_equal(markov_features(COLLIDER[None]), [[0, 1, 1], [1, 0, 1], [1, 1, 0]])
    np.testing.assert_array_equal(path_features(COLLIDER[None]), COLLIDER)


def test_weighted_graphs_give_exact_fractions():
    graphs = np.stack([CHAIN, COLLIDER])
    weights = np.array([0.25, 0.75])
    np.testing.assert_allclose(edge_features(graphs, weights), [[0, 0.25, 0.75], [0, 0, 1.0], [0, 0, 0]])
    np.testing.assert_allclose(path_features(graphs, weights), [[0, 0.25, 1.0], [0, 0, 1.0], [0, 0, 0]])
    np.testing.assert_allclose(markov_features(graphs, weights), [[0, 1.0, 0.75], [1.0, 0, 1.0], [0.75, 1.0, 0]])
    # Unnormalised weights are normalised; no weights means uniform.
    np.testing.assert_allclose(edge_features(graphs, weights * 8), edge_features(graphs, weights))
    np.testing.assert_allclose(edge_features(graphs), edge_features(graphs, [1, 1]))


def test_long_path_through_the_closure():
    chain = _graph(5, [(0, 1), (1, 2), (2, 3), (3, 4)])
    path = path_features(chain[None])
    np.testing.assert_array_equal(path, np.triu(np.ones((5, 5)), k=1))


@pytest.mark.parametrize("weights", [[1.0], [-1.0, 2.0], [0.0, 0.0]])
def test_bad_weights_are_refused(weights):
    with pytest.raises(ValueError, match="weights"):
        edge_features(np.stack([CHAIN, COLLIDER]), weights)


def test_offdiagonal_drops_the_diagonal_in_row_major_order():
    np.testing.assert_array_equal(offdiagonal(np.arange(9).reshape(3, 3)), [1, 2, 3, 5, 6, 7])


def test_features_stay_probabilities_under_round_off():
    """Weights that sum to 1 + 1e-15 (as after normalising 29,281 posterior terms) give features <= 1."""
    graphs = np.ones((3, 2, 2), np.uint8)
    weights = np.array([0.1, 0.2, 0.7 + 4e-16])
    assert edge_features(graphs, weights).max() <= 1.0
