"""Baselines: their folders and specs, valid aligned outputs, DAG extensions, MC3 against the exact posterior."""

import numpy as np
import pytest

from jspgfn import cli
from jspgfn.conjugate import log_posterior_theta
from jspgfn.dataset import write_dataset
from jspgfn.errors import JspgfnError
from jspgfn.exact import compute_exact_posterior
from jspgfn.generate import generate
from jspgfn.graphs import is_dag
from jspgfn.models import LinearGaussian, get_graph_prior
from jspgfn.samples import load_samples
from jspgfn_baselines import fit_baseline, specs
from jspgfn_baselines.shared.dag_extension import from_causallearn, random_dag_extension, v_structures

# Every example of every method.yaml: a new baseline folder is tested without editing this file.
EXAMPLES = [(name, i, example) for name, spec in specs().items() for i, example in enumerate(spec["examples"])]


@pytest.fixture(scope="module")
def dataset4():
    return generate("er1", "linear", 4, 100, 50, seed=11)


@pytest.mark.parametrize("name,index,example", EXAMPLES, ids=[f"{n}-{i}" for n, i, _ in EXAMPLES])
def test_baseline_outputs_valid_aligned_samples(name, index, example, dataset4):
    samples = fit_baseline(name, dataset4, "lingauss", 0, **example)
    k = samples.num_samples
    assert samples.graphs.shape == (k, 4, 4) and samples.theta.shape == (k, 4, 4)
    assert np.all(samples.graphs.diagonal(axis1=1, axis2=2) == 0)
    if name.startswith("dibs"):
        assert 0 <= samples.share_cyclic() <= 1  # DiBS does not promise DAGs; evaluation reports the share
    else:
        assert is_dag(samples.graphs).all()
    # Aligned: theta is exactly 0 off its own graph and non-zero on it.
    assert np.all(samples.theta[samples.graphs == 0] == 0)
    assert np.all(samples.theta[samples.graphs == 1] != 0)
    meta = samples.metadata
    assert meta["method"] == name and meta["seed"] == 0 and meta["wall_seconds"] > 0
    assert meta["hyperparameters"] == {**{k: v["default"] for k, v in specs()[name]["parameters"].items()}, **example}
    assert meta["display_name"] == specs()[name]["display_name"]
    assert (samples.log_weights is not None) == (name == "dibs-mixture")


def test_bootstrap_theta_drawn_from_its_own_graph(dataset4):
    """Each theta_k is a posterior draw for G_k: far likelier under its own graph than under a shuffled one."""
    samples = fit_baseline("b-pc", dataset4, "lingauss-diag", 1, num_bootstrap=30)
    model = LinearGaussian()
    own = log_posterior_theta(model, dataset4.train, samples.graphs, samples.theta)
    assert np.all(np.isfinite(own))
    differs = [k for k in range(1, samples.num_samples) if not np.array_equal(samples.graphs[k], samples.graphs[0])]
    if differs:
        k = differs[0]
        masked = samples.theta[0] * samples.graphs[k]
        assert log_posterior_theta(model, dataset4.train, samples.graphs[k], masked) < own[k]


def test_linear_only_baseline_refuses_mlp_in_one_line():
    ds = generate("er1", "mlp", 4, 30, 0, seed=0)
    with pytest.raises(JspgfnError, match="supports only the likelihood model") as info:
        fit_baseline("b-ges", ds, "mlp-gauss", 0)
    assert "\n" not in str(info.value)


def test_bootstrap_refuses_interventional_data():
    ds = generate("er1", "linear", 4, 50, 0, seed=0, interventional_fraction=0.3)
    with pytest.raises(JspgfnError, match="only observational data"):
        fit_baseline("b-pc", ds, "lingauss-diag", 0, num_bootstrap=2)


@pytest.mark.parametrize("name", ["b-ges", "b-pc"])
def test_bootstrap_on_a_single_column_gives_the_empty_graph(tmp_path, capsys, name):
    """One variable: the empty graph is the only DAG (causal-learn's GES raised an IndexError on it)."""
    table = tmp_path / "one.csv"
    table.write_text("a\n1\n2\n3\n4\n5\n1.5\n")
    out = tmp_path / "s.npz"
    status = cli.main(["baseline", name, str(table), "--param", "num_bootstrap=3", "--out", str(out)])
    assert status == 0, capsys.readouterr().err
    samples = load_samples(out)
    assert samples.graphs.shape == (3, 1, 1) and not samples.graphs.any() and not samples.theta.any()


def test_bootstrap_failure_says_why_and_what_to_try(tmp_path, capsys):
    """Two rows: every resample's correlation matrix is singular; the one line says so and what to do."""
    table = tmp_path / "two.csv"
    table.write_text("a,b\n1,2\n3,1\n")
    status = cli.main(["baseline", "b-pc", str(table), "--param", "num_bootstrap=3", "--out", str(tmp_path / "s.npz")])
    err = capsys.readouterr().err.strip()
    assert status == 2 and len(err.splitlines()) == 1, err
    assert "two.csv" in err and "singular correlation matrix" in err and "give more rows" in err
    assert not (tmp_path / "s.npz").exists()


def test_bootstrap_failure_message_for_cpdags_without_extension():
    from jspgfn_baselines.shared.bootstrap import failure_message

    message = failure_message("b-pc", "d.csv", {"singular": 1, "no extension": 20}, 50, 5)
    assert "20 of 21 learnt CPDAGs had no consistent DAG extension" in message
    assert "alpha halved 5 times" in message and "max_alpha_halvings" in message and "b-ges" in message


def test_dibs_refuses_degenerate_prior():
    ds = generate("er1", "linear", 5, 30, 0, seed=0)
    with pytest.raises(JspgfnError, match="edge probability >= 1"):
        fit_baseline("dibs", ds, "lingauss-diag", 0, edges_per_node=2, steps=1)


def test_cli_baseline_writes_samples(tmp_path, dataset4):
    write_dataset(tmp_path / "ds", dataset4)
    out = tmp_path / "s.npz"
    assert (
        cli.main(
            ["baseline", "b-ges", str(tmp_path / "ds"), "--seed", "3", "--param", "num_bootstrap=5", "--out", str(out)]
        )
        == 0
    )
    assert load_samples(out).num_samples == 5
    assert (
        cli.main(["baseline", "b-ges", str(tmp_path / "ds"), "--model", "mlp-gauss", "--out", str(tmp_path / "t.npz")])
        == 2
    )
    assert not (tmp_path / "t.npz").exists()


# ------------------------------------------------------------------ DAG extension


def random_cpdag_like(rng, d):
    """A DAG, its skeleton, and its v-structure edges directed (the rest undirected): a PDAG it extends."""
    from jspgfn.graphs import sample_er_dag

    dag = sample_er_dag(rng, d, 1.5 * d)
    directed = np.zeros_like(dag)
    for i, k, j in v_structures(dag):
        directed[i, k] = directed[j, k] = 1
    undirected = ((dag | dag.T) & ~(directed | directed.T)).astype(np.uint8)
    return dag, directed, undirected


def test_extension_keeps_skeleton_and_v_structures():
    rng = np.random.default_rng(0)
    for _ in range(200):
        dag, directed, undirected = random_cpdag_like(rng, int(rng.integers(3, 8)))
        ext = random_dag_extension(directed, undirected, rng)
        assert ext is not None
        assert is_dag(ext)
        np.testing.assert_array_equal(ext | ext.T, dag | dag.T)  # same skeleton
        assert np.all(ext[directed == 1] == 1)  # directed edges kept
        assert v_structures(ext) == v_structures(dag)


def test_extension_is_random():
    chain = np.zeros((3, 3), np.uint8)
    undirected = chain.copy()
    undirected[0, 1] = undirected[1, 0] = undirected[1, 2] = undirected[2, 1] = 1
    rng = np.random.default_rng(0)
    results = {random_dag_extension(chain, undirected, rng).tobytes() for _ in range(100)}
    assert len(results) == 3  # 0-1-2 has three extensions without a v-structure


def test_non_extendable_pdag_returns_none():
    # An undirected chordless 4-cycle: every orientation adds a v-structure or a cycle.
    undirected = np.zeros((4, 4), np.uint8)
    for i, j in [(0, 1), (1, 2), (2, 3), (3, 0)]:
        undirected[i, j] = undirected[j, i] = 1
    assert random_dag_extension(np.zeros((4, 4), np.uint8), undirected, np.random.default_rng(0)) is None
    # A directed cycle cannot be extended either.
    cycle = np.zeros((3, 3), np.uint8)
    cycle[0, 1] = cycle[1, 2] = cycle[2, 0] = 1
    assert random_dag_extension(cycle, np.zeros((3, 3), np.uint8), np.random.default_rng(0)) is None


def test_causallearn_encoding():
    g = np.zeros((3, 3), int)
    g[1, 0], g[0, 1] = 1, -1  # 0 -> 1
    g[1, 2] = g[2, 1] = -1  # 1 - 2
    directed, undirected = from_causallearn(g)
    assert directed[0, 1] == 1 and directed.sum() == 1
    assert undirected[1, 2] == undirected[2, 1] == 1 and undirected.sum() == 2


# ------------------------------------------------------------------ MC3 vs exact


def mc3_total_variation(kind, hastings):
    """TV distance between the MC3 graph frequencies and the exact P(G | D) on d=3 (25 DAGs).

    Weak data (N=10, noise variance 1) keep the posterior spread over all DAGs, where the
    neighbourhood sizes |nb(G)| (4 to 6) differ enough for a missing Hastings term to show.
    """
    ds = generate("er1", "linear", 3, 10, 0, seed=3)
    model = LinearGaussian(obs_var=1.0)
    exact = compute_exact_posterior(ds, model, get_graph_prior("uniform", 3))
    index = {g.tobytes(): i for i, g in enumerate(exact.graphs)}
    samples = fit_baseline(
        kind,
        ds,
        "lingauss-diag",
        0,
        obs_var=1.0,
        num_chains=16,
        burn_in=1000,
        thinning=10,
        num_samples=32_000,
        proposal_std=0.5 if kind == "gibbs-mc3" else 0.3,
        hastings_correction=hastings,
    )
    freq = np.bincount([index[g.tobytes()] for g in samples.graphs], minlength=len(exact.graphs))
    return 0.5 * np.abs(freq / freq.sum() - np.exp(exact.log_probs)).sum()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["mh-mc3", "gibbs-mc3"])
def test_mc3_matches_exact_posterior(kind):
    # Measured: 0.008-0.011 with the Hastings correction, 0.041-0.042 without it (32,000 draws).
    assert mc3_total_variation(kind, hastings=True) < 0.025


@pytest.mark.slow
def test_mc3_without_hastings_correction_fails_the_same_check():
    """The negative control: the original implementation's missing Hastings term is detected."""
    assert mc3_total_variation("gibbs-mc3", hastings=False) > 0.025
