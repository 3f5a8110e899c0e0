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

This module holds the sections and the page; the HTML helpers are html_page.py, the page's own figures
posterior_figures.py, its inputs beyond the samples and the data (graph label, training log)
posterior_inputs.py.
"""

from pathlib import Path

import numpy as np

from jspgfn import atomic
from jspgfn.errors import DataError, check_count
from jspgfn.report.html_page import (
    DPI,
    absent,
    escape,
    figure_image,
    fmt_number,
    html_section,
    html_table,
    page,
    plural,
)
from jspgfn.report.posterior_figures import draw_graphs, draw_training_curve, draw_weights
from jspgfn.report.posterior_inputs import graph_label, named, read_training_log

NUM_WEIGHTS = 6  # weight histograms: the most probable edges


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
        rows.append(("held-out NLL, expected", fmt_number(metrics["nll_expected"], 6)))
        rows.append(("held-out NLL, predictive", fmt_number(metrics["nll_predictive"], 6)))
    body = html_table(None, rows)
    return html_section("summary", "Summary", body)


def section_graph_metrics(posterior, dataset, metrics, label):
    """E-SHD and AUROC (evaluate) against the dataset's graph, named by `label`; a sentence without one."""
    heading = "Against the graph of the data"
    if dataset.graph is None:
        return html_section(
            "graph-metrics",
            heading,
            absent("The data has no graph.csv, so there is no graph to compare the samples with (E-SHD, AUROC)."),
        )
    heading = f"Against the {label}"
    expected_edges = float(posterior.edge_marginals().to_numpy().sum())  # E_q[|E(G)|], every sample
    rows = [
        ("E-SHD", fmt_number(metrics.get("expected_shd")), "expected structural Hamming distance (lower is better)"),
        ("AUROC", fmt_number(metrics.get("auroc")), "of the edge marginals (higher is better; 0.5: chance)"),
        (f"edges of the {label}", str(int(np.asarray(dataset.graph).sum())), ""),
        ("edges per sample", f"{expected_edges:.3g}", "expected number of edges of the sampled graphs"),
    ]
    body = html_table(["metric", "value", "what it is"], rows, numeric=(1,))
    if label == "reference graph":  # the dataset's own words when it has them (Sachs: realdata.sachs.GRAPH_NOTE)
        note = dataset.meta.get("graph")
        note = note if isinstance(note, str) else "The reference graph is not a ground truth."
        body += f'<p class="note">{escape(note)}</p>'
    return html_section("graph-metrics", heading, body)


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
        "samples with that edge" + (f"; red outlines mark the edges of the {escape(label)}." if label else ".") + "</p>"
    )
    return html_section("edge-marginals", "Edge marginals", body)


def section_top_graphs(posterior, dataset, label, top):
    """The `top` most probable distinct graphs (Posterior.top_graphs), drawn with their probabilities."""
    graphs = posterior.top_graphs(top)
    total = len(np.unique(posterior.graphs.reshape(posterior.num_samples, -1), axis=0))
    titles = [
        f"#{rank}: P = {row.probability:.3f}\n{plural(row.count, 'sample')}, {plural(len(row.edges), 'edge')}"
        for rank, row in enumerate(graphs.itertuples(), start=1)
    ]
    reference = None if dataset.graph is None else np.asarray(dataset.graph).astype(bool)
    fig = draw_graphs(np.stack(graphs["graph"].to_list()), posterior.names, titles, reference)
    body = figure_image(fig, f"the {len(graphs)} most probable graphs")
    if reference is not None:
        body += (
            f'<p class="note">Black: an edge of the {escape(label)}; red, dashed: an edge not in it; '
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
    body += html_table(["#", "probability", "samples", "edges"], rows, numeric=(0, 1, 2))
    return html_section("top-graphs", "Most probable graphs", body)


def section_weights(posterior, num_weights=NUM_WEIGHTS):
    """Histograms of the weight theta[i, j] of the most probable edges, over the samples with the edge
    (Posterior.theta_summary for the numbers); a sentence for models without a weight per edge."""
    k, d = posterior.num_samples, posterior.num_variables
    heading = "Edge weights"
    if posterior.theta.shape != (k, d, d):
        model = posterior.metadata.get("model", "unknown")
        return html_section(
            "weights",
            heading,
            absent(
                f"The model '{model}' has no single weight per edge (theta of shape "
                f"{list(posterior.theta.shape[1:])} holds each variable's network parameters), so there are no "
                "weight marginals to draw."
            ),
        )
    summary = posterior.theta_summary()
    if summary.empty:
        return html_section("weights", heading, absent("No sample has an edge, so there is no edge weight to show."))
    shown = summary.head(num_weights)
    fig = draw_weights(posterior, shown)
    body = figure_image(fig, f"weight marginals of the {len(shown)} most probable edges")
    body += (
        f'<p class="note">The {len(shown)} most probable edges: the weighted histogram of the edge\'s weight '
        "over the samples that have the edge.</p>"
    )
    table = [
        (f"{r.parent} → {r.child}", f"{r.probability:.3f}", f"{r.mean:.3g}", f"{r.sd:.3g}") for r in shown.itertuples()
    ]
    body += html_table(["edge", "P(edge)", "weight: mean", "weight: sd"], table, numeric=(1, 2, 3))
    return html_section("weights", heading, body)


def section_log_pt(posterior, metrics):
    """log P_T(G, theta) against log R(G, theta) with the RANSAC fit of evaluate; a sentence without log P_T."""
    from jspgfn.report.figures import draw_log_pt

    heading = "log P_T against log R"
    points = metrics.get("log_pt_points")
    if posterior.log_prob_terminating is None:
        method = posterior.metadata.get("display_name") or posterior.metadata.get("method") or "this method"
        return html_section(
            "log-pt",
            heading,
            absent(
                f"These samples ({method}) carry no estimate of log P_T(G, θ): only JSP-GFN samples drawn with "
                "`jspgfn sample --log-pt` (Python: `run.sample(n, log_pt=True)`) have them, so there is no "
                "log P_T figure."
            ),
        )
    if not points or not points["log_pt"]:
        return html_section("log-pt", heading, absent("No sample has a finite log P_T and log R: nothing to draw."))
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
        f"<p>{len(points['log_pt'])} samples with a finite log P_T and log R; {escape(fit)}; Pearson's r = "
        f"{fmt_number(metrics.get('log_pt_pearson'))}.</p>"
    )
    return html_section("log-pt", heading, body)


def section_training(posterior, run):
    """The loss of a JSP-GFN run folder's metrics.jsonl against the iteration; a sentence without a run."""
    heading = "Training curve"
    if run is None:
        return html_section(
            "training",
            heading,
            absent(
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
    fig = draw_training_curve(rows)
    body = figure_image(fig, "training curve")
    planned = (config.get("train_config") or {}).get("num_iterations")
    done = int(iteration.max())
    state = "" if planned is None else (" (finished)" if done >= planned else f" of {planned} planned (unfinished)")
    body += (
        f"<p>{escape(Path(run) / 'metrics.jsonl')}: {len(rows)} dispatches up to iteration {done}{state}"
        + (f", preset {escape(config['preset'])}" if config.get("preset") else "")
        + ".</p>"
    )
    return html_section("training", heading, body)


def section_notes(notes):
    """evaluate's notes (why a metric is null, samples left out) and the page's own."""
    if not notes:
        return ""
    items = "".join(f"<li>{escape(note)}</li>" for note in notes)
    return html_section("notes", "Notes", f'<ul class="note">{items}</ul>')


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
    posterior = named(posterior, dataset, notes)
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
    return page(title, sections)


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
    text = build_report(posterior, as_dataset(data), run=run, top=top, title=title, samples_source=source)
    with atomic.atomic_path(out) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")
    return out
