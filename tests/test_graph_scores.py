"""log P(D | G) of whole graphs (conjugate.log_marginal_likelihood_graphs) and the graph metrics that
`jspgfn evaluate --exact` derives from it: num_edges_mean, exact_num_edges, log_pdg_mean, log_pdg_best,
exact_log_pdg_mean. Checked against a dense N x N Gaussian density, the enumerated posterior, the subset
dynamic program, direct counts and Monte Carlo error."""

import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from jspgfn.conjugate import log_marginal_likelihood_graphs
from jspgfn.evaluate import evaluate
from jspgfn.exact import compute_exact_posterior, sample_exact
from jspgfn.exact_dp import local_scores, subset_posterior
from jspgfn.exact_dp_posterior import compute_dp_posterior
from jspgfn.exact_sampler import log_prob_dags, sample_dags
from jspgfn.generate import generate
from jspgfn.graphs import enumerate_dags, is_dag
from jspgfn.models import LinearGaussian, get_graph_prior
from jspgfn.report.tables import table_exact_graphs
from jspgfn.samples import PosteriorSamples

MODEL = LinearGaussian(obs_var=0.3, prior_mean=0.2, prior_var=2.0)


def dense_log_marginal(model, x, graph, interventions=None, log_edge_weight=0.0):
    """log P(D | G) + log_edge_weight |E| by the N x N covariance of each node's marginal (no Woodbury):
    x_j ~ N(X_pa mu0 1, s2 I + v0 X_pa X_pa^T) over the rows not intervened on j."""
    total = 0.0
    for j in range(x.shape[1]):
        rows = np.ones(len(x), bool) if interventions is None else interventions[:, j] == 0
        parents = np.flatnonzero(graph[:, j])
        xp = x[rows][:, parents]
        mean = xp @ np.full(len(parents), model.prior_mean)
        cov = model.obs_var * np.eye(rows.sum()) + model.prior_var * xp @ xp.T
        total += scipy.stats.multivariate_normal(mean, cov).logpdf(x[rows, j])
    return total + log_edge_weight * graph.sum()


@pytest.fixture(scope="module")
def data4():
    return generate("er1", "linear", 4, 30, 10, 3, obs_var=0.1, interventional_fraction=0.3)


def test_graph_scores_equal_the_dense_gaussian_density(data4):
    dags = enumerate_dags(4)
    graphs = dags[np.random.default_rng(0).choice(len(dags), 25, replace=False)]
    prior = get_graph_prior("erdos_renyi", 4)
    assert prior.log_edge_weight != 0
    for interventions in (None, data4.train_interventions):
        assert interventions is None or interventions.any()
        scores = log_marginal_likelihood_graphs(MODEL, data4.train, graphs, interventions, graph_prior=prior)
        direct = [dense_log_marginal(MODEL, data4.train, g, interventions, prior.log_edge_weight) for g in graphs]
        np.testing.assert_allclose(scores, direct, rtol=1e-10, atol=1e-8)
    one = log_marginal_likelihood_graphs(MODEL, data4.train, graphs[3])
    assert isinstance(one, float) and one == pytest.approx(dense_log_marginal(MODEL, data4.train, graphs[3]), abs=1e-8)
    # Small batches (every distinct parent set in its own batch) give the same numbers.
    np.testing.assert_allclose(
        log_marginal_likelihood_graphs(MODEL, data4.train, graphs, batch_size=1),
        log_marginal_likelihood_graphs(MODEL, data4.train, graphs),
        rtol=0,
        atol=1e-9,
    )


def test_a_self_loop_is_refused(data4):
    graph = np.zeros((4, 4), np.uint8)
    graph[2, 2] = 1
    with pytest.raises(Exception, match="self-loop"):
        log_marginal_likelihood_graphs(MODEL, data4.train, graph)


@pytest.mark.parametrize("prior_name", ["uniform", "erdos_renyi"])
def test_graph_scores_are_the_enumerated_log_posterior_up_to_log_z(data4, prior_name):
    prior = get_graph_prior(prior_name, 4)
    posterior = compute_exact_posterior(data4, MODEL, prior)
    scores = log_marginal_likelihood_graphs(
        MODEL, data4.train, posterior.graphs, data4.train_interventions, graph_prior=prior
    )
    log_z = scores - posterior.log_probs
    assert np.ptp(log_z) < 1e-9  # the same constant log Z for all 543 DAGs


def test_graph_scores_are_the_subset_dp_log_posterior_up_to_log_z():
    data = generate("er2", "linear", 7, 40, 10, 1)
    model, prior = LinearGaussian(), get_graph_prior("edge", 7, beta=0.3)
    posterior = subset_posterior(local_scores(model, data.train, graph_prior=prior))
    graphs = sample_dags(posterior, np.random.default_rng(0), 200)
    scores = log_marginal_likelihood_graphs(model, data.train, graphs, graph_prior=prior)
    np.testing.assert_allclose(scores - posterior.log_z, log_prob_dags(posterior, graphs), rtol=0, atol=1e-8)


# --------------------------------------------------------------- evaluate --exact


def _samples(graphs, log_weights=None):
    graphs = np.asarray(graphs, dtype=np.uint8)
    return PosteriorSamples(
        graphs=graphs,
        theta=np.zeros(graphs.shape),
        metadata={"method": "test", "model": "lingauss", "seed": 0},
        log_weights=log_weights,
    )


def test_evaluate_graph_metrics_equal_direct_computations(data4):
    prior = get_graph_prior("erdos_renyi", 4)
    exact = compute_exact_posterior(data4, MODEL, prior)
    rng = np.random.default_rng(1)
    graphs = exact.graphs[rng.choice(len(exact.graphs), 9)]
    cyclic = np.zeros((4, 4), np.uint8)
    cyclic[0, 1] = cyclic[1, 2] = cyclic[2, 0] = cyclic[3, 0] = 1
    graphs = np.concatenate([graphs, cyclic[None]])
    log_weights = rng.normal(size=len(graphs))
    metrics = evaluate(_samples(graphs, log_weights), data4, exact)

    weights = np.exp(log_weights) / np.exp(log_weights).sum()
    edges = np.array([int(g.sum()) for g in graphs])
    assert metrics["num_edges_mean"] == pytest.approx(float(np.dot(weights, edges)), abs=1e-12)
    probs = np.exp(exact.log_probs)
    exact_edges = np.array([g.sum() for g in exact.graphs])
    assert metrics["exact_num_edges"] == pytest.approx(float(np.dot(probs, exact_edges)), abs=1e-9)

    direct = np.array(
        [dense_log_marginal(MODEL, data4.train, g, data4.train_interventions, prior.log_edge_weight) for g in graphs]
    )
    acyclic = is_dag(graphs)
    assert list(acyclic) == [True] * 9 + [False]
    kept = weights[acyclic] / weights[acyclic].sum()
    assert metrics["log_pdg_mean"] == pytest.approx(float(np.dot(kept, direct[acyclic])), abs=1e-8)
    assert metrics["log_pdg_best"] == pytest.approx(float(direct[acyclic].max()), abs=1e-8)
    everything = np.array(
        [
            dense_log_marginal(MODEL, data4.train, g, data4.train_interventions, prior.log_edge_weight)
            for g in exact.graphs
        ]
    )
    assert metrics["exact_log_pdg_mean"] == pytest.approx(float(np.dot(probs, everything)), abs=1e-7)
    assert any("1 samples with a cyclic graph or weight 0 left out" in note for note in metrics["notes"])
    # The best listed DAG of the posterior scores at least as high as any sample.
    assert metrics["log_pdg_best"] <= everything.max() + 1e-9


def test_the_best_sample_is_the_highest_scoring_one_whatever_its_weight(data4):
    exact = compute_exact_posterior(data4, MODEL, get_graph_prior("uniform", 4))
    top, low = np.argmax(exact.log_probs), np.argmin(exact.log_probs)
    samples = _samples(exact.graphs[[low, top]], log_weights=np.array([0.0, -30.0]))
    metrics = evaluate(samples, data4, exact)
    scores = log_marginal_likelihood_graphs(MODEL, data4.train, exact.graphs[[low, top]], data4.train_interventions)
    assert metrics["log_pdg_best"] == pytest.approx(scores[1], abs=1e-9)
    assert metrics["log_pdg_mean"] == pytest.approx(scores[0], abs=1e-6)  # weight e^-30 on the best
    assert metrics["num_edges_mean"] == pytest.approx(exact.graphs[low].sum(), abs=1e-9)


def test_exact_samples_match_the_exact_expectations_within_monte_carlo_error():
    data = generate("er1", "linear", 5, 100, 20, 2)
    exact = compute_exact_posterior(data, LinearGaussian(), get_graph_prior("uniform", 5))
    num = 4000
    samples = sample_exact(exact, data, LinearGaussian(), np.random.default_rng(3), num)
    metrics = evaluate(samples, data, exact)
    probs = np.exp(exact.log_probs)
    edges = exact.graphs.reshape(len(probs), -1).sum(axis=1)
    scores = log_marginal_likelihood_graphs(LinearGaussian(), data.train, exact.graphs)
    for key, exact_key, values in (
        ("num_edges_mean", "exact_num_edges", edges),
        ("log_pdg_mean", "exact_log_pdg_mean", scores),
    ):
        sd = math.sqrt(np.dot(probs, values**2) - np.dot(probs, values) ** 2)
        assert sd > 0
        assert abs(metrics[key] - metrics[exact_key]) < 4 * sd / math.sqrt(num), key
    # Prior samples (every DAG equally likely) are far off: the check can fail.
    index = np.random.default_rng(4).choice(len(probs), num)
    far = evaluate(_samples(exact.graphs[index]), data, exact)
    assert far["exact_log_pdg_mean"] - far["log_pdg_mean"] > 10 * np.std(scores[index]) / math.sqrt(num)
    assert not any("log_pdg" in note for note in metrics["notes"])


def test_subset_dp_posterior_gives_a_monte_carlo_expectation_with_its_standard_error():
    data = generate("er1", "linear", 5, 100, 20, 5)
    model, prior = LinearGaussian(), get_graph_prior("uniform", 5)
    listed = compute_exact_posterior(data, model, prior)
    num = 20_000
    sampled = compute_dp_posterior(data, model, prior, num_samples=num, seed=0)
    samples = sample_exact(listed, data, model, np.random.default_rng(1), 500)
    by_list, by_dp = evaluate(samples, data, listed), evaluate(samples, data, sampled)
    for key in ("num_edges_mean", "log_pdg_mean", "log_pdg_best"):
        assert by_dp[key] == by_list[key]
    assert by_dp["exact_num_edges"] == pytest.approx(by_list["exact_num_edges"], abs=1e-9)  # exact edge marginals
    note = next(note for note in by_dp["notes"] if note.startswith("exact_log_pdg_mean: Monte Carlo"))
    stderr = float(note.rsplit("standard error ", 1)[1].rstrip(")"))
    assert stderr > 0 and abs(by_dp["exact_log_pdg_mean"] - by_list["exact_log_pdg_mean"]) < 4 * stderr


def test_graph_metrics_need_the_exact_posterior_and_its_linear_model(data4):
    exact = compute_exact_posterior(data4, MODEL, get_graph_prior("uniform", 4))
    samples = sample_exact(exact, data4, MODEL, np.random.default_rng(0), 50)
    without = evaluate(samples, data4)
    assert not {"num_edges_mean", "exact_num_edges", "log_pdg_mean", "log_pdg_best"} & set(without)
    exact.metadata.pop("model_kwargs")
    metrics = evaluate(samples, data4, exact)
    assert metrics["log_pdg_mean"] is None and metrics["log_pdg_best"] is None and metrics["exact_log_pdg_mean"] is None
    assert metrics["num_edges_mean"] == pytest.approx(samples.graphs.sum() / 50)
    assert any("records no linear Gaussian model" in note for note in metrics["notes"])


# --------------------------------------------------------------- the table (jspgfn report table-exact-graphs)


def test_table_exact_graphs_means_over_the_datasets_with_the_exact_posterior():
    rows = []
    for seed, (edges, exact_edges, mean, best, exact_mean) in enumerate(
        [(30.0, 40.0, 100.0, 110.0, 120.0), (50.0, 44.0, 200.0, 230.0, 215.0)]
    ):
        rows.append(
            {
                "label": "gibbs-mc3",
                "display_name": "Gibbs-MC3",
                "dataset_seed": seed,
                "num_edges_mean": edges,
                "exact_num_edges": exact_edges,
                "log_pdg_mean": mean,
                "log_pdg_best": best,
                "exact_log_pdg_mean": exact_mean,
            }
        )
    rows.append({"label": "gibbs-mc3", "display_name": "Gibbs-MC3", "dataset_seed": 2, "nll_expected": -5.0})
    rows.append(
        {
            "label": "jspgfn-diag",
            "display_name": "JSP-GFN (diag)",
            "dataset_seed": 0,
            "num_edges_mean": 140.0,
            "exact_num_edges": 40.0,
            "log_pdg_mean": 90.0,
            "log_pdg_best": np.nan,
            "exact_log_pdg_mean": 120.0,
        }
    )
    numbers, shown = table_exact_graphs(pd.DataFrame(rows))
    assert list(numbers["label"]) == ["gibbs-mc3", "jspgfn-diag"]  # the paper's order
    gibbs = numbers.iloc[0]
    assert gibbs["n"] == 2  # dataset 2 has no exact posterior: left out
    assert gibbs["num_edges_mean"] == 40.0 and gibbs["exact_num_edges"] == 42.0
    assert gibbs["log_pdg_mean"] == 150.0 and gibbs["log_pdg_best"] == 170.0 and gibbs["exact_log_pdg_mean"] == 167.5
    assert gibbs["log_pdg_gap"] == 17.5  # (20 + 15) / 2
    half = scipy.stats.t.ppf(0.975, 1) * np.std([20.0, 15.0], ddof=1) / math.sqrt(2)
    assert (gibbs["log_pdg_gap_low"], gibbs["log_pdg_gap_high"]) == pytest.approx((17.5 - half, 17.5 + half))
    assert list(shown.columns) == [
        "Method",
        "Edges (per sample)",
        "Edges (exact E)",
        "log P(D|G) (mean)",
        "log P(D|G) (best)",
        "log P(D|G) (exact E)",
        "Gap to exact (log P(D|G))",
        "Datasets",
    ]
    assert shown.iloc[1].tolist() == ["JSP-GFN (diag)", "140.0", "40.0", "90.0", "n/a", "120.0", "30.0", "1"]
    with pytest.raises(ValueError, match="--exact"):
        table_exact_graphs(pd.DataFrame([{"label": "x", "nll_expected": 1.0}]))


def test_evaluate_aggregate_and_report_cli_chain(tmp_path, capsys, data4):
    """metrics.json from `jspgfn evaluate --exact` -> metrics.csv -> the table, through the command line."""
    from jspgfn import cli
    from jspgfn.dataset import write_dataset
    from jspgfn.exact import save_exact
    from jspgfn.samples import save_samples

    exact = compute_exact_posterior(data4, LinearGaussian(), get_graph_prior("uniform", 4))
    write_dataset(tmp_path / "data", data4)
    save_exact(tmp_path / "exact.npz", exact)
    samples = sample_exact(exact, data4, LinearGaussian(), np.random.default_rng(0), 200)
    samples.metadata["seed"] = 0
    save_samples(tmp_path / "samples.npz", samples)
    with_exact, without = tmp_path / "a.json", tmp_path / "b.json"
    base = ["evaluate", str(tmp_path / "samples.npz"), str(tmp_path / "data"), "--label", "exact"]
    assert cli.main([*base, "--exact", str(tmp_path / "exact.npz"), "--out", str(with_exact)]) == 0
    assert cli.main([*base, "--out", str(without)]) == 0
    assert cli.main(["aggregate", str(with_exact), str(without), "--out", str(tmp_path / "metrics.csv")]) == 0
    metrics = pd.read_csv(tmp_path / "metrics.csv")
    for column in ("num_edges_mean", "exact_num_edges", "log_pdg_mean", "log_pdg_best", "exact_log_pdg_mean"):
        assert metrics[column].notna().tolist() == [True, False], column
    assert metrics["num_edges_mean"][0] == pytest.approx(samples.graphs.sum() / 200)
    argv = ["report", "table-exact-graphs", "--metrics", str(tmp_path / "metrics.csv"), "--out", str(tmp_path / "t")]
    assert cli.main(argv) == 0
    table = pd.read_csv(tmp_path / "t.csv")
    assert table["n"].tolist() == [1]
    assert table["log_pdg_best"][0] == pytest.approx(metrics["log_pdg_best"][0])
    assert (tmp_path / "t.pdf").stat().st_size > 0 and "Gap to exact" in (tmp_path / "t.tex").read_text()
    # Runs evaluated without --exact only: one line, nothing written.
    assert cli.main(["aggregate", str(without), "--out", str(tmp_path / "none.csv")]) == 0
    capsys.readouterr()
    argv = ["report", "table-exact-graphs", "--metrics", str(tmp_path / "none.csv"), "--out", str(tmp_path / "t2")]
    assert cli.main(argv) == 2
    assert capsys.readouterr().err.count("\n") == 1 and not (tmp_path / "t2.csv").exists()
