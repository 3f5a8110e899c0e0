"""benchmarks/marginal_reward_oracle.py: its residual vanishes exactly at the sampler of the exact posterior.

The oracle trains the library's network on DAG-GFlowNet's modified detailed balance with the exact linear
Gaussian score; the diagnosis in docs/jspgfn-beyond-d5.md rests on its solution being the exact posterior
over graphs. At d=3 every DAG is listed: a network that returns the optimal policy of that posterior
(exact_flows.optimal_flows) must give zero residual on every edge addition, and a wrong one must not.
"""

import dataclasses
import importlib.util
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from scipy.special import logsumexp

from jspgfn.conjugate import log_marginal_likelihood_graphs
from jspgfn.gflownet import exact_flows
from jspgfn.gflownet.presets import get_preset
from jspgfn.models import get_graph_prior, get_model

BENCHMARKS = Path(__file__).parents[1] / "benchmarks"


def _oracle_module():
    sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location("marginal_reward_oracle", BENCHMARKS / "marginal_reward_oracle.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclasses.dataclass(frozen=True)
class _TableNetwork:
    """apply(params, adjacency [B, d, d], edge_rows) -> the outputs of a fixed policy, looked up by graph code."""

    index_of_code: np.ndarray  # int [2^(d*d)]
    stop_logit: np.ndarray  # [M]
    edge_logits: np.ndarray  # [M, d, d]

    def apply(self, params, adjacency, edge_rows=None):
        del params
        d = adjacency.shape[-1]
        codes = jnp.sum(adjacency.reshape(adjacency.shape[0], -1).astype(jnp.int32) << jnp.arange(d * d), axis=-1)
        idx = jnp.asarray(self.index_of_code)[codes]
        rows = adjacency.shape[0] if edge_rows is None else edge_rows
        return {
            "stop_logit": jnp.asarray(self.stop_logit, jnp.float32)[idx],
            "edge_logits": jnp.asarray(self.edge_logits, jnp.float32)[idx[:rows]],
        }


def _setup(d=3, n=20, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    x[:, 1] += 0.8 * x[:, 0]
    x[:, 2] += 0.5 * x[:, 1]
    model = get_model("lingauss", obs_var=0.5)
    lattice = exact_flows.dag_lattice(d)
    log_marginal = log_marginal_likelihood_graphs(model, x, lattice.graphs)
    log_target = log_marginal - logsumexp(log_marginal)
    log_flow, log_stop = exact_flows.optimal_flows(lattice, log_target)
    m = len(lattice.graphs)
    edge_logits = np.full((m, d * d), -1e4)
    parents, actions = np.nonzero(lattice.children >= 0)
    children = lattice.children[parents, actions]
    edge_logits[parents, actions] = log_flow[children] - np.log(lattice.num_edges[children]) - log_flow[parents]
    stop_logit = log_stop - np.log(-np.expm1(np.minimum(log_stop, -1e-12)))  # logit of P(stop | G)
    codes = lattice.graphs.reshape(m, -1).astype(np.int64) @ (1 << np.arange(d * d))
    index_of_code = np.zeros(2 ** (d * d), np.int64)
    index_of_code[codes] = np.arange(m)
    table = _TableNetwork(index_of_code, stop_logit, edge_logits.reshape(m, d, d))
    graphs = lattice.graphs[parents].astype(np.uint8)
    return x, model, table, graphs, actions.astype(np.int32)


def _mean_abs_residual(module, x, model, table, graphs, actions):
    class Fixed(module.MarginalRewardTrainer):
        network = table

    cfg = get_preset("smoke")
    trainer = Fixed(cfg, model, get_graph_prior("uniform", x.shape[1]), "diag", x.astype(np.float32))
    _, metrics = trainer.loss(None, jnp.asarray(graphs), jnp.asarray(actions), jax.random.PRNGKey(0), jnp.asarray(x))
    return float(metrics["abs_delta"])


def test_the_residual_vanishes_at_the_exact_posteriors_sampler_and_not_elsewhere():
    module = _oracle_module()
    x, model, table, graphs, actions = _setup()
    assert len(graphs) == 48  # every edge addition between the 25 DAGs on 3 nodes
    assert _mean_abs_residual(module, x, model, table, graphs, actions) < 1e-3

    every_third = np.where(np.arange(len(table.stop_logit)) % 3 == 0, 1.0, 0.0)
    wrong = dataclasses.replace(table, stop_logit=table.stop_logit + every_third)
    assert _mean_abs_residual(module, x, model, wrong, graphs, actions) > 0.1
