"""Metrics of evaluate.py and aggregate.py, tested against sampling error and direct computations."""

import json
import math

import numpy as np
import pytest
import scipy.stats

from jspgfn.aggregate import aggregate_log_pt, aggregate_metrics
from jspgfn.conjugate import log_posterior_theta, posterior_theta
from jspgfn.dataset import Dataset
from jspgfn.errors import DataError, JspgfnError
from jspgfn.evaluate import evaluate, ransac_slope
from jspgfn.exact import compute_exact_posterior, sample_exact
from jspgfn.features import offdiagonal
from jspgfn.generate import generate
from jspgfn.models import LinearGaussian, MLPGaussian, get_graph_prior
from jspgfn.samples import PosteriorSamples

MODEL = LinearGaussian()
NUM = 4000


@pytest.fixture(scope="module")
def setting():
    dataset = generate("er1", "linear", 5, 100, 50, 0)
    posterior = compute_exact_posterior(dataset, MODEL, get_graph_prior("uniform", 5))
    samples = sample_exact(posterior, dataset, MODEL, np.random.default_rng(0), NUM)
    samples.metadata.update(seed=0, wall_seconds=1.5)
    return dataset, posterior, samples, evaluate(samples, dataset, posterior)


def _samples(graphs, theta, model="lingauss", log_weights=None, **metadata):
    return PosteriorSamples(
        graphs=np.asarray(graphs, dtype=np.uint8),
        theta=np.asarray(theta, dtype=np.float64),
        metadata={"method": "test", "model": model, "seed": 1, **metadata},
        log_weights=log_weights,
    )


def _monte_carlo_rmse(probabilities, num):
    """sqrt(E[MSE]) of K iid Bernoulli estimates of the off-diagonal probabilities: sqrt(mean p (1 - p) / K)."""
    p = offdiagonal(probabilities)
    return math.sqrt(np.mean(p * (1 - p)) / num)


# --------------------------------------------------------------- features


def test_identification_and_timing(setting):
    dataset, _, _, metrics = setting
    assert metrics["method"] == "exact" and metrics["model"] == "lingauss" and metrics["seed"] == 0
    assert metrics["dataset_seed"] == 0 and metrics["num_samples"] == NUM and metrics["share_cyclic"] == 0.0
    assert metrics["share_cyclic_dropped"] == 0.0
    assert metrics["wall_seconds"] == 1.5 and metrics["notes"] == []
    json.dumps(metrics, allow_nan=False)


def test_exact_sampler_features_are_within_monte_carlo_error(setting):
    """E[MSE] = mean p (1 - p) / K; the MSE averages 20 such errors, 3x its expected root is a loose bound."""
    _, posterior, _, metrics = setting
    for name in ("edge", "path", "markov"):
        assert metrics[f"{name}_rmse"] < 3 * _monte_carlo_rmse(getattr(posterior, name), NUM)
        assert metrics[f"{name}_pearson"] > 0.99


def test_prior_samples_are_far_from_the_posterior_features(setting):
    dataset, posterior, _, _ = setting
    rng = np.random.default_rng(1)
    graphs = posterior.graphs[rng.integers(len(posterior.graphs), size=NUM)]
    theta = rng.standard_normal(graphs.shape) * graphs
    metrics = evaluate(_samples(graphs, theta), dataset, posterior)
    for name in ("edge", "path", "markov"):
        assert metrics[f"{name}_rmse"] > 10 * _monte_carlo_rmse(getattr(posterior, name), NUM)


def test_constant_features_give_a_null_pearson_with_a_note(setting):
    dataset, posterior, _, _ = setting
    empty = np.zeros((3, 5, 5))
    metrics = evaluate(_samples(empty, empty), dataset, posterior)
    assert metrics["edge_pearson"] is None and metrics["edge_rmse"] > 0
    assert any("edge features" in note for note in metrics["notes"])


# --------------------------------------------------------------- theta


def _entropy(covs, graph):
    """Entropy of P(theta | G, D): sum over nodes of 0.5 (k log(2 pi e) + log det Cov_pa)."""
    total = 0.0
    for j in range(graph.shape[0]):
        pa = np.nonzero(graph[:, j])[0]
        if len(pa):
            total += 0.5 * (len(pa) * math.log(2 * math.pi * math.e) + np.linalg.slogdet(covs[j][np.ix_(pa, pa)])[1])
    return total


def test_theta_cross_entropy_is_the_posterior_entropy_for_exact_samples(setting):
    """-log P(theta | G, D) has mean H(G) and variance |E(G)| / 2 (chi-square) under the exact sampler."""
    dataset, _, samples, metrics = setting
    entropies = [_entropy(posterior_theta(MODEL, dataset.train, g)[1], g) for g in samples.graphs]
    standard_error = math.sqrt(np.mean(samples.graphs.sum(axis=(1, 2)) / 2) / NUM)
    assert metrics["theta_cross_entropy"] == pytest.approx(np.mean(entropies), abs=4 * standard_error)

    rng = np.random.default_rng(2)
    perturbed = samples.theta + 0.05 * rng.standard_normal(samples.theta.shape) * samples.graphs
    worse = evaluate(_samples(samples.graphs, perturbed), dataset)
    assert worse["theta_cross_entropy"] > metrics["theta_cross_entropy"] + 10 * standard_error


def test_theta_cross_entropy_uses_the_exact_posteriors_model(setting):
    dataset, posterior, samples, _ = setting
    other = PosteriorSamples(
        samples.graphs[:50], samples.theta[:50], {**samples.metadata, "model_kwargs": {"obs_var": 0.02}}
    )
    metrics = evaluate(other, dataset, posterior)
    expected = -np.mean(log_posterior_theta(MODEL, dataset.train, other.graphs, other.theta))
    assert metrics["theta_cross_entropy"] == pytest.approx(expected, rel=1e-12)
    assert any("exact posterior's model" in note for note in metrics["notes"])
    assert evaluate(other, dataset)["theta_cross_entropy"] != pytest.approx(expected, rel=1e-3)


# --------------------------------------------------------------- held-out likelihood


def _direct_log_likelihood(dataset, mean):
    logp = scipy.stats.norm.logpdf(dataset.test, mean, 0.1)
    if dataset.test_interventions is not None:
        logp = np.where(dataset.test_interventions == 1, 0.0, logp)
    return logp.sum()


def test_nll_of_one_known_pair_equals_numpy():
    dataset = generate("er1", "linear", 4, 30, 40, 5, interventional_fraction=0.4)
    assert dataset.test_interventions.sum() > 0
    graph, theta = dataset.graph, np.array(dataset.meta["theta"])
    metrics = evaluate(_samples(graph[None], theta[None]), dataset)
    direct = -_direct_log_likelihood(dataset, dataset.test @ (graph * theta))
    assert metrics["nll_expected"] == pytest.approx(direct, rel=1e-12)
    assert metrics["nll_predictive"] == pytest.approx(direct, rel=1e-12)


def test_weighted_predictive_nll_is_a_log_mean_exp():
    dataset = generate("er1", "linear", 4, 30, 40, 6)
    graph, theta = dataset.graph, np.array(dataset.meta["theta"])
    other = theta * 0.9
    weights = np.array([0.3, 0.7])
    metrics = evaluate(
        _samples(np.stack([graph, graph]), np.stack([theta, other]), log_weights=np.log(weights)), dataset
    )
    logliks = np.array([_direct_log_likelihood(dataset, dataset.test @ (graph * t)) for t in (theta, other)])
    assert metrics["nll_expected"] == pytest.approx(-weights @ logliks, rel=1e-12)
    top = logliks.max()
    assert metrics["nll_predictive"] == pytest.approx(-(top + np.log(weights @ np.exp(logliks - top))), rel=1e-12)


def test_nll_of_the_mlp_model_equals_numpy():
    dataset = generate("er1", "mlp", 4, 30, 40, 7)
    graph, theta = dataset.graph, np.array(dataset.meta["theta"])
    metrics = evaluate(_samples(graph[None], theta[None], model="mlp-gauss", model_kwargs={"hidden": 5}), dataset)
    mean = MLPGaussian().mean(theta, graph.astype(float), dataset.test, xp=np)
    assert "theta_cross_entropy" not in metrics
    assert metrics["nll_expected"] == pytest.approx(-_direct_log_likelihood(dataset, mean), rel=1e-12)


def test_wrong_theta_shape_is_refused():
    dataset = generate("er1", "linear", 4, 30, 40, 7)
    with pytest.raises(JspgfnError, match="expects"):
        evaluate(_samples(dataset.graph[None], np.zeros((1, 4, 3))), dataset)


# --------------------------------------------------------------- true graph


def _graph(edges, d=3):
    g = np.zeros((d, d), dtype=np.uint8)
    for i, j in edges:
        g[i, j] = 1
    return g


def test_expected_shd_and_auroc_on_a_hand_made_case():
    chain, fork = _graph([(0, 1), (1, 2)]), _graph([(0, 1), (0, 2)])
    dataset = Dataset(train=np.random.default_rng(0).normal(size=(10, 3)), names=("a", "b", "c"), graph=chain)
    graphs = np.stack([chain, fork])
    metrics = evaluate(_samples(graphs, np.zeros((2, 3, 3)), log_weights=np.log([0.5, 0.5])), dataset)
    # SHD(fork, chain) = 2 (1 -> 2 missing, 0 -> 2 extra). Edge marginals: 0->1: 1, 1->2 and 0->2: 0.5, others 0;
    # positives {1, 0.5} against negatives {0.5, 0, 0, 0}: 7 wins and 1 tie of 8 pairs.
    assert metrics["expected_shd"] == pytest.approx(1.0)
    assert metrics["auroc"] == pytest.approx(7.5 / 8)


def test_auroc_is_null_for_an_empty_true_graph():
    dataset = Dataset(train=np.zeros((5, 3)), names=("a", "b", "c"), graph=np.zeros((3, 3), dtype=np.uint8))
    metrics = evaluate(_samples(_graph([(0, 1)])[None], np.zeros((1, 3, 3))), dataset)
    assert metrics["auroc"] is None and metrics["expected_shd"] == 1.0
    assert any("auroc" in note for note in metrics["notes"])


# --------------------------------------------------------------- cyclic samples (DiBS)


def _mixed_samples(dataset, num=12, seed=3):
    """`num` samples, every third with a cyclic graph (a 2-cycle added), random theta and log-weights."""
    rng = np.random.default_rng(seed)
    d = dataset.num_variables
    graphs = np.triu(rng.random((num, d, d)) < 0.5, k=1).astype(np.uint8)  # DAGs (order 0, 1, ..., d-1)
    cyclic = np.arange(num) % 3 == 1
    graphs[cyclic, 0, 1] = graphs[cyclic, 1, 0] = 1
    theta = rng.standard_normal((num, d, d)) * graphs
    return graphs, theta, rng.normal(size=num), cyclic


def test_cyclic_samples_are_dropped_from_nll_shd_and_auroc_and_their_share_reported():
    """As DiBS's metrics: the same numbers as the file without its cyclic samples, weights renormalised."""
    dataset = generate("er1", "linear", 4, 30, 40, 8)
    graphs, theta, log_weights, cyclic = _mixed_samples(dataset)
    full = evaluate(_samples(graphs, theta, log_weights=log_weights), dataset)
    keep = ~cyclic
    kept = evaluate(_samples(graphs[keep], theta[keep], log_weights=log_weights[keep]), dataset)
    for key in ("nll_expected", "nll_predictive", "expected_shd", "auroc"):
        assert full[key] == pytest.approx(kept[key], rel=1e-12), key
    weights = np.exp(log_weights) / np.exp(log_weights).sum()
    assert full["share_cyclic_dropped"] == pytest.approx(weights[cyclic].sum(), rel=1e-12)
    assert 0 < full["share_cyclic_dropped"] < 1 and full["share_cyclic"] == pytest.approx(cyclic.mean())
    assert kept["share_cyclic_dropped"] == 0.0 and not any("cyclic" in note for note in kept["notes"])
    assert any("4 of 12 samples" in note and "left out" in note for note in full["notes"])
    # theta_cross_entropy keeps every sample (its current treatment), so it differs.
    assert full["theta_cross_entropy"] != pytest.approx(kept["theta_cross_entropy"], rel=1e-6)

    uniform = evaluate(_samples(graphs, theta), dataset)
    assert uniform["share_cyclic_dropped"] == pytest.approx(cyclic.mean())
    assert uniform["expected_shd"] == pytest.approx(
        evaluate(_samples(graphs[keep], theta[keep]), dataset)["expected_shd"]
    )


def test_only_cyclic_samples_give_null_nll_shd_and_auroc_with_a_note():
    dataset = generate("er1", "linear", 4, 30, 40, 8)
    graphs, theta, _, cyclic = _mixed_samples(dataset)
    metrics = evaluate(_samples(graphs[cyclic], theta[cyclic]), dataset)
    for key in ("nll_expected", "nll_predictive", "expected_shd", "auroc"):
        assert metrics[key] is None, key
    assert metrics["share_cyclic_dropped"] == 1.0 and metrics["num_test"] == 40
    assert any("every sample" in note and "cyclic" in note for note in metrics["notes"])
    json.dumps(metrics, allow_nan=False)


# --------------------------------------------------------------- log P_T against log R


def test_ransac_recovers_a_slope_despite_outliers():
    rng = np.random.default_rng(0)
    log_r = rng.uniform(-100, 0, size=300)
    log_pt = 0.7 * log_r - 3 + 0.1 * rng.standard_normal(300)
    low = np.argsort(log_r)[:30]  # outliers with leverage: far above the line at the low-reward end
    log_pt[low] += rng.uniform(40, 80, size=30)
    slope, intercept = ransac_slope(log_r, log_pt)
    assert slope == pytest.approx(0.7, abs=0.01) and intercept == pytest.approx(-3, abs=0.5)
    assert abs(np.polyfit(log_r, log_pt, 1)[0] - 0.7) > 0.05  # least squares would be fooled


def test_log_pt_slope_uses_the_reward_computed_from_the_data(setting):
    dataset, _, samples, _ = setting
    x = dataset.train
    # log R = log P(D | G, theta) + log P(theta | G) (uniform graph prior), computed here with scipy.
    mean = np.einsum("ni,kij->knj", x, samples.graphs * samples.theta)
    log_r = scipy.stats.norm.logpdf(x[None], mean, 0.1).sum(axis=(1, 2)) + (
        scipy.stats.norm.logpdf(samples.theta) * samples.graphs
    ).sum(axis=(1, 2))
    log_pt = 0.8 * log_r + 2.0
    log_pt[::10] -= 30.0
    samples = PosteriorSamples(samples.graphs, samples.theta, samples.metadata, extras={"log_prob_terminating": log_pt})
    metrics = evaluate(samples, dataset)
    assert metrics["log_pt_slope"] == pytest.approx(0.8, abs=1e-6)
    assert metrics["log_pt_intercept"] == pytest.approx(2.0, abs=1e-3)
    assert metrics["log_pt_pearson"] == pytest.approx(np.corrcoef(log_r, log_pt)[0, 1], abs=1e-9)
    points = metrics["log_pt_points"]
    np.testing.assert_allclose(points["log_reward"], log_r, rtol=1e-9)
    np.testing.assert_array_equal(points["log_pt"], log_pt)
    np.testing.assert_array_equal(points["num_edges"], samples.graphs.sum(axis=(1, 2)))
    assert points["sample"] == list(range(samples.num_samples))


def test_log_pt_points_are_the_finite_ones_fitted(setting):
    dataset, _, samples, _ = setting
    samples = PosteriorSamples(samples.graphs[:40], samples.theta[:40], samples.metadata)
    log_pt = np.linspace(-50.0, -10.0, 40)
    log_pt[[3, 17]] = -np.inf  # e.g. a beam search that found no trajectory
    samples.extras["log_prob_terminating"] = log_pt
    metrics = evaluate(samples, dataset)
    points = metrics["log_pt_points"]
    expected = [k for k in range(40) if k not in (3, 17)]
    assert points["sample"] == expected and points["log_pt"] == log_pt[expected].tolist()
    assert len(points["log_reward"]) == len(points["num_edges"]) == 38
    assert any("2 samples with a non-finite" in note for note in metrics["notes"])
    json.dumps(metrics, allow_nan=False)


# --------------------------------------------------------------- aggregate


def test_aggregate_writes_one_row_per_file_and_names_a_missing_file(tmp_path):
    paths = []
    for seed in range(3):
        path = tmp_path / f"run{seed}" / "metrics.json"
        path.parent.mkdir()
        path.write_text(
            json.dumps(
                {
                    "edge_rmse": 0.1 * seed,
                    "method": "exact",
                    "seed": seed,
                    "model": "lingauss",
                    "notes": ["a note"],
                    "auroc": None,
                }
            )
        )
        paths.append(path)
    table = aggregate_metrics(paths, tmp_path / "out" / "table.csv")
    assert len(table) == 3 and list(table.columns[:4]) == ["method", "model", "seed", "metrics_file"]
    assert "notes" not in table.columns and list(table["seed"]) == [0, 1, 2]
    assert (tmp_path / "out" / "table.csv").read_text().count("\n") == 4

    missing = tmp_path / "run9" / "metrics.json"
    with pytest.raises(DataError, match="run9/metrics.json: file not found"):
        aggregate_metrics(paths + [missing], tmp_path / "other.csv")
    (tmp_path / "bad.json").write_text("[1, 2]")
    with pytest.raises(DataError, match="bad.json"):
        aggregate_metrics([tmp_path / "bad.json"], tmp_path / "other.csv")
    assert not (tmp_path / "other.csv").exists()


def test_aggregate_features_long_table(tmp_path, setting):
    """evaluate() keeps the per-pair features; aggregate_features() lays them out one row per pair."""
    from jspgfn.aggregate import aggregate_features

    dataset, exact, _, metrics = setting
    metrics = {**metrics, "label": "reference"}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(metrics))
    table = aggregate_features([path], tmp_path / "features.csv", {"preset": "test"})
    d = dataset.num_variables
    assert len(table) == 3 * d * (d - 1)
    edge = table[table.feature == "edge"]
    np.testing.assert_allclose(edge.exact, offdiagonal(exact.edge))
    i, j = int(edge.source.iloc[1]), int(edge.target.iloc[1])
    assert edge.exact.iloc[1] == pytest.approx(exact.edge[i, j])
    assert set(table.label) == {"reference"} and set(table.preset) == {"test"}
    assert np.sqrt(np.mean((edge.estimate - edge.exact) ** 2)) == pytest.approx(metrics["edge_rmse"])


def _write_run(path, label, dataset_seed, points=None):
    metrics = {"method": "jspgfn", "label": label, "display_name": "JSP-GFN", "dataset_seed": dataset_seed}
    if points is not None:
        metrics["log_pt_points"] = points
    path.write_text(json.dumps(metrics))
    return path


def test_aggregate_log_pt_long_table_and_cli(tmp_path):
    from jspgfn import cli

    points = {"sample": [0, 2], "num_edges": [3, 5], "log_reward": [-10.0, -12.5], "log_pt": [-11.0, -13.0]}
    with_points = _write_run(tmp_path / "a.json", "jspgfn-mlp", 4, points)
    without = _write_run(tmp_path / "b.json", "dibs-mlp", 4)
    table = aggregate_log_pt([with_points, without], tmp_path / "log_pt.csv", {"preset": "test"})
    assert list(table.columns) == [
        "preset",
        "label",
        "display_name",
        "method",
        "dataset_seed",
        "sample",
        "num_edges",
        "log_reward",
        "log_pt",
    ]
    assert len(table) == 2 and set(table.label) == {"jspgfn-mlp"} and list(table["sample"]) == [0, 2]
    assert list(table.log_pt) == [-11.0, -13.0] and set(table.preset) == {"test"} and set(table.dataset_seed) == {4}

    # No run with points: a header-only file.
    empty = aggregate_log_pt([without], tmp_path / "empty.csv")
    assert empty.empty and (tmp_path / "empty.csv").read_text().strip().split(",")[0] == "label"

    bad = _write_run(tmp_path / "bad.json", "x", 0, {"log_reward": [1.0], "log_pt": [1.0, 2.0]})
    with pytest.raises(DataError, match="bad.json: log_pt_points lists have different lengths"):
        aggregate_log_pt([bad], tmp_path / "bad.csv")
    assert not (tmp_path / "bad.csv").exists()

    argv = ["aggregate", str(with_points), str(without), "--column", "preset=cli", "--out", str(tmp_path / "m.csv")]
    assert cli.main([*argv, "--log-pt-out", str(tmp_path / "cli.csv")]) == 0
    assert len(_lines(tmp_path / "cli.csv")) == 3  # header and two points
    metrics_csv = (tmp_path / "m.csv").read_text()
    assert "log_pt_points" not in metrics_csv and "-11.0" not in metrics_csv


def _lines(path):
    return path.read_text().strip().splitlines()
