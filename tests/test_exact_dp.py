"""The subset dynamic program (exact_dp.py), its exact sampler (exact_sampler.py) and cost estimate
(exact_dp_cost.py) against the enumeration of every DAG (exact.py)."""

import numpy as np
import pytest
from scipy.special import logsumexp

from jspgfn.conjugate import local_score_table, parent_codes
from jspgfn.errors import JspgfnError
from jspgfn.exact import _all_dags, compute_exact_posterior
from jspgfn.exact_dp import edge_posterior, local_scores, subset_posterior
from jspgfn.exact_sampler import _LayerSampler, log_prob_dags, sample_dags, sample_joint
from jspgfn.generate import generate
from jspgfn.graphs import is_dag, transitive_closure
from jspgfn.models import LinearGaussian, get_graph_prior

# A model unlike the data's, as in test_exact.py; few rows keep the posterior spread over many graphs.
MODEL = LinearGaussian(obs_var=0.05, prior_mean=0.3, prior_var=0.5)
PRIORS = {
    "uniform": lambda d: get_graph_prior("uniform", d),
    "erdos_renyi": lambda d: get_graph_prior("erdos_renyi", d, expected_edges=1),  # log weight != 0
}


def _dataset(d, n, seed):
    return generate("er1", "linear", d, n, 5, seed)


def _enumerated(x, d, prior, max_parents=None):
    """Every DAG (filtered by in-degree) and its log prior x marginal likelihood: ([M, d, d], [M])."""
    graphs = _all_dags(d)
    if max_parents is not None:
        graphs = graphs[graphs.sum(axis=1).max(axis=-1) <= max_parents]
    table = local_score_table(MODEL, x)
    log_joint = table[np.arange(d), parent_codes(graphs)].sum(-1) + prior.log_edge_weight * graphs.sum((1, 2))
    return graphs, log_joint


def _root_layering(graph):
    """[L_1, L_2, ...] as bitmasks: L_1 = sources, then the sources once the earlier layers are removed."""
    d, placed, layers = graph.shape[0], 0, []
    while placed != (1 << d) - 1:
        layer = sum(
            1 << j for j in range(d) if not placed >> j & 1 and all(placed >> i & 1 for i in np.nonzero(graph[:, j])[0])
        )
        layers.append(layer)
        placed |= layer
    return layers


# ------------------------------------------------------------ local scores


@pytest.mark.parametrize("max_parents", [None, 0, 2])
def test_local_scores_are_the_score_table_plus_the_prior(max_parents):
    d = 5
    x = _dataset(d, 20, seed=4).train
    prior = get_graph_prior("edge", d, beta=0.3)
    scores = local_scores(MODEL, x, max_parents=max_parents, graph_prior=prior, batch_size=7)
    table = local_score_table(MODEL, x)
    codes = np.arange(1 << d)
    size = np.bitwise_count(codes)
    allowed = ((codes[None, :] >> np.arange(d)[:, None]) & 1 == 0) & (
        size <= (d if max_parents is None else max_parents)
    )
    np.testing.assert_allclose(scores[allowed], (table + prior.log_edge_weight * size)[allowed], rtol=1e-12, atol=0)
    assert np.all(scores[~allowed] == -np.inf)


def test_local_scores_reject_a_bad_max_parents():
    x = _dataset(3, 10, seed=0).train
    for bad in (-1, 1.5, True):
        with pytest.raises(JspgfnError, match="max_parents"):
            local_scores(MODEL, x, max_parents=bad)


# ------------------------------------------------------------ edge marginals and log Z


@pytest.mark.parametrize("d", [3, 4, 5])
@pytest.mark.parametrize("prior_name", sorted(PRIORS))
@pytest.mark.parametrize("max_parents", [None, 1, 2])
def test_dynamic_program_equals_the_enumeration(d, prior_name, max_parents):
    prior = PRIORS[prior_name](d)
    for seed in range(3):
        x = _dataset(d, 20, seed).train
        graphs, log_joint = _enumerated(x, d, prior, max_parents)
        log_z = logsumexp(log_joint)
        edge = np.einsum("m,mij->ij", np.exp(log_joint - log_z), graphs)
        posterior = subset_posterior(local_scores(MODEL, x, max_parents=max_parents, graph_prior=prior))
        np.testing.assert_allclose(posterior.edge, edge, atol=1e-9, rtol=0)
        assert abs(posterior.log_z - log_z) < 1e-9 * max(1.0, abs(log_z))
        assert abs(posterior.log_backward[0] - log_z) < 1e-9 * max(1.0, abs(log_z))  # b({}) = Z too
        np.testing.assert_allclose(posterior.nondescendants.sum(axis=1), 1.0, atol=1e-12)


@pytest.mark.parametrize("d", [4, 5])
def test_edge_posterior_equals_compute_exact_posterior(d):
    dataset = _dataset(d, 30, seed=7)
    prior = PRIORS["erdos_renyi"](d)
    exact = compute_exact_posterior(dataset, MODEL, prior)
    edge, log_z = edge_posterior(MODEL, dataset.train, graph_prior=prior)
    np.testing.assert_allclose(edge, exact.edge, atol=1e-9, rtol=0)
    _, log_joint = _enumerated(dataset.train, d, prior)
    assert abs(log_z - logsumexp(log_joint)) < 1e-9 * abs(log_z)


def test_nondescendant_distribution_equals_the_enumeration():
    """w_v(S) = P(ND(v) = S | D), the quantity the edge marginals are built from, on d = 4."""
    d = 4
    prior = PRIORS["erdos_renyi"](d)
    x = _dataset(d, 20, seed=2).train
    graphs, log_joint = _enumerated(x, d, prior, max_parents=2)
    weights = np.exp(log_joint - logsumexp(log_joint))
    descendants = transitive_closure(graphs).astype(bool)  # [M, v, u]: u descends from v
    bits = 1 << np.arange(d)
    expected = np.zeros((d, 1 << d))
    for v in range(d):
        nondesc = (~descendants[:, v, :] & (np.arange(d) != v)) @ bits  # [M] bitmask of ND(v)
        np.add.at(expected[v], nondesc, weights)
    posterior = subset_posterior(local_scores(MODEL, x, max_parents=2, graph_prior=prior))
    np.testing.assert_allclose(posterior.nondescendants, expected, atol=1e-12)


def test_subset_posterior_rejects_bad_tables():
    with pytest.raises(JspgfnError, match="shape"):
        subset_posterior(np.zeros((3, 7)))
    scores = np.zeros((3, 8))
    with pytest.raises(JspgfnError, match="own parent"):
        subset_posterior(scores)


@pytest.mark.slow
def test_dynamic_program_equals_brute_force_over_all_dags_d6():
    """All 3,781,503 DAGs on 6 nodes: each DAG on 5 nodes, plus node 5 with parents P and children C
    holding no ancestor of P (each DAG once), summed by brute force."""
    d = 6
    prior = PRIORS["erdos_renyi"](d)
    x = _dataset(d, 20, seed=5).train
    scores = local_score_table(MODEL, x) + prior.log_edge_weight * np.bitwise_count(np.arange(1 << d))
    small = _all_dags(5).astype(np.int64)  # [M, 5, 5]
    closure = transitive_closure(small).astype(np.int64)
    bits = 1 << np.arange(5)
    codes = np.einsum("mij,i->mj", small, bits)  # [M, 5] parent codes
    ancestors = np.einsum("mij,i->mj", closure, bits) | bits  # [M, 5] ancestors of j, j included
    subsets = np.arange(32)
    member = (subsets[:, None] >> np.arange(5)) & 1  # [32, 5]
    reach = np.zeros((len(small), 32), dtype=np.int64)  # [M, P] P and its ancestors
    for p in range(5):
        reach |= np.where(member[None, :, p] == 1, ancestors[:, None, p], 0)
    valid = (reach[:, :, None] & subsets[None, None, :]) == 0  # [M, P, C]
    old = sum(scores[j, codes[:, j, None] | (member[None, :, j] << 5)] for j in range(5))  # [M, C]
    log_joint = np.where(valid, old[:, None, :] + scores[5, subsets][None, :, None], -np.inf)
    assert valid.sum() == 3_781_503
    log_z = logsumexp(log_joint)
    weights = np.exp(log_joint - log_z)  # [M, P, C]
    edge = np.zeros((d, d))
    edge[:5, :5] = np.einsum("m,mij->ij", weights.sum((1, 2)), small)
    edge[:5, 5] = weights.sum((0, 2)) @ member  # i in P
    edge[5, :5] = weights.sum((0, 1)) @ member  # j in C
    posterior = subset_posterior(local_scores(MODEL, x, graph_prior=prior))
    np.testing.assert_allclose(posterior.edge, edge, atol=1e-9, rtol=0)
    assert abs(posterior.log_z - log_z) < 1e-9 * abs(log_z)


# ------------------------------------------------------------ exact sampling


@pytest.mark.parametrize("max_parents", [None, 1, 2])
def test_layer_sampler_gives_every_dag_its_posterior_probability(max_parents):
    """The product of the sampler's conditional probabilities along each DAG's root layering is P(G | D)."""
    d = 4
    prior = get_graph_prior("edge", d, beta=0.3)
    x = _dataset(d, 10, seed=1).train
    posterior = subset_posterior(local_scores(MODEL, x, max_parents=max_parents, graph_prior=prior))
    sampler = _LayerSampler(posterior)
    graphs, log_joint = _enumerated(x, d, prior, max_parents)
    implied = []
    for graph in graphs:
        placed, last, prob = 0, 0, 1.0
        for layer in _root_layering(graph):
            masks, probs = sampler.layer_probs(placed, last)
            prob *= probs[np.searchsorted(masks, layer)]
            for node in range(d) if placed else ():
                if layer >> node & 1:
                    codes, q = sampler.parent_probs(node, placed, last)
                    prob *= q[np.searchsorted(codes, parent_codes(graph)[node])]
            placed, last = placed | layer, layer
        implied.append(prob)
    expected = np.exp(log_joint - logsumexp(log_joint))
    np.testing.assert_allclose(implied, expected, atol=1e-13, rtol=1e-9)
    np.testing.assert_allclose(np.exp(log_prob_dags(posterior, graphs)), expected, atol=1e-13)


def _assert_frequencies_match(graphs, edge, num_samples):
    frequencies = graphs.mean(axis=0)
    error = np.sqrt(edge * (1 - edge) / num_samples)
    # 4 standard errors; 2 / K more where an edge is so rare that one or two hits already exceed that.
    assert np.all(np.abs(frequencies - edge) <= 4 * error + 2.0 / num_samples), np.max(np.abs(frequencies - edge))


def test_sampler_edge_frequencies_match_the_enumeration_d5():
    d, num_samples = 5, 20_000
    prior = PRIORS["erdos_renyi"](d)
    x = _dataset(d, 20, seed=3).train
    graphs, log_joint = _enumerated(x, d, prior)
    edge = np.einsum("m,mij->ij", np.exp(log_joint - logsumexp(log_joint)), graphs)
    assert 0.05 < edge[~np.eye(d, dtype=bool)].max() < 0.95  # a spread posterior, not a point mass
    posterior = subset_posterior(local_scores(MODEL, x, graph_prior=prior))
    samples = sample_dags(posterior, np.random.default_rng(0), num_samples)
    assert samples.shape == (num_samples, d, d) and samples.dtype == np.uint8 and is_dag(samples).all()
    _assert_frequencies_match(samples, edge, num_samples)


@pytest.mark.parametrize("max_parents", [None, 2])
def test_sampler_edge_frequencies_match_the_dynamic_program_d8(max_parents):
    d, num_samples = 8, 20_000
    x = _dataset(d, 20, seed=0).train
    posterior = subset_posterior(local_scores(MODEL, x, max_parents=max_parents))
    samples = sample_dags(posterior, np.random.default_rng(1), num_samples)
    assert is_dag(samples).all()
    if max_parents is not None:
        assert samples.sum(axis=1).max() <= max_parents
    _assert_frequencies_match(samples, posterior.edge, num_samples)


def test_sampler_reports_every_sample_once():
    posterior = subset_posterior(local_scores(MODEL, _dataset(6, 40, seed=2).train))
    done = []
    graphs = sample_dags(posterior, np.random.default_rng(0), 500, progress=done.append)
    assert sum(done) == 500 and len(graphs) == 500


def test_sample_joint_draws_theta_on_the_sampled_graphs():
    d = 4
    dataset = _dataset(d, 20, seed=0)
    posterior = subset_posterior(local_scores(MODEL, dataset.train))
    graphs, theta = sample_joint(MODEL, dataset.train, posterior, np.random.default_rng(0), 50)
    assert graphs.shape == theta.shape == (50, d, d)
    assert np.all(theta[graphs == 0] == 0) and np.all(theta[graphs == 1] != 0)


def test_d10_runs():
    d = 10
    x = _dataset(d, 30, seed=0).train
    posterior = subset_posterior(local_scores(MODEL, x, max_parents=3))
    assert posterior.edge.shape == (d, d) and np.all((posterior.edge >= 0) & (posterior.edge <= 1))
    assert np.all(np.diag(posterior.edge) == 0)
    np.testing.assert_allclose(posterior.nondescendants.sum(axis=1), 1.0, atol=1e-9)
    assert abs(posterior.log_backward[0] - posterior.log_z) < 1e-9 * abs(posterior.log_z)
    samples = sample_dags(posterior, np.random.default_rng(0), 200)
    assert is_dag(samples).all() and samples.sum(axis=1).max() <= 3


def test_cli_exact_beyond_d5_writes_the_exact_npz_contract(tmp_path):
    """`jspgfn exact` on a d=8 dataset: exact edge marginals from the DP, path/Markov features and the graph list
    from exact samples (stated in the metadata), loadable by load_exact; d=21 is refused with the cost."""
    from jspgfn.cli import main
    from jspgfn.dataset import load_dataset, write_dataset
    from jspgfn.exact import load_exact
    from jspgfn.exact_dp import edge_posterior
    from jspgfn.generate import generate
    from jspgfn.models import LinearGaussian

    data = tmp_path / "d8"
    write_dataset(data, generate("er1", "linear", 8, 100, 10, seed=3))
    out = tmp_path / "exact.npz"
    assert main(["exact", str(data), "--samples", "4000", "--out", str(out)]) in (0, None)
    exact = load_exact(out)
    dataset = load_dataset(data)
    edge, _ = edge_posterior(LinearGaussian(), dataset.train)
    np.testing.assert_allclose(exact.edge, edge, atol=1e-12)
    assert exact.metadata["num_exact_samples"] == 4000
    assert 0 < exact.metadata["monte_carlo_max_standard_error"]["path"] <= 0.5 / np.sqrt(4000) + 1e-12
    # the sampled graphs' edge frequencies agree with the exact marginals within Monte Carlo error
    frequency = np.einsum("m,mij->ij", np.exp(exact.log_probs), exact.graphs)
    assert np.all(np.abs(frequency - edge) <= 4 * np.sqrt(edge * (1 - edge) / 4000) + 2 / 4000)

    big = tmp_path / "d21.csv"
    np.savetxt(
        big,
        np.random.default_rng(0).standard_normal((30, 21)),
        delimiter=",",
        header=",".join(f"X{i}" for i in range(21)),
        comments="",
    )
    assert main(["exact", str(big), "--out", str(tmp_path / "big.npz")]) == 2
    assert not (tmp_path / "big.npz").exists()


def test_chunked_levels_equal_the_unchunked_program(monkeypatch):
    """The DP levels processed a few rows at a time (tiny CHUNK_TERMS) give the same tables, and the progress
    callback counts exactly dp_terms(d) terms."""
    import jspgfn.exact_dp as exact_dp
    import jspgfn.subsets as subsets

    scores = local_scores(MODEL, _dataset(7, 40, seed=1).train, max_parents=3)
    whole = subset_posterior(scores)
    monkeypatch.setattr(subsets, "CHUNK_TERMS", 8)
    done = []
    chunked = subset_posterior(scores, progress=done.append)
    assert len(done) > 2 * 7  # more than one call per level: the chunking is exercised
    assert sum(done) == exact_dp.dp_terms(7)
    np.testing.assert_allclose(chunked.log_forward, whole.log_forward, rtol=1e-13)
    np.testing.assert_allclose(chunked.log_backward, whole.log_backward, rtol=1e-13)
    np.testing.assert_allclose(chunked.edge, whole.edge, atol=1e-13)


def test_memory_estimate_bounds_what_the_program_allocates(monkeypatch):
    """dp_cost's estimate of the DP's own arrays (MEMORY_MARGIN aside) bounds the numpy allocations of
    subset_posterior (tracemalloc) at d=14, with small chunks; whole levels at once would exceed it."""
    import tracemalloc

    import jspgfn.exact_dp_cost as exact_dp_cost
    import jspgfn.subsets as subsets

    scores = local_scores(MODEL, _dataset(14, 50, seed=0).train)

    def peak_bytes():
        tracemalloc.start()
        subset_posterior(scores)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return peak

    monkeypatch.setattr(subsets, "CHUNK_TERMS", 1 << 14)
    bound = exact_dp_cost.dp_cost(14)[1] - exact_dp_cost.MEMORY_MARGIN
    assert peak_bytes() <= bound
    monkeypatch.setattr(subsets, "CHUNK_TERMS", 1 << 40)  # no chunking: the level temporaries dominate
    assert peak_bytes() > bound


def test_the_dp_is_refused_with_its_cost_when_it_does_not_fit():
    from jspgfn.exact_dp_cost import check_dp_fits

    seconds, peak = check_dp_fits(10, "data.csv", available=2**40)
    assert 0 < seconds < 60 and 0 < peak < 2**30
    with pytest.raises(JspgfnError, match=r"data.csv: d=16 does not fit this machine: .*estimated .* GiB"):
        check_dp_fits(16, "data.csv", available=2**20)
    with pytest.raises(JspgfnError, match=r"d=21 is too large .*estimated .* and .* GiB"):
        check_dp_fits(21, "data.csv", available=2**50)


def test_the_estimate_and_the_refusal_include_the_samples():
    """At d=12 the DP alone fits in 0.5 GiB; 10 million exact samples do not, and the message says so."""
    from jspgfn.exact_dp_cost import check_dp_fits, dp_cost

    assert dp_cost(12, 100_000)[0] > dp_cost(12)[0] and dp_cost(12, 100_000)[1] > dp_cost(12)[1]
    check_dp_fits(12, "data.csv", available=2**29)
    with pytest.raises(JspgfnError, match=r"data.csv: d=12 .* 10,000,000 exact samples would take estimated .* GiB"):
        check_dp_fits(12, "data.csv", available=2**29, num_samples=10_000_000)


def test_sampling_memory_stays_bounded_and_the_samples_unchanged(monkeypatch):
    """The sampler's caches forget their oldest states beyond SAMPLER_CACHE_BYTES (they grew with the number
    of samples: 4.1 GB at d=16); what is forgotten is recomputed, so the samples are the same."""
    import tracemalloc

    import jspgfn.exact_sampler as exact_sampler

    posterior = subset_posterior(local_scores(MODEL, _dataset(11, 50, seed=2).train))
    unbounded = exact_sampler.sample_dags(posterior, np.random.default_rng(0), 3000)
    cap = 1 << 18
    monkeypatch.setattr(exact_sampler, "SAMPLER_CACHE_BYTES", cap)
    tracemalloc.start()
    bounded = exact_sampler.sample_dags(posterior, np.random.default_rng(0), 3000)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    np.testing.assert_array_equal(bounded, unbounded)
    largest_state = 24 * (1 << 11)  # masks, probs and cdf of the first layer's 2^d subsets
    assert peak <= 2 * (cap + largest_state) + 4 * bounded.nbytes + (1 << 20)


def test_cli_exact_refuses_a_dp_larger_than_the_memory(tmp_path, monkeypatch, capsys):
    import jspgfn.exact_dp_cost as exact_dp_cost
    from jspgfn.cli import main
    from jspgfn.dataset import write_dataset
    from jspgfn.generate import generate

    data = tmp_path / "d8"
    write_dataset(data, generate("er1", "linear", 8, 50, 10, seed=0))
    monkeypatch.setattr(exact_dp_cost, "available_memory", lambda: 2**20)
    assert main(["exact", str(data), "--no-progress", "--out", str(tmp_path / "e.npz")]) == 2
    assert "does not fit this machine" in capsys.readouterr().err
    assert not (tmp_path / "e.npz").exists()
