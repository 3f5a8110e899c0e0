"""benchmarks/stop_consistency.py: the local error D(G) of a sampler's stop probabilities against the detailed-
balance conditions out of G. At d=3 every DAG is listed and the exact posterior's optimal policy is known
(the oracle's tabular network holding exact_flows.optimal_flows' logits, as in test_marginal_reward_oracle):
D, m and J vanish at every state there, a known change of one state's stop logit gives the closed-form D, and the
edge choice at the empty graph is the optimal flows' (computed from exact_flows, not from the policy's logits)."""

import jax
import numpy as np
from scipy.special import logsumexp

from conftest import benchmark_module
from jspgfn.conjugate import log_marginal_likelihood_graphs
from jspgfn.exact_dp import local_scores
from jspgfn.gflownet import exact_flows
from test_marginal_reward_oracle import _oracle_module, _setup


def _audit_module():
    return benchmark_module("stop_consistency")


def _optimal_sampler():
    x, model, table, params, _, _ = _setup(_oracle_module())
    lattice = exact_flows.dag_lattice(3)
    states = lattice.graphs[(lattice.children >= 0).any(axis=1)]  # every state with an edge to add
    return table, params, states, local_scores(model, x)


def test_the_exact_posteriors_sampler_is_consistent_at_every_state():
    audit = _audit_module()
    table, params, states, scores = _optimal_sampler()
    counts, _, [(d_local, m, jensen)], _ = audit.audit(table.apply, params, states, [scores])
    assert len(states) == 19 and set(counts) == {0, 1, 2}  # 25 DAGs on 3 nodes, less the 6 complete ones
    assert np.max(np.abs(d_local)) < 1e-3
    assert np.max(np.abs(m)) < 1e-3
    assert np.max(np.abs(jensen)) < 1e-3


def test_a_lower_stop_at_the_empty_graph_gives_the_closed_form_error_there_only():
    audit = _audit_module()
    table, params, states, scores = _optimal_sampler()
    empty = int(np.flatnonzero(states.sum(axis=(1, 2)) == 0)[0])
    _, _, [(before, _, _)], _ = audit.audit(table.apply, params, states, [scores])
    log_stop = float(jax.nn.log_sigmoid(table.apply(params, states[empty : empty + 1])["stop_logit"])[0])
    delta = 1.5
    index = int(exact_flows.index_of(exact_flows.dag_lattice(3), states[empty : empty + 1])[0])
    lowered = {**params, "stop": params["stop"].at[index].add(-delta)}
    _, _, [(d_local, m, jensen)], _ = audit.audit(table.apply, lowered, states, [scores])
    # Every l_c = log P(G_c | G) - log P(stop | G) rises by delta: m = delta, no spread (J = 0), and
    # D = log(1 + S) - log(1 + e^delta S) with S = 1 / P*(stop | empty) - 1.
    s = np.expm1(-log_stop)
    assert abs(m[empty] - delta) < 1e-3 and abs(jensen[empty]) < 1e-3
    assert abs(d_local[empty] - (np.log1p(s) - logsumexp([0.0, delta + np.log(s)]))) < 1e-3
    others = np.arange(len(states)) != empty
    assert np.max(np.abs(d_local[others] - before[others])) < 1e-4


def test_the_edge_choice_at_the_empty_graph_is_the_optimal_flows():
    audit = _audit_module()
    table, params, states, scores = _optimal_sampler()
    x, model, _, _, _, _ = _setup(_oracle_module())
    empty = int(np.flatnonzero(states.sum(axis=(1, 2)) == 0)[0])
    _, _, _, (best_gain, p_best, p_negative) = audit.audit(table.apply, params, states, [scores])

    lattice = exact_flows.dag_lattice(3)
    log_marginal = log_marginal_likelihood_graphs(model, x, lattice.graphs)
    log_flow, _ = exact_flows.optimal_flows(lattice, log_marginal - logsumexp(log_marginal))
    root = int(exact_flows.index_of(lattice, np.zeros((1, 3, 3), np.uint8))[0])
    children = lattice.children[root][lattice.children[root] >= 0]
    gains = log_marginal[children] - log_marginal[root]
    child_weight = log_flow[children] - np.log(lattice.num_edges[children])  # F*(G') P_B(G | G')
    choice = np.exp(child_weight - logsumexp(child_weight))
    assert abs(best_gain[empty] - gains.max()) < 1e-6 * abs(gains.max())
    assert abs(p_best[empty] - choice[np.argmax(gains)]) < 1e-3
    assert abs(p_negative[empty] - choice[gains < 0].sum()) < 1e-3


def test_edge_classes_split_the_edges_by_the_true_graph():
    audit = _audit_module()
    graph = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])  # 0 -> 1 -> 2
    frequency = np.array([[0.0, 0.9, 0.2], [0.1, 0.0, 0.5], [0.3, 0.4, 0.0]])
    true, reversed_, other = audit.edge_classes(frequency, graph)
    assert np.allclose([true, reversed_, other], [0.9 + 0.5, 0.1 + 0.4, 0.2 + 0.3])


def test_parent_set_scores_are_the_tables_entries():
    """The d=20 path (scores of the parent sets asked only) reads what local_scores' and the floor's whole tables
    hold, at d=6 where both fit."""
    from jspgfn.models import get_model

    audit = _audit_module()  # puts benchmarks/ on the path first
    mean_field_gaps = benchmark_module("family_floor").mean_field_gaps
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 6))
    model = get_model("lingauss", obs_var=0.1)
    table = local_scores(model, x)
    floor = table - mean_field_gaps(model, x)[None, :]
    nodes = rng.integers(0, 6, size=(50, 3))
    codes = rng.integers(0, 1 << 6, size=(50, 3)) & ~(1 << nodes)  # a node is never its own parent
    sparse = audit.ParentSetScores(model, x, batch=7)  # several batches, and repeated pairs
    assert np.allclose(sparse[nodes, codes], table[nodes, codes], rtol=0, atol=1e-9)
    # a second lookup, half of it kept from the first and half new, in another shape
    more_nodes = np.concatenate([nodes[:25, 0], rng.integers(0, 6, size=25)])
    more_codes = np.concatenate([codes[:25, 0], rng.integers(0, 1 << 6, size=25) & ~(1 << more_nodes[25:])])
    assert 0 < len(sparse.known) < 6 * (1 << 6)
    assert np.allclose(sparse[more_nodes, more_codes], table[more_nodes, more_codes], rtol=0, atol=1e-9)
    assert np.allclose(audit.ParentSetScores(model, x, floor=True)[nodes, codes], floor[nodes, codes], atol=1e-9)
    assert np.ptp(floor[nodes, codes] - table[nodes, codes]) > 1e-3  # the floor differs on the larger sets


def test_the_offsets_error_is_zero_for_the_closed_form_and_at_the_empty_graph(tmp_path):
    """offset_errors: the stop offset's score less the exact log R(G). With stop_score_closed_form the offset is the
    exact score (float32): zero at every state; with q's theta-free score, zero at the empty graph only (exact there:
    no parameters); None without the offset."""
    from jspgfn.cli import main as cli_main
    from jspgfn.gflownet.train import train
    from test_gflownet_train import CLOSED_FORM, TINY

    audit = _audit_module()
    data = tmp_path / "d4"
    assert cli_main(["generate", "--graph", "er1", "--model", "linear", "--d", "4", "--n", "30", "--seed", "1",
                     "--out", str(data)]) == 0  # fmt: skip
    from jspgfn.dataset import load_dataset

    x = load_dataset(data).train
    lattice = exact_flows.dag_lattice(4)
    states = lattice.graphs[(lattice.children >= 0).any(axis=1)]
    empty = states.sum(axis=(1, 2)) == 0
    for closed in (True, False, None):
        options = {**TINY} if closed is None else {**TINY, **CLOSED_FORM, "stop_score_closed_form": closed}
        trainer, state, _ = train(data, "lingauss", "smoke", 0, tmp_path / f"run{closed}", overrides=options,
                                  progress=False)  # fmt: skip
        table = local_scores(trainer.model, x)
        errors = audit.offset_errors(trainer.network.apply, state.params, states, table)
        if closed is None:
            assert errors is None
            continue
        assert abs(errors[empty][0]) < 1e-2
        if closed:
            scale = np.max(np.abs(table[np.isfinite(table)]))
            assert np.max(np.abs(errors)) < 1e-2 + 1e-5 * scale  # float32 against float64
        else:
            assert np.max(np.abs(errors[~empty])) > 1e-2  # q's score is not exact
