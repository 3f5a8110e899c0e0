import itertools

import jax.numpy as jnp
import numpy as np
import pytest

from jspgfn import graphs


def random_dag(rng, d, p=0.4):
    return graphs.sample_er_dag(rng, d, p * d * (d - 1) / 2)


def brute_closure(a):
    d = a.shape[0]
    reach = a.astype(bool).copy()
    for k, i, j in itertools.product(range(d), repeat=3):  # Floyd-Warshall order: k outermost
        reach[i, j] |= reach[i, k] and reach[k, j]
    return reach


@pytest.mark.parametrize("d, count", [(1, 1), (2, 3), (3, 25), (4, 543), (5, 29281)])
def test_enumerate_dags_counts_unique_acyclic(d, count):
    dags = graphs.enumerate_dags(d)
    assert dags.shape == (count, d, d)
    assert graphs.is_dag(dags).all()
    assert len({g.tobytes() for g in dags}) == count


def test_enumerate_dags_refuses_large_d():
    with pytest.raises(ValueError, match="d <= 6"):
        graphs.enumerate_dags(7)


def test_closure_and_is_dag_against_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(50):
        d = int(rng.integers(2, 8))
        a = (rng.random((d, d)) < 0.3).astype(np.uint8)
        np.fill_diagonal(a, 0)
        expected = brute_closure(a)
        np.testing.assert_array_equal(graphs.transitive_closure(a).astype(bool), expected)
        assert bool(graphs.is_dag(a)) == (not expected.diagonal().any())


@pytest.mark.parametrize("k", [1, 2])
def test_er_edge_counts_match_expectation(k):
    """ER-k on d nodes: k*d expected edges, checked over 2,000 seeds within 4 standard errors."""
    d, reps = 10, 2000
    rng = np.random.default_rng(123)
    counts = np.array([graphs.sample_er_dag(rng, d, k * d).sum() for _ in range(reps)])
    p = k * d / (d * (d - 1) / 2)
    sd = np.sqrt(d * (d - 1) / 2 * p * (1 - p))
    assert abs(counts.mean() - k * d) < 4 * sd / np.sqrt(reps)
    assert abs(counts.std() - sd) < 0.1 * sd


def test_er_node_order_is_random():
    """Node 0 must not always be a source: the permutation hides the causal order."""
    rng = np.random.default_rng(1)
    indegree0 = [graphs.sample_er_dag(rng, 5, 5)[:, 0].sum() for _ in range(300)]
    assert np.mean(indegree0) > 0.5  # expected 1.0 in-edges per node for ER1


def test_shd_hand_cases():
    chain = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    assert graphs.shd(chain, chain) == 0
    reversed_one = chain.copy()
    reversed_one[0, 1] = 0
    reversed_one[1, 0] = 1
    assert graphs.shd(reversed_one, chain) == 1
    assert graphs.shd(np.zeros((3, 3)), chain) == 2
    full = np.triu(np.ones((3, 3)), 1)
    assert graphs.shd(full, chain) == 1
    np.testing.assert_array_equal(graphs.shd(np.stack([chain, reversed_one]), chain), [0, 1])


def test_markov_blanket_hand_case():
    # 0 -> 2 <- 1, 2 -> 3: MB(0) = {1 (co-parent), 2}; MB(3) = {2}.
    a = np.zeros((4, 4), np.uint8)
    a[0, 2] = a[1, 2] = a[2, 3] = 1
    mb = graphs.markov_blanket(a)
    assert set(np.nonzero(mb[:, 0])[0]) == {1, 2}
    assert set(np.nonzero(mb[:, 3])[0]) == {2}
    np.testing.assert_array_equal(mb, mb.T)


def test_topological_order_and_cycle():
    a = np.zeros((3, 3), np.uint8)
    a[2, 0] = a[0, 1] = 1
    assert graphs.topological_order(a) == [2, 0, 1]
    a[1, 2] = 1
    with pytest.raises(ValueError, match="cycle"):
        graphs.topological_order(a)


def test_valid_actions_match_brute_force():
    rng = np.random.default_rng(2)
    for _ in range(30):
        d = int(rng.integers(2, 7))
        a = random_dag(rng, d)
        mask = np.asarray(graphs.valid_actions_jax(jnp.asarray(a), jnp.asarray(graphs.transitive_closure(a))))
        for i, j in itertools.product(range(d), repeat=2):
            b = a.copy()
            b[i, j] = 1
            expected = i != j and a[i, j] == 0 and bool(graphs.is_dag(b))
            assert mask[i, j] == expected, (a, i, j)


def test_valid_actions_max_parents():
    a = np.zeros((4, 4), np.uint8)
    a[0, 3] = a[1, 3] = 1
    mask = np.asarray(
        graphs.valid_actions_jax(jnp.asarray(a), jnp.asarray(graphs.transitive_closure(a)), max_parents=2)
    )
    assert not mask[:, 3].any()
    assert mask[3, 2]


def test_update_closure_matches_recomputation():
    rng = np.random.default_rng(3)
    for _ in range(30):
        d = int(rng.integers(2, 8))
        a = random_dag(rng, d)
        closure = graphs.transitive_closure(a)
        mask = np.asarray(graphs.valid_actions_jax(jnp.asarray(a), jnp.asarray(closure)))
        if not mask.any():
            continue
        i, j = [int(v) for v in np.argwhere(mask)[rng.integers(mask.sum())]]
        b = a.copy()
        b[i, j] = 1
        updated = np.asarray(graphs.update_closure_jax(jnp.asarray(closure), i, j))
        np.testing.assert_array_equal(updated, graphs.transitive_closure(b))
