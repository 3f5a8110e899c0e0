"""Table A.1: what each method can do, declared by its module and checked by probe runs.

Declared capabilities come from the method's module (`CAPABILITIES` of a baseline, `JSPGFN_CAPABILITIES`
below for JSP-GFN). Where a probe exists it overrides the declaration and says what it saw:
  dag_support  the share of cyclic graphs in the method's runs of the aggregated metrics table
  nonlinear    a short fit on a tiny non-linear (MLP) dataset: accepted or refused
  sampler      JSP-GFN only: two sampling calls on one trained run give different samples
A capability neither declared nor probed shows as unknown, never guessed.
"""

import functools
import tempfile

import numpy as np

from jspgfn.errors import JspgfnError

COLUMNS = {"joint": "Joint G & θ", "nonlinear": "Non-linear", "dag_support": "DAG support",
           "discrete": "Discrete obs.", "max_parents": "Max parents", "sampler": "Sampler",
           "minibatch": "Mini-batch"}

# JSP-GFN as implemented here: DAGs by construction (acyclic actions only), the max-parents option
# of the environment, a trained sampler, mini-batch rewards; no categorical likelihood model yet.
JSPGFN_CAPABILITIES = {"joint": True, "nonlinear": True, "dag_support": True, "discrete": False,
                       "max_parents": True, "sampler": True, "minibatch": True}


def declared(method):
    """Declared capabilities of a config method entry {kind, name, ...}."""
    if method["kind"] == "jspgfn":
        return dict(JSPGFN_CAPABILITIES)
    from jspgfn.baselines import get_baseline

    return dict(get_baseline(method["name"]).CAPABILITIES)


def probe_dag_support(metrics, label):
    """(True/False/None, evidence) from share_cyclic of the method's runs."""
    runs = metrics[metrics["label"] == label]
    if runs.empty or "share_cyclic" not in runs:
        return None, "no runs to inspect"
    share = float(np.nanmean(runs["share_cyclic"]))
    return share == 0.0, f"{100 * share:.1f}% cyclic graphs over {len(runs)} runs"


def _tiny_mlp_dataset():
    from jspgfn.generate import generate

    return generate("er1", "mlp", 5, 20, 0, seed=0)


def probe_nonlinear(method):
    """(True/False, evidence): does a fit on a tiny MLP dataset (d=5, N=20) succeed?"""
    try:
        if method["kind"] == "jspgfn":
            _tiny_jspgfn_run()
        else:
            from jspgfn.baselines import fit_baseline

            fit_baseline(method["name"], _tiny_mlp_dataset(), "mlp-gauss", 0, **method.get("params", {}))
    except JspgfnError as exc:
        return False, f"refused the MLP model ({exc})"
    return True, "fitted the MLP model on a d=5 probe dataset"


@functools.lru_cache(maxsize=1)
def _tiny_jspgfn_run():
    """A JSP-GFN run (smoke budget) on the tiny MLP dataset, trained once per process."""
    from jspgfn.dataset import write_dataset
    from jspgfn.gflownet.train import train

    folder = tempfile.mkdtemp(prefix="jspgfn-probe-")
    write_dataset(f"{folder}/data", _tiny_mlp_dataset())
    train(f"{folder}/data", "mlp-gauss", "smoke", 0, f"{folder}/run", progress=False)
    return f"{folder}/run"


def probe_sampler_jspgfn():
    """(True/False, evidence): two sampling calls on one trained run draw different samples."""
    from jspgfn.gflownet.cli import sample_run

    run = _tiny_jspgfn_run()
    first, second = sample_run(run, 50, seed=0), sample_run(run, 50, seed=1)
    differ = not np.array_equal(first.theta, second.theta)
    return differ, "new samples drawn after training" if differ else "two sampling calls returned the same samples"


def capability_table(methods, metrics):
    """Rows of Table A.1: one per method id, a (value, evidence) pair per capability.

    Args:
      methods: {method id: config entry with kind, name, params}.
      metrics: aggregated metrics table (label, share_cyclic) of the runs.
    """
    rows = {}
    for label, method in methods.items():
        cells = {key: (value, "declared by the module") for key, value in declared(method).items()}
        cells["dag_support"] = probe_dag_support(metrics, label) if label in set(metrics["label"]) \
            else cells["dag_support"]
        cells["nonlinear"] = probe_nonlinear(method)
        if method["kind"] == "jspgfn":
            cells["sampler"] = probe_sampler_jspgfn()
        rows[label] = cells
    return rows


def mark(value):
    return {True: "✓", False: "✗"}.get(value, "?")


def table_a1(rows):
    """(numbers, shown) for write_table: a mark per capability (* when probed), evidence in numbers."""
    from jspgfn.report.names import display_name, sort_labels

    numbers, shown = [], []
    for label in sort_labels(rows):
        row = {"method": display_name(label)}
        for key, title in COLUMNS.items():
            value, evidence = rows[label][key]
            numbers.append({"method": display_name(label), "label": label, "capability": key,
                            "value": value, "evidence": evidence})
            row[title] = mark(value) + ("" if evidence == "declared by the module" else "*")
        shown.append(row)
    import pandas as pd

    return pd.DataFrame(numbers), pd.DataFrame(shown)
