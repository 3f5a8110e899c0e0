"""Synthetic Bayesian-network data (the paper's recipe, appendix D.2 and D.3).

Graph: Erdos-Renyi DAG with k*d expected edges ("erk": er1, er2, ...), random node order.
Linear model: weights N(0, 1) on edges, Gaussian noise of variance 0.01.
MLP model: per node an MLP with one hidden layer of 5 ReLU units on its masked
parents, all weights N(0, 1), Gaussian noise of variance 0.01.
Optional hard interventions: in a fraction of the rows one random variable is
set to a value drawn from N(0, intervention_var), ignoring its parents.
Everything is drawn from one numpy Generator seeded by `seed`.
"""

import math
import numbers
import re

import numpy as np

from jspgfn.dataset import MAX_ABS_TEXT, MAX_ABS_VALUE, Dataset
from jspgfn.errors import JspgfnError, OptionError, check_count
from jspgfn.graphs import sample_er_dag, topological_order
from jspgfn.models import LinearGaussian, MLPGaussian

GENERATOR_VERSION = 1


def expected_edges_for(graph_kind, num_variables):
    match = re.fullmatch(r"er(\d+)", graph_kind)
    if not match or int(match.group(1)) < 1:
        raise JspgfnError(f"unknown graph kind '{graph_kind}': use er1, er2, ... (k*d expected edges)")
    return int(match.group(1)) * num_variables


def data_model(model_name, obs_var=0.01, hidden=5):
    if model_name == "linear":
        return LinearGaussian(obs_var=obs_var)
    if model_name == "mlp":
        return MLPGaussian(obs_var=obs_var, hidden=hidden)
    raise JspgfnError(f"unknown data model '{model_name}': use linear or mlp")


def ancestral_sample(rng, model, theta, graph, num_rows, interventional_fraction=0.0, intervention_var=1.0):
    """Draw rows in topological order. Returns (x float [n, d], interventions uint8 [n, d])."""
    d = graph.shape[0]
    x = np.zeros((num_rows, d))
    interventions = np.zeros((num_rows, d), dtype=np.uint8)
    is_interventional = rng.random(num_rows) < interventional_fraction
    targets = rng.integers(0, d, size=num_rows)
    interventions[is_interventional, targets[is_interventional]] = 1
    values = np.sqrt(intervention_var) * rng.standard_normal((num_rows, d))
    noise = np.sqrt(model.obs_var) * rng.standard_normal((num_rows, d))
    for j in topological_order(graph):
        # mean() evaluates every node; column j only reads its (already drawn) parents.
        mean_j = model.mean(theta, graph.astype(np.float64), x, xp=np)[:, j]
        x[:, j] = np.where(interventions[:, j] == 1, values[:, j], mean_j + noise[:, j])
    return x, interventions


def generate(
    graph_kind="er1",
    model_name="linear",
    num_variables=5,
    num_train=100,
    num_test=100,
    seed=0,
    obs_var=0.01,
    hidden=5,
    interventional_fraction=0.0,
    intervention_var=1.0,
):
    """A synthetic Dataset with its true graph, parameters and metadata.

    Raises JspgfnError for an invalid setting, and when the simulated values are not finite or
    exceed dataset.MAX_ABS_VALUE (what `load_dataset` would refuse).
    """
    check_count("d", num_variables, 2)
    check_count("n", num_train, 1)
    check_count("n_test", num_test, 0)
    check_count("seed", seed, 0)
    for name, value in (("obs_var", obs_var), ("intervention_var", intervention_var)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (math.isfinite(value) and value > 0):
            raise OptionError(name, f"must be a finite number > 0, got {value!r}")
    if model_name == "mlp":
        check_count("hidden", hidden, 1)
    if not 0.0 <= interventional_fraction <= 1.0:
        raise OptionError("interventional_fraction", f"must lie in [0, 1], got {interventional_fraction}")
    rng = np.random.default_rng(seed)
    expected = expected_edges_for(graph_kind, num_variables)
    model = data_model(model_name, obs_var, hidden)
    graph = sample_er_dag(rng, num_variables, expected)
    theta = model.sample_prior(rng, graph)
    with np.errstate(over="ignore", invalid="ignore"):  # checked below
        train, train_int = ancestral_sample(
            rng, model, theta, graph, num_train, interventional_fraction, intervention_var
        )
        test, test_int = ancestral_sample(rng, model, theta, graph, num_test, interventional_fraction, intervention_var)
    for values in (train, test):
        if not np.all(np.isfinite(values)) or np.any(np.abs(values) > MAX_ABS_VALUE):
            raise JspgfnError(
                f"the simulated values overflow (non-finite or |x| > {MAX_ABS_TEXT}) with d={num_variables}, "
                f"graph {graph_kind}, model {model_name}, seed {seed}: use fewer variables or expected edges"
            )
    names = tuple(f"X{i}" for i in range(num_variables))
    interventional = interventional_fraction > 0
    meta = {
        "generator": "jspgfn.generate",
        "generator_version": GENERATOR_VERSION,
        "seed": seed,
        "graph": graph_kind,
        "expected_edges": expected,
        "model": model_name,
        "obs_var": obs_var,
        "hidden": hidden if model_name == "mlp" else None,
        "num_variables": num_variables,
        "num_train": num_train,
        "num_test": num_test,
        "interventional_fraction": interventional_fraction,
        "intervention_var": intervention_var,
        "num_edges": int(graph.sum()),
        "theta": theta.tolist(),
        "theta_layout": model.layout(num_variables),
    }
    return Dataset(
        train=train,
        names=names,
        test=test if num_test > 0 else None,
        graph=graph,
        train_interventions=train_int if interventional else None,
        test_interventions=test_int if interventional and num_test > 0 else None,
        meta=meta,
    )
