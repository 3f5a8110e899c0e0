"""The evidence of Table A.1: what each method can do, declared by the method and checked by probes.

Declared capabilities come from the method (a baseline's method.yaml, `jspgfn.gflownet.method` for
JSP-GFN). A probe overrides a declaration and says what it saw:
  nonlinear    `probe`: a short fit on a tiny non-linear (MLP) dataset, accepted or refused
  sampler      `probe`, JSP-GFN: two sampling calls on one trained run give different samples
  dag_support  `capability_table`: the share of cyclic graphs in the method's runs (metrics table)
A capability neither declared nor probed is unknown (None), never guessed. The probes are jobs of
their own (`jspgfn probe`), so the report only reads the table that `jspgfn capabilities` writes.
"""

import tempfile

import numpy as np
import pandas as pd

from jspgfn.errors import JspgfnError

DECLARED = "declared by the method"


def declared(method):
    """{capability: value} declared by a config method entry {kind, name, ...}."""
    if method["kind"] == "jspgfn":
        from jspgfn.gflownet.method import CAPABILITIES

        return dict(CAPABILITIES)
    from jspgfn.competitors import baselines_package

    return dict(baselines_package(method["name"]).get_spec(method["name"])["capabilities"])


def _tiny_mlp_dataset():
    from jspgfn.generate import generate

    return generate("er1", "mlp", 5, 20, 0, seed=0)


def probe(method):
    """{capability: [value, evidence]} of the probe runs of one config method entry."""
    if method["kind"] == "jspgfn":
        return _probe_jspgfn()
    from jspgfn.competitors import baselines_package

    try:
        baselines_package(method["name"]).fit_baseline(
            method["name"], _tiny_mlp_dataset(), "mlp-gauss", 0, **method.get("params", {})
        )
    except JspgfnError as exc:
        return {"nonlinear": [False, f"refused the MLP model ({exc})"]}
    return {"nonlinear": [True, "fitted the MLP model on a d=5 probe dataset"]}


def _probe_jspgfn():
    """JSP-GFN (smoke budget) on the tiny MLP dataset, then two sampling calls on the trained run."""
    from jspgfn.gflownet.method import sample_run
    from jspgfn.gflownet.train import train

    with tempfile.TemporaryDirectory(prefix="jspgfn-probe-") as folder:
        try:
            train(_tiny_mlp_dataset(), "mlp-gauss", "smoke", 0, f"{folder}/run", progress=False)
        except JspgfnError as exc:
            return {"nonlinear": [False, f"refused the MLP model ({exc})"], "sampler": [None, "no trained run"]}
        first, second = sample_run(f"{folder}/run", 50, seed=0), sample_run(f"{folder}/run", 50, seed=1)
    differ = not np.array_equal(first.theta, second.theta)
    return {
        "nonlinear": [True, "fitted the MLP model on a d=5 probe dataset"],
        "sampler": [
            differ,
            "new samples drawn after training" if differ else "two sampling calls returned the same samples",
        ],
    }


def probe_dag_support(metrics, label):
    """(True/False/None, evidence) from share_cyclic of the method's runs."""
    runs = metrics[metrics["label"] == label]
    if runs.empty or "share_cyclic" not in runs:
        return None, "no runs to inspect"
    share = float(np.nanmean(runs["share_cyclic"]))
    return share == 0.0, f"{100 * share:.1f}% cyclic graphs over {len(runs)} runs"


def capability_table(probes, metrics):
    """Tidy table of Table A.1: one row per (method, capability).

    Args:
      probes: records written by `jspgfn probe`, each {label, display_name, declared, probes}.
      metrics: aggregated metrics table (label, share_cyclic) of the methods' runs.
    Returns:
      DataFrame [label, display_name, capability, value, evidence, probed].
    """
    rows = []
    for record in probes:
        label = record["label"]
        cells = {key: (value, DECLARED) for key, value in record["declared"].items()}
        cells.update({key: tuple(cell) for key, cell in record["probes"].items()})
        if label in set(metrics["label"]):
            cells["dag_support"] = probe_dag_support(metrics, label)
        for key, (value, evidence) in cells.items():
            rows.append(
                {
                    "label": label,
                    "display_name": record["display_name"],
                    "capability": key,
                    "value": value,
                    "evidence": evidence,
                    "probed": evidence != DECLARED,
                }
            )
    return pd.DataFrame(rows, columns=["label", "display_name", "capability", "value", "evidence", "probed"])
