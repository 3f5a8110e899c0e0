"""What the posterior page (posterior_report.py) reads besides the samples and the data: how to name the
data's graph, a JSP-GFN run folder's training log, and the samples renamed with the data's variable names.
"""

import json
from pathlib import Path

from jspgfn.errors import DataError


def graph_label(dataset):
    """How the page names the dataset's graph.csv, from its meta.json: 'reference graph' when the meta says
    it is no ground truth (`graph_is_ground_truth: false`, the Sachs datasets), 'true graph (simulated)'
    for a simulated dataset (written by `jspgfn generate` or marked `simulated`), else 'graph.csv (given
    with the data)'. None when the dataset has no graph."""
    if dataset.graph is None:
        return None
    meta = dataset.meta
    if meta.get("graph_is_ground_truth") is False:
        return "reference graph"
    if meta.get("simulated") is True or meta.get("generator") == "jspgfn.generate":
        return "true graph (simulated)"
    return "graph.csv (given with the data)"


def read_training_log(run):
    """The rows of a run folder's metrics.jsonl (gflownet.train: one JSON object per dispatch, with
    `iteration` and `loss`) as a list of dicts, and its config.json as a dict ({} when absent).
    DataError naming the file when the folder, the log or one of its lines is missing or malformed."""
    run = Path(run)
    if not run.is_dir():
        raise DataError(run, "not a run folder (no such folder); --run names the folder of `jspgfn train --out`")
    path = run / "metrics.jsonl"
    if not path.is_file():
        raise DataError(path, "file not found: is this the folder of `jspgfn train --out`?")
    rows = []
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(path, f"line {number} is not JSON ({exc})") from None
        if not isinstance(row, dict) or not isinstance(row.get("iteration"), int) or "loss" not in row:
            raise DataError(path, f"line {number} is not a training log row (iteration and loss)")
        rows.append(row)
    if not rows:
        raise DataError(path, "has no rows: the run has not trained a single dispatch yet")
    config = {}
    if (run / "config.json").is_file():
        try:
            config = json.loads((run / "config.json").read_text())
        except json.JSONDecodeError as exc:
            raise DataError(run / "config.json", f"invalid JSON ({exc})") from None
    return rows, config if isinstance(config, dict) else {}


def named(posterior, dataset, notes):
    """The Posterior with the dataset's variable names (itself when its metadata records the same names)."""
    from jspgfn.posterior import Posterior

    names = [str(name) for name in dataset.names]
    recorded = posterior.metadata.get("variable_names")
    if recorded is not None and [str(name) for name in recorded] == names:
        return posterior
    if recorded is not None:
        notes.append(f"the samples name the variables {list(recorded)}; this page uses the data's names {names}")
    return Posterior(
        graphs=posterior.graphs,
        theta=posterior.theta,
        metadata={**posterior.metadata, "variable_names": names},
        log_weights=posterior.log_weights,
        extras=posterior.extras,
    )
