"""`jspgfn report posterior`: one self-contained HTML page about one PosteriorSamples file.

    write_report("report.html", posterior, data, run=None, top=5, title=None)    (the CLI calls this)
    html = build_report(posterior, dataset, run=None, top=5, title=None)        the page as a string

The page holds, each built by a pure function `section_*` returning an HTML fragment: a summary of the
samples; E-SHD and AUROC against the dataset's graph.csv (labelled by `graph_label`: a reference graph
such as Sachs's is not called the truth); the edge-marginal heatmap with the variable names; the most
probable graphs drawn with their probabilities; the weight marginals of the most probable edges (linear
models); log P_T against log R with the RANSAC slope (samples drawn with --log-pt); the training curve of
a JSP-GFN run folder (its metrics.jsonl). A section without its input says why in a sentence, never an
empty image. Every number comes from the code that computes it elsewhere: jspgfn.evaluate.evaluate
(E-SHD, AUROC, held-out NLL, the log P_T points and their RANSAC fit), Posterior (edge marginals, top
graphs, theta_summary); the figures reuse report.figures' drawing. Images are PNGs (matplotlib, Agg)
embedded as base64 data URIs; the page has no script and fits 1100 pixels (no sideways scrolling).
"""

import base64
import html
import io
import json
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from jspgfn import atomic  # noqa: E402
from jspgfn.errors import DataError, check_count  # noqa: E402

PAGE_WIDTH = 1100  # pixels: the container's max-width
DPI = 100  # a figure of w inches is w * DPI pixels wide: figures here stay within PAGE_WIDTH
NUM_WEIGHTS = 6  # weight histograms: the most probable edges

STYLE = f"""
*, *::before, *::after {{ box-sizing: border-box; }}
body {{ margin: 0; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d1d1f;
  background: #fafafa; line-height: 1.45; overflow-wrap: anywhere; }}
main {{ max-width: {PAGE_WIDTH}px; margin: 0 auto; padding: 16px 24px 40px; background: #fff; }}
h1 {{ font-size: 1.5rem; margin: 0.4em 0; }}
h2 {{ font-size: 1.2rem; margin: 1.6em 0 0.5em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }}
img {{ display: block; max-width: 100%; height: auto; margin: 0.6em 0; }}
table {{ border-collapse: collapse; margin: 0.5em 0; font-size: 0.92rem; max-width: 100%; }}
th, td {{ border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }}
th {{ background: #f2f2f2; }}
td.number {{ text-align: right; font-variant-numeric: tabular-nums; }}
.absent {{ color: #555; font-style: italic; }}
.note {{ color: #555; font-size: 0.9rem; }}
code {{ font-size: 0.9em; background: #f2f2f2; padding: 0 3px; }}
"""


# ----------------------------------------------------------------- small HTML helpers


def _e(value):
    """Escaped text."""
    return html.escape(str(value), quote=True)


def _number(value, digits=4):
    """A metric as text: '–' for None, else `digits` significant digits."""
    if value is None:
        return "–"
    return f"{value:.{digits}g}" if isinstance(value, float) else str(value)


def figure_image(fig, alt, dpi=DPI):
    """`<img>` of the figure as an embedded base64 PNG (`dpi` dots per inch); closes the figure."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{_e(alt)}">'


def _count(number, noun):
    """'1 edge', '3 edges'."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _table(header, rows, numeric=()):
    """An HTML table: header [C] strings (None: no header row), rows of C values (escaped); columns in
    `numeric` right-aligned."""
    head = "" if header is None else "<thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in header) + "</tr></thead>"
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="number">{_e(v)}</td>' if c in numeric else f"<td>{_e(v)}</td>" for c, v in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table>{head}<tbody>{body}</tbody></table>"


def _section(anchor, heading, body):
    return f'<section id="{anchor}"><h2>{_e(heading)}</h2>\n{body}\n</section>'


def _absent(sentence):
    """Why a section has no figure: the sentence escaped, `command` spans set as code."""
    return '<p class="absent">' + re.sub(r"`([^`]+)`", r"<code>\1</code>", _e(sentence)) + "</p>"


# ----------------------------------------------------------------- inputs


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


def _named(posterior, dataset, notes):
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


# ----------------------------------------------------------------- sections


def section_summary(posterior, dataset, metrics, samples_source, label):
    """What was sampled: method, model, samples, variables, data, and the graph the data comes with."""
    meta = posterior.metadata
    rows = [
        ("method", meta.get("display_name") or meta.get("method") or "unknown"),
        ("model", meta.get("model", "unknown")),
        ("samples", f"{posterior.num_samples} (K) from {samples_source}"),
        ("variables", f"{posterior.num_variables} (d): {', '.join(posterior.names)}"),
        ("data", f"{dataset.source or 'the data given'}: {dataset.train.shape[0]} training rows"),
    ]
    if dataset.test is not None:
        rows.append(("held-out rows", str(dataset.test.shape[0])))
    rows.append(("graph of the data", label or "none (no graph.csv)"))
    share = metrics.get("share_cyclic")
    if share:
        rows.append(("cyclic graphs", f"{100 * share:.1f}% of the weight"))
    if meta.get("iterations") is not None:
        rows.append(("training", f"{meta['iterations']} iterations, preset {meta.get('preset', '?')}"))
    if meta.get("wall_seconds") is not None:
        rows.append(("wall time of the fit", f"{float(meta['wall_seconds']):.1f} s"))
    if dataset.test is not None and metrics.get("nll_expected") is not None:
        rows.append(("held-out NLL, expected", _number(metrics["nll_expected"], 6)))
        rows.append(("held-out NLL, predictive", _number(metrics["nll_predictive"], 6)))
    body = _table(None, rows)
    return _section("summary", "Summary", body)


def section_graph_metrics(posterior, dataset, metrics, label):
    """E-SHD and AUROC (evaluate) against the dataset's graph, named by `label`; a sentence without one."""
    heading = "Against the graph of the data"
    if dataset.graph is None:
        return _section(
            "graph-metrics",
            heading,
            _absent("The data has no graph.csv, so there is no graph to compare the samples with (E-SHD, AUROC)."),
        )
    heading = f"Against the {label}"
    expected_edges = float(posterior.edge_marginals().to_numpy().sum())  # E_q[|E(G)|], every sample
    rows = [
        ("E-SHD", _number(metrics.get("expected_shd")), "expected structural Hamming distance (lower is better)"),
        ("AUROC", _number(metrics.get("auroc")), "of the edge marginals (higher is better; 0.5: chance)"),
        (f"edges of the {label}", str(int(np.asarray(dataset.graph).sum())), ""),
        ("edges per sample", f"{expected_edges:.3g}", "expected number of edges of the sampled graphs"),
    ]
    body = _table(["metric", "value", "what it is"], rows, numeric=(1,))
    if label == "reference graph":  # the dataset's own words when it has them (Sachs: realdata.sachs.GRAPH_NOTE)
        note = dataset.meta.get("graph")
        note = note if isinstance(note, str) else "The reference graph is not a ground truth."
        body += f'<p class="note">{_e(note)}</p>'
    return _section("graph-metrics", heading, body)


def section_edge_marginals(posterior, dataset, label):
    """Heatmap of P(parent -> child) with the variable names, the graph's edges outlined."""
    from jspgfn.report.figures import draw_edge_marginals

    marginals = posterior.edge_marginals()
    matrix = marginals.to_numpy(float).copy()
    np.fill_diagonal(matrix, np.nan)
    outlined = [] if dataset.graph is None else list(zip(*np.nonzero(np.asarray(dataset.graph))))
    d = posterior.num_variables
    fig = draw_edge_marginals(
        [("P(parent → child | D)", matrix, list(posterior.names), outlined)],
        reference_note=None,  # said under the image
        annotate=d <= 12,
    )
    body = figure_image(fig, f"edge-marginal heatmap of {d} variables", dpi=150 if d <= 12 else DPI)
    body += (
        '<p class="note">Rows: parent (source of the edge); columns: child. Each cell is the weighted share of '
        "samples with that edge" + (f"; red outlines mark the edges of the {_e(label)}." if label else ".") + "</p>"
    )
    return _section("edge-marginals", "Edge marginals", body)


def draw_graphs(graphs, names, titles, reference=None, columns=3):
    """Small multiples of directed graphs on a circle, returned as an open matplotlib Figure.

    graphs: uint8 [M, d, d] (graphs[m, i, j] = 1: i -> j); names: the d variable names; titles: M panel
    titles; reference: uint8 [d, d] or None. With a reference, an edge of it is drawn black, an edge not in
    it red and dashed, and an edge of the reference missing from the graph light grey and dotted.
    """
    graphs = np.asarray(graphs)
    count, d = graphs.shape[0], graphs.shape[1]
    columns = max(1, min(columns, count))
    rows = -(-count // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3.5 * columns, 3.7 * rows), squeeze=False)
    angles = np.pi / 2 - 2 * np.pi * np.arange(d) / d
    position = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    fontsize = 9 if d <= 12 else 7
    for index, ax in enumerate(axes.flat):
        ax.axis("off")
        if index >= count:
            continue
        graph = graphs[index]
        nodes = [
            ax.text(
                *position[i],
                str(names[i]),
                ha="center",
                va="center",
                fontsize=fontsize,
                zorder=3,
                bbox={"boxstyle": "round,pad=0.3", "facecolor": "#e8f0fb", "edgecolor": "#4a6fa5"},
            )
            for i in range(d)
        ]
        edges = [(i, j, "black", "-") for i, j in zip(*np.nonzero(graph))]
        if reference is not None:
            edges = [
                (i, j, "black" if reference[i, j] else "C3", "-" if reference[i, j] else "--") for i, j, *_ in edges
            ]
            edges += [(i, j, "0.75", ":") for i, j in zip(*np.nonzero(reference & ~graph.astype(bool)))]
        for i, j, colour, style in edges:
            ax.annotate(
                "",
                xy=position[j],
                xytext=position[i],
                arrowprops={
                    "arrowstyle": "-|>",
                    "color": colour,
                    "linestyle": style,
                    "lw": 1.2,
                    "mutation_scale": 12,
                    "patchA": nodes[i].get_bbox_patch(),
                    "patchB": nodes[j].get_bbox_patch(),
                    "shrinkA": 2,
                    "shrinkB": 2,
                    "connectionstyle": "arc3,rad=0.08",
                },
                zorder=2,
            )
        ax.set(xlim=(-1.35, 1.35), ylim=(-1.3, 1.3), aspect="equal")
        ax.set_title(titles[index], fontsize=10)
    fig.tight_layout()
    return fig


def section_top_graphs(posterior, dataset, label, top):
    """The `top` most probable distinct graphs (Posterior.top_graphs), drawn with their probabilities."""
    graphs = posterior.top_graphs(top)
    total = len(np.unique(posterior.graphs.reshape(posterior.num_samples, -1), axis=0))
    titles = [
        f"#{rank}: P = {row.probability:.3f}\n{_count(row.count, 'sample')}, {_count(len(row.edges), 'edge')}"
        for rank, row in enumerate(graphs.itertuples(), start=1)
    ]
    reference = None if dataset.graph is None else np.asarray(dataset.graph).astype(bool)
    fig = draw_graphs(np.stack(graphs["graph"].to_list()), posterior.names, titles, reference)
    body = figure_image(fig, f"the {len(graphs)} most probable graphs")
    if reference is not None:
        body += (
            f'<p class="note">Black: an edge of the {_e(label)}; red, dashed: an edge not in it; '
            "grey, dotted: an edge of it that the graph lacks.</p>"
        )
    shown = float(graphs["probability"].sum())
    body += (
        f"<p>{len(graphs)} of the {total} distinct graphs sampled; together they hold {shown:.3f} of the "
        "posterior mass (weighted share of the samples).</p>"
    )
    rows = [
        (rank, f"{row.probability:.4f}", row.count, ", ".join(f"{p} → {c}" for p, c in row.edges) or "(no edge)")
        for rank, row in enumerate(graphs.itertuples(), start=1)
    ]
    body += _table(["#", "probability", "samples", "edges"], rows, numeric=(0, 1, 2))
    return _section("top-graphs", "Most probable graphs", body)


def section_weights(posterior, num_weights=NUM_WEIGHTS):
    """Histograms of the weight theta[i, j] of the most probable edges, over the samples with the edge
    (Posterior.theta_summary for the numbers); a sentence for models without a weight per edge."""
    k, d = posterior.num_samples, posterior.num_variables
    heading = "Edge weights"
    if posterior.theta.shape != (k, d, d):
        model = posterior.metadata.get("model", "unknown")
        return _section(
            "weights",
            heading,
            _absent(
                f"The model '{model}' has no single weight per edge (theta of shape "
                f"{list(posterior.theta.shape[1:])} holds each variable's network parameters), so there are no "
                "weight marginals to draw."
            ),
        )
    summary = posterior.theta_summary()
    if summary.empty:
        return _section("weights", heading, _absent("No sample has an edge, so there is no edge weight to show."))
    shown = summary.head(num_weights)
    index = {name: i for i, name in enumerate(posterior.names)}
    weights = posterior.weights()
    columns = min(3, len(shown))
    rows = -(-len(shown) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3.4 * columns, 2.6 * rows), squeeze=False)
    for ax, row in zip(axes.flat, shown.itertuples()):
        i, j = index[row.parent], index[row.child]
        present = posterior.graphs[:, i, j].astype(bool)
        ax.hist(posterior.theta[present, i, j], bins=30, weights=weights[present], color="C0", alpha=0.8)
        ax.axvline(0.0, color="0.5", lw=0.8)
        ax.set_title(f"{row.parent} → {row.child}: P = {row.probability:.2f}", fontsize=10)
        ax.set_xlabel("weight θ")
        ax.set_yticks([])
    for ax in list(axes.flat)[len(shown) :]:
        ax.axis("off")
    fig.tight_layout()
    body = figure_image(fig, f"weight marginals of the {len(shown)} most probable edges")
    body += (
        f'<p class="note">The {len(shown)} most probable edges: the weighted histogram of the edge\'s weight '
        "over the samples that have the edge.</p>"
    )
    table = [
        (f"{r.parent} → {r.child}", f"{r.probability:.3f}", f"{r.mean:.3g}", f"{r.sd:.3g}") for r in shown.itertuples()
    ]
    body += _table(["edge", "P(edge)", "weight: mean", "weight: sd"], table, numeric=(1, 2, 3))
    return _section("weights", heading, body)


def section_log_pt(posterior, metrics):
    """log P_T(G, theta) against log R(G, theta) with the RANSAC fit of evaluate; a sentence without log P_T."""
    from jspgfn.report.figures import draw_log_pt

    heading = "log P_T against log R"
    points = metrics.get("log_pt_points")
    if posterior.log_prob_terminating is None:
        method = posterior.metadata.get("display_name") or posterior.metadata.get("method") or "this method"
        return _section(
            "log-pt",
            heading,
            _absent(
                f"These samples ({method}) carry no estimate of log P_T(G, θ): only JSP-GFN samples drawn with "
                "`jspgfn sample --log-pt` (Python: `run.sample(n, log_pt=True)`) have them, so there is no "
                "log P_T figure."
            ),
        )
    if not points or not points["log_pt"]:
        return _section("log-pt", heading, _absent("No sample has a finite log P_T and log R: nothing to draw."))
    slope, intercept = metrics.get("log_pt_slope"), metrics.get("log_pt_intercept")
    method = posterior.metadata.get("display_name") or posterior.metadata.get("method") or "samples"
    fig = draw_log_pt(
        [
            (
                f"{method}: {len(points['log_pt'])} samples",
                points["log_reward"],
                points["log_pt"],
                points["num_edges"],
                np.nan if slope is None else slope,
                np.nan if intercept is None else intercept,
            )
        ]
    )
    body = figure_image(fig, "log P_T against log R of the samples")
    fit = (
        f"RANSAC slope Δ = {slope:.4g} (1 for a sampler of the exact posterior), intercept {intercept:.4g}"
        if slope is not None
        else "no RANSAC slope (fewer than 3 points or a constant log R)"
    )
    body += (
        f"<p>{len(points['log_pt'])} samples with a finite log P_T and log R; {_e(fit)}; Pearson's r = "
        f"{_number(metrics.get('log_pt_pearson'))}.</p>"
    )
    return _section("log-pt", heading, body)


def section_training(posterior, run):
    """The loss of a JSP-GFN run folder's metrics.jsonl against the iteration; a sentence without a run."""
    heading = "Training curve"
    if run is None:
        return _section(
            "training",
            heading,
            _absent(
                "No run folder was given (--run RUN_FOLDER, the folder of `jspgfn train --out`), so there is no "
                "training curve."
            ),
        )
    rows, config = read_training_log(run)
    recorded = posterior.metadata.get("dataset_sha256")
    trained_on = config.get("data_sha256")
    if recorded and trained_on and recorded != trained_on:
        raise DataError(Path(run) / "config.json", "this run was trained on other data than the samples were drawn for")
    iteration = np.array([row["iteration"] for row in rows], float)
    panels = [("loss", "loss")] + [(key, "|Δ|") for key in ("abs_delta",) if all(key in row for row in rows)]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.0), squeeze=False)
    for ax, (key, name) in zip(axes[0], panels):
        values = np.array([row[key] for row in rows], float)
        ax.plot(iteration, values, marker="o" if len(rows) <= 30 else None, ms=3, lw=1.2, color="C0")
        finite = values[np.isfinite(values)]
        if finite.size and finite.min() > 0 and finite.max() > 10 * finite.min():  # over a decade: log scale
            ax.set_yscale("log")
        ax.set_xlabel("iteration")
        ax.set_ylabel(name)
        ax.set_title(f"{name} per dispatch", fontsize=10)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    body = figure_image(fig, "training curve")
    planned = (config.get("train_config") or {}).get("num_iterations")
    done = int(iteration.max())
    state = "" if planned is None else (" (finished)" if done >= planned else f" of {planned} planned (unfinished)")
    body += (
        f"<p>{_e(Path(run) / 'metrics.jsonl')}: {len(rows)} dispatches up to iteration {done}{state}"
        + (f", preset {_e(config['preset'])}" if config.get("preset") else "")
        + ".</p>"
    )
    return _section("training", heading, body)


def section_notes(notes):
    """evaluate's notes (why a metric is null, samples left out) and the page's own."""
    if not notes:
        return ""
    items = "".join(f"<li>{_e(note)}</li>" for note in notes)
    return _section("notes", "Notes", f'<ul class="note">{items}</ul>')


# ----------------------------------------------------------------- the page


def build_report(posterior, dataset, run=None, top=5, title=None, samples_source="samples"):
    """The HTML page (a str) about `posterior` (Posterior) fitted on `dataset` (Dataset).

    run: a JSP-GFN run folder (path) for the training curve, or None. top: how many of the most probable
    graphs to draw (>= 1). title: the page's title (default: the method and the data). samples_source: the
    samples' file in messages. Raises DataError when the samples were drawn for other data
    (evaluate.check_dataset_identity) or the run folder is unreadable, OptionError for a bad `top`.
    """
    from jspgfn.evaluate import evaluate

    check_count("top", top, 1)
    metrics = evaluate(posterior, dataset, samples_source=samples_source)  # checks d and the data's identity
    notes = []
    posterior = _named(posterior, dataset, notes)
    label = graph_label(dataset)
    method = posterior.metadata.get("display_name") or posterior.metadata.get("method") or "samples"
    title = title or f"Posterior of {method} on {Path(dataset.source).name if dataset.source else 'the data'}"
    sections = [
        section_summary(posterior, dataset, metrics, samples_source, label),
        section_graph_metrics(posterior, dataset, metrics, label),
        section_edge_marginals(posterior, dataset, label),
        section_top_graphs(posterior, dataset, label, top),
        section_weights(posterior),
        section_log_pt(posterior, metrics),
        section_training(posterior, run),
        section_notes(metrics["notes"] + notes),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<link rel="icon" href="data:,">\n'
        f"<title>{_e(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n"
        f"<h1>{_e(title)}</h1>\n" + "\n".join(s for s in sections if s) + "\n</main>\n</body>\n</html>\n"
    )


def write_report(out, posterior, data, run=None, top=5, title=None):
    """Write the page of build_report to `out`, atomically (a reader never sees half a page). Returns out.

    posterior: a Posterior, PosteriorSamples or the path of a samples .npz; data: what the samples were
    fitted on, anything jspgfn.api.as_dataset takes (a dataset folder or CSV path, a DataFrame, an array);
    run: a JSP-GFN run folder (path or jspgfn.Run) or None.
    """
    from jspgfn.api import as_dataset
    from jspgfn.posterior import Posterior
    from jspgfn.samples import PosteriorSamples

    out = Path(out)
    if out.is_dir():
        raise DataError(out, "is a folder; name the HTML file to write")
    source = "samples"
    if not isinstance(posterior, PosteriorSamples):
        source, posterior = str(posterior), Posterior.load(posterior)
    elif not isinstance(posterior, Posterior):
        posterior = Posterior.of(posterior)
    run = getattr(run, "folder", run)
    page = build_report(posterior, as_dataset(data), run=run, top=top, title=title, samples_source=source)
    with atomic.atomic_path(out) as tmp:
        Path(tmp).write_text(page, encoding="utf-8")
    return out
