"""benchmarks/marginal_reward_oracle.py: its residual vanishes exactly at the sampler of the exact posterior.

The oracle trains the library's network on DAG-GFlowNet's modified detailed balance with the exact linear
Gaussian score; the diagnosis in docs/jspgfn-beyond-d5.md rests on its solution being the exact posterior
over graphs. At d=3 every DAG is listed: the oracle's tabular network (its --tabular mode) holding the
logits of that posterior's optimal policy (exact_flows.optimal_flows) must give zero residual on every edge
addition, and a wrong one must not.
"""

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


def _setup(module, d=3, n=20, seed=0):
    """Data, model, the oracle's tabular network over the DAGs on d nodes, the optimal policy's logits as its
    parameters, and every edge addition (graphs, actions)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    x[:, 1] += 0.8 * x[:, 0]
    x[:, 2] += 0.5 * x[:, 1]
    model = get_model("lingauss", obs_var=0.5)
    lattice = exact_flows.dag_lattice(d)
    log_marginal = log_marginal_likelihood_graphs(model, x, lattice.graphs)
    log_flow, log_stop = exact_flows.optimal_flows(lattice, log_marginal - logsumexp(log_marginal))
    m = len(lattice.graphs)
    edge_logits = np.full((m, d * d), -1e4)
    parents, actions = np.nonzero(lattice.children >= 0)
    children = lattice.children[parents, actions]
    edge_logits[parents, actions] = log_flow[children] - np.log(lattice.num_edges[children]) - log_flow[parents]
    stop_logit = log_stop - np.log(-np.expm1(np.minimum(log_stop, -1e-12)))  # logit of P(stop | G)
    table = module._Table.of(lattice, model.theta_shape(d)[-1])
    params = {"stop": jnp.asarray(stop_logit, jnp.float32), "edges": jnp.asarray(edge_logits.reshape(m, d, d))}
    return x, model, table, params, lattice.graphs[parents].astype(np.uint8), actions.astype(np.int32)


def _mean_abs_residual(module, x, model, table, params, graphs, actions):
    class Fixed(module.MarginalRewardTrainer):
        network = table

    cfg = get_preset("smoke")
    trainer = Fixed(cfg, model, get_graph_prior("uniform", x.shape[1]), "diag", x.astype(np.float32))
    key = jax.random.PRNGKey(0)
    _, metrics = trainer.loss(params, jnp.asarray(graphs), jnp.asarray(actions), key, jnp.asarray(x))
    return float(metrics["abs_delta"])


def test_the_residual_vanishes_at_the_exact_posteriors_sampler_and_not_elsewhere():
    module = _oracle_module()
    x, model, table, params, graphs, actions = _setup(module)
    assert len(graphs) == 48  # every edge addition between the 25 DAGs on 3 nodes
    assert _mean_abs_residual(module, x, model, table, params, graphs, actions) < 1e-3

    every_third = jnp.where(jnp.arange(len(params["stop"])) % 3 == 0, 1.0, 0.0)
    wrong = {**params, "stop": params["stop"] + every_third}
    assert _mean_abs_residual(module, x, model, table, wrong, graphs, actions) > 0.1
