"""The exact policy at the states one edge short of the complete DAG (option last_step_closed_form,
gflownet/last_step.py).

Against an independent answer: the forward policy that samples the exact posterior (exact_flows.optimal_flows over
every DAG on 4 nodes, scored by conjugate.py's float64 marginal likelihood), at every 5-edge DAG, with two graph
priors and with interventions. The network keeps its own outputs everywhere else (and theta's everywhere), reads
the data it is given (a run of a group), passes no gradient at those states, and the option is refused where it
does not hold. Trained with the option, a d=3 sampler matches the exact posterior.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jspgfn.conjugate import log_marginal_likelihood_graphs
from jspgfn.errors import JspgfnError
from jspgfn.generate import generate
from jspgfn.gflownet import exact_flows, policy
from jspgfn.gflownet.last_step import LastStepNetwork, last_step_logits
from jspgfn.gflownet.networks import NetConfig, make_network
from jspgfn.gflownet.sample import sample_graphs
from jspgfn.gflownet.train import load_run, train
from jspgfn.models import get_graph_prior, get_model
from test_gflownet_posterior import CONFIG, TOLERANCE, exact_edge_marginals
from test_gflownet_train import TINY

D = 4


def _optimal_policy(model, prior, x, interventions):
    """(lattice, log P*(stop | G) [M], log P*(G + e | G) [M, d*d]) of the policy that samples the exact posterior
    over every DAG on D nodes under the uniform backward policy (-inf where e cannot be added)."""
    lattice = exact_flows.dag_lattice(D)
    log_r = log_marginal_likelihood_graphs(model, x, lattice.graphs, interventions, graph_prior=prior)
    log_target = log_r - np.logaddexp.reduce(log_r)
    log_flow, log_stop = exact_flows.optimal_flows(lattice, log_target)
    children = lattice.children
    safe = np.where(children >= 0, children, 0)
    log_back = -np.log(np.maximum(lattice.num_edges[safe], 1))
    log_edges = np.where(children >= 0, log_flow[safe] + log_back - log_flow[:, None], -np.inf)
    return lattice, log_stop, log_edges


@pytest.mark.parametrize("prior_name, intervened", [("uniform", False), ("erdos_renyi", False), ("uniform", True)])
def test_the_logits_are_the_optimal_policy_one_edge_short_of_complete(prior_name, intervened):
    ds = generate("er2", "linear", D, 40, 10, 3)
    x = ds.train
    rng = np.random.default_rng(0)
    interventions = (rng.random(x.shape) < 0.2).astype(np.float32) if intervened else None
    model, prior = get_model("lingauss", obs_var=0.01), get_graph_prior(prior_name, D)
    lattice, log_stop, log_edges = _optimal_policy(model, prior, x, interventions)
    graphs = jnp.asarray(lattice.graphs, jnp.uint8)
    inter = None if interventions is None else jnp.asarray(interventions)
    is_last, stop_logit, edge_logits = last_step_logits(model, prior, jnp.asarray(x, jnp.float32), inter, graphs)
    last = lattice.num_edges == D * (D - 1) // 2 - 1
    np.testing.assert_array_equal(np.asarray(is_last), last)
    # 24 complete DAGs less one of their 6 edges, 36 of them reached from two (nodes next to each other in the order)
    assert last.sum() == 24 * 6 - 36
    emask = jnp.asarray(lattice.children >= 0).reshape(-1, D, D)
    ours_stop, ours_edges = policy.log_policy_edges(stop_logit, edge_logits, emask)
    np.testing.assert_allclose(np.asarray(ours_stop)[last], log_stop[last], atol=2e-3)
    ours_edges = np.asarray(ours_edges).reshape(len(last), -1)[last]
    valid = np.isfinite(log_edges[last])
    np.testing.assert_allclose(ours_edges[valid], log_edges[last][valid], atol=2e-3)
    # the optimal stops there span many nats: neither a constant nor a uniform choice would pass
    assert np.ptp(log_stop[last]) > 5.0 and np.ptp(log_edges[last][valid]) > 5.0


def _network():
    base = make_network(NetConfig(embed_dim=16, mlp_hidden=16, num_heads=2, key_size=8, theta_hidden=16), D)
    graphs = jnp.asarray(exact_flows.dag_lattice(D).graphs, jnp.uint8)
    params = base.init(jax.random.PRNGKey(0), graphs[:1])
    return base, graphs, params


def test_the_network_keeps_its_own_outputs_elsewhere_and_passes_no_gradient_there():
    base, graphs, params = _network()
    x = jnp.asarray(generate("er2", "linear", D, 40, 10, 3).train, jnp.float32)
    model, prior = get_model("lingauss", obs_var=0.01), get_graph_prior("uniform", D)
    net = LastStepNetwork(base, model, prior, x)
    plain, out = base.apply(params, graphs), net.apply(params, graphs)
    last = np.asarray(graphs).sum(axis=(1, 2)) == 5
    _, stop, edges = last_step_logits(model, prior, x, None, graphs)
    np.testing.assert_array_equal(np.asarray(out["stop_logit"])[~last], np.asarray(plain["stop_logit"])[~last])
    np.testing.assert_array_equal(np.asarray(out["edge_logits"])[~last], np.asarray(plain["edge_logits"])[~last])
    np.testing.assert_array_equal(np.asarray(out["stop_logit"])[last], np.asarray(stop)[last])
    np.testing.assert_array_equal(np.asarray(out["edge_logits"])[last], np.asarray(edges)[last])
    for key in ("loc", "scale"):
        np.testing.assert_array_equal(out[key], plain[key])
    # the edge logits of the first edge_rows graphs only, as the base network's
    rows = net.apply(params, graphs, 300)
    np.testing.assert_array_equal(rows["edge_logits"], out["edge_logits"][:300])
    np.testing.assert_array_equal(rows["stop_logit"], out["stop_logit"])
    # no gradient reaches the network from the replaced logits
    at_last = graphs[last]
    grads = jax.grad(
        lambda p: jnp.sum(net.apply(p, at_last)["stop_logit"]) + jnp.sum(net.apply(p, at_last)["edge_logits"])
    )(params)
    assert all(float(jnp.abs(g).max()) == 0.0 for g in jax.tree_util.tree_leaves(grads))


def test_on_data_reads_the_other_data():
    base, graphs, params = _network()
    model, prior = get_model("lingauss", obs_var=0.01), get_graph_prior("uniform", D)
    x0, x1 = (jnp.asarray(generate("er2", "linear", D, 40, 10, s).train, jnp.float32) for s in (3, 4))
    moved = LastStepNetwork(base, model, prior, x0).on_data(x1).apply(params, graphs)
    direct = LastStepNetwork(base, model, prior, x1).apply(params, graphs)
    np.testing.assert_array_equal(moved["stop_logit"], direct["stop_logit"])
    assert (
        float(
            jnp.abs(
                moved["stop_logit"] - LastStepNetwork(base, model, prior, x0).apply(params, graphs)["stop_logit"]
            ).max()
        )
        > 1.0
    )


def test_the_option_is_refused_where_it_does_not_hold(tmp_path):
    ds = generate("er1", "linear", 3, 20, 10, 2)
    with pytest.raises(JspgfnError, match="last_step_closed_form is for the linear Gaussian model only"):
        train(ds, "mlp-gauss", "smoke", 0, tmp_path / "a", overrides={**TINY, "last_step_closed_form": True},
              progress=False)  # fmt: skip
    with pytest.raises(JspgfnError, match=r"last_step_closed_form needs no parent limit \(max_parents 1 < d - 1 = 2\)"):
        train(ds, "lingauss", "smoke", 0, tmp_path / "b", overrides={**TINY, "last_step_closed_form": True,
              "max_parents": 1}, progress=False)  # fmt: skip
    for run in ("a", "b"):
        assert not (tmp_path / run).exists()
    options = {**TINY, "last_step_closed_form": True, "max_parents": 2}
    trained, _, _ = train(ds, "lingauss", "smoke", 0, tmp_path / "c", overrides=options, progress=False)
    assert isinstance(trained.network, LastStepNetwork)


@pytest.mark.slow  # about a minute here
def test_a_sampler_trained_with_the_option_matches_the_exact_posterior(tmp_path):
    """test_gflownet_posterior's statistical test (d=3, same data, options and tolerance) with the option on, its
    samples drawn through the run folder as `jspgfn sample` draws them. At d=3 the 2-edge states are the last
    step: the option sets their policy, the network learns the rest; negative control: the same network with its
    own (untrained) logits at those states must miss the exact marginals."""
    ds = generate("er1", "linear", 3, 20, 10, 2)
    exact = exact_edge_marginals(ds.train)
    run = tmp_path / "run"
    train(ds, "lingauss-diag", "quick", 0, run, overrides={**CONFIG, "last_step_closed_form": True}, progress=False)
    trainer, loaded, _, _ = load_run(run)
    assert isinstance(trainer.network, LastStepNetwork)
    graphs = sample_graphs(trainer.network.apply, loaded.params, jax.random.PRNGKey(0), 3000, 3)
    without = sample_graphs(trainer.network.base.apply, loaded.params, jax.random.PRNGKey(0), 3000, 3)
    err, err_without = (float(np.abs(g.mean(axis=0) - exact).max()) for g in (graphs, without))
    print(
        f"max edge-marginal error {err:.3f}, the network's own logits there {err_without:.3f} (tolerance {TOLERANCE})"
    )
    assert err < TOLERANCE
    assert err_without > TOLERANCE, "the option made no difference: the negative control cannot fail"


def test_the_run_folder_keeps_the_data_its_sampler_reads(tmp_path):
    """Without stop_score_offset too, the run folder keeps train_data.npz and load_run's network reads it (not
    load_run's zeros of the data's shape)."""
    ds = generate("er1", "linear", 3, 20, 10, 2)
    run = tmp_path / "run"
    trained, state, _ = train(ds, "lingauss", "smoke", 0, run, overrides={**TINY, "last_step_closed_form": True},
                              progress=False)  # fmt: skip
    assert (run / "train_data.npz").is_file()
    trainer, loaded, _, _ = load_run(run)
    np.testing.assert_array_equal(trainer.data, ds.train.astype(np.float32))
    graphs = jnp.asarray(exact_flows.dag_lattice(3).graphs, jnp.uint8)
    np.testing.assert_array_equal(
        trainer.network.apply(loaded.params, graphs)["stop_logit"],
        trained.network.apply(state.params, graphs)["stop_logit"],
    )
