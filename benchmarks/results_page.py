"""Regenerate docs/results.md from a finished run: each table and figure beside what the paper reports.

    .venv/bin/python benchmarks/results_page.py --figures figures/quick --results results/quick
    make results-page                      # the same, for the quick preset
    .venv/bin/python benchmarks/results_page.py --reductions config/quick.yaml   # only the reductions, per experiment

For every stem of workflow/resources/paper_figures.yaml (the workflow's tables and figures, in page order):
a figure's STEM.png is copied into the images folder (docs/results/ beside docs/results.md) and embedded; a
table's STEM.csv (the numbers the workflow wrote) is printed as a Markdown table. Beside each: what the paper
reports there, and for Table D.1 and Figure 2b the paper's own numbers (the method registry's `paper_table_d1`).
Stems the run did not draw are listed as missing. Under each stem: what the run's preset reduces against the
paper preset (datasets and budgets, generated from the run's config by jspgfn.report.reductions, the
sentence that ends the figure's caption). The page is stamped with the commit (`git rev-parse HEAD`,
marked when the working tree has changes) and the date. The page and the images are written atomically
(temporary name, then rename); images of an earlier page that this run no longer draws are removed.
"""

import argparse
import datetime
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[1]
PAPER_FIGURES = ROOT / "workflow" / "resources" / "paper_figures.yaml"
# Which columns of the paper's Table D.1 to print beside a stem.
PAPER_D1_COLUMNS = {
    "table_d1": ["edge_rmse", "edge_pearson", "path_rmse", "path_pearson", "markov_rmse", "markov_pearson"],
    "figure_2b": ["edge_rmse", "edge_pearson"],
}


def git_commit(root=ROOT):
    """(commit hash, dirty) of the checkout at `root`; ("unknown", False) outside a git checkout."""
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown", False
    return commit, bool(status.strip())


def number(value):
    """A table cell: numbers to 4 significant digits, NaN as an en dash, the rest as text."""
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        return f"{value:.4g}"
    return str(value).replace("|", "\\|")


def markdown_table(frame):
    """A DataFrame as a Markdown table (header row, then one row per record)."""
    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|" + "---|" * len(frame.columns)]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(number(value) for value in row) + " |")
    return "\n".join(lines)


def table_numbers(path):
    """STEM.csv of a workflow table as Markdown: long (method, metric, mean, low, high) tables are pivoted to
    one row per method, "mean [low, high]" per metric (and the paper's "mean ± CI" where the table has it)."""
    frame = pd.read_csv(path)
    if not {"method", "metric", "mean"} <= set(frame.columns):
        return markdown_table(frame)
    rows = {}
    for record in frame.to_dict("records"):
        row = rows.setdefault(record["method"], {"method": record["method"]})
        cell = number(record["mean"])
        if "low" in record and not (pd.isna(record["low"]) or pd.isna(record["high"])):
            cell += f" [{number(record['low'])}, {number(record['high'])}]"
        row[record["metric"]] = cell
        if "paper_mean" in record and not pd.isna(record["paper_mean"]):
            row[f"{record['metric']} (paper)"] = f"{number(record['paper_mean'])} ± {number(record['paper_ci'])}"
    return markdown_table(pd.DataFrame(list(rows.values())).fillna("–"))


def paper_d1(columns):
    """The paper's Table D.1 columns as Markdown, "mean ± CI" as the paper prints them (from the method
    registry, jspgfn.registry.paper_table_d1)."""
    from jspgfn.registry import load_registry, paper_table_d1

    paper = pd.DataFrame(paper_table_d1(load_registry(ROOT)))
    shown = pd.DataFrame({"method": paper["method"]})
    for column in columns:
        shown[column] = [f"{m:.3f} ± {c:.3f}" for m, c in zip(paper[column], paper[f"{column}_ci"], strict=True)]
    return markdown_table(shown)


def shown_path(path):
    """`path` relative to the working directory when it lies below it, else as given."""
    try:
        return Path(path).resolve().relative_to(Path.cwd()).as_posix()
    except ValueError:
        return Path(path).as_posix()


def resolved_config(results):
    """results/{preset}/config.yaml (the config the run used), or None when there is none."""
    path = Path(results) / "config.yaml" if results else None
    if path is None or not path.is_file():
        return None
    return yaml.safe_load(path.read_text())


def reductions(config, paper_config=None):
    """{experiment id: the sentence on what `config` reduces against the paper preset} (jspgfn.report.reductions;
    '' where nothing is reduced)."""
    from jspgfn.registry import load_registry
    from jspgfn.report.reductions import reduction_note

    paper_config = paper_config or yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    registry = load_registry(ROOT)
    return {eid: reduction_note(config, eid, paper_config, registry) for eid in config.get("experiments", {})}


def _markdown(note):
    """A reduction sentence (reStructuredText literals ``x``) as Markdown: `x`, and * escaped."""
    return note.replace("``", "`").replace("*", "\\*")


def reductions_markdown(config):
    """The reductions of a preset as a Markdown list, one item per experiment, RST literals as Markdown code."""
    lines = []
    for eid, note in reductions(config).items():
        lines.append(f"- `{eid}`: {_markdown(note) or 'as the paper preset.'}")
    return "\n".join(lines)


def section(stem, spec, figures, image_dir, image_link, reduction=""):
    """(Markdown of one stem's section, image file name or None, drawn?)."""
    title = spec["paper"] or "beyond the paper"
    lines = [f"### `{stem}` ({title}; experiment `{spec['experiment']}`)", ""]
    if reduction:
        lines += [_markdown(reduction), ""]
    png, csv = figures / f"{stem}.png", figures / f"{stem}.csv"
    image = None
    if png.is_file():
        image = png.name
        shutil.copyfile(png, image_dir / image)
        lines += [f"![{stem}]({image_link}/{image})", ""]
    elif csv.is_file():
        lines += [f"Our numbers (`{stem}.csv`):", "", table_numbers(csv), ""]
    else:
        lines += ["Not drawn by this run.", ""]
    lines += [f"**The paper:** {spec['paper_reports']}", ""]
    if stem in PAPER_D1_COLUMNS:
        lines += ["The paper's Table D.1 (mean ± 95% CI over 20 datasets):", "", paper_d1(PAPER_D1_COLUMNS[stem]), ""]
    return "\n".join(lines), image, png.is_file() or csv.is_file()


def write_page(figures, out, results=None, commit=None, today=None, specs_path=PAPER_FIGURES):
    """Write the page `out` and its images (folder `out` without `.md`); return the stems drawn."""
    figures, out = Path(figures), Path(out)
    if not figures.is_dir():
        raise SystemExit(f"results_page: {figures}: no such folder (run the workflow first, e.g. make quick)")
    specs = yaml.safe_load(Path(specs_path).read_text())
    if commit is None:
        commit, dirty = git_commit()
        commit = f"{commit} (with uncommitted changes)" if dirty else commit
    today = today or datetime.date.today().isoformat()
    config = resolved_config(results)
    notes = reductions(config) if config is not None else {}
    image_dir = out.with_suffix("")
    image_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{image_dir.name}.", suffix=".tmp", dir=image_dir))
    try:
        sections, images, drawn = [], [], []
        for stem, spec in specs.items():
            text, image, was_drawn = section(
                stem, spec, figures, staging, image_dir.name, notes.get(spec["experiment"], "")
            )
            sections.append(text)
            images += [image] if image else []
            drawn += [stem] if was_drawn else []
        header = [
            "# Results of a finished run, beside the paper",
            "",
            f"Generated by `benchmarks/results_page.py` (`make results-page`) from `{shown_path(figures)}`",
            f"at commit `{commit}` on {today}. Regenerate it after a finished run; it replaces this page",
            f"and `{image_dir.name}/`.",
            "How each experiment is set up: [experiments.md](experiments.md); interpretations and the",
            "measurements behind them: [findings/](findings/README.md).",
            "",
        ]
        if config is not None:
            counts = ", ".join(
                f"`{eid}` {exp.get('num_datasets')}" for eid, exp in config.get("experiments", {}).items()
            )
            header += [f"Preset `{config.get('preset')}`; datasets per experiment: {counts}.", ""]
        missing = [stem for stem in specs if stem not in drawn]
        if missing:
            header += ["Not drawn by this run: " + ", ".join(f"`{stem}`" for stem in missing) + ".", ""]
        page = "\n".join(header + sections).rstrip() + "\n"
        for image in images:
            os.replace(staging / image, image_dir / image)
        for old in image_dir.glob("*.png"):
            if old.name not in images:
                old.unlink()
        with tempfile.NamedTemporaryFile("w", dir=out.parent, prefix=f".{out.name}.", suffix=".tmp", delete=False) as f:
            f.write(page)
        os.replace(f.name, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return drawn


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--figures", default="figures/quick", help="the run's figures folder (default figures/quick)")
    parser.add_argument("--results", default="results/quick", help="the run's results folder, for its config.yaml")
    parser.add_argument("--out", default=str(ROOT / "docs" / "results.md"), help="the page (default docs/results.md)")
    parser.add_argument(
        "--reductions", metavar="CONFIG", help="print only what CONFIG reduces against the paper preset"
    )
    args = parser.parse_args(argv)
    if args.reductions:
        print(reductions_markdown(yaml.safe_load(Path(args.reductions).read_text())))
        return 0
    drawn = write_page(args.figures, args.out, args.results)
    print(f"wrote {args.out}: {len(drawn)} tables and figures, images in {Path(args.out).with_suffix('')}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
