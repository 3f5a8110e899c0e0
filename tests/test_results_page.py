"""benchmarks/results_page.py (`make results-page`) on a small fake run: the page lists every table and figure
of workflow/resources/paper_figures.yaml, embeds the copied PNGs, prints the tables' numbers beside the
paper's, and carries the commit of the checkout."""

import subprocess
import sys
from pathlib import Path

import pandas as pd
import yaml

from jspgfn.registry import load_registry, paper_table_d1

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "results_page.py"
SPECS = yaml.safe_load((ROOT / "workflow" / "resources" / "paper_figures.yaml").read_text())
# A 1x1 PNG (valid file; its bytes are compared after the copy).
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d4944415478da63f8ffff3f0005fe02fea7d6a4e10000000049454e44ae426082"
)


def fake_run(tmp_path, drop=()):
    """figures/: a PNG per figure stem, a CSV per table stem (table_d1 in the workflow's long format);
    results/config.yaml naming the preset."""
    figures = tmp_path / "figures"
    figures.mkdir()
    for stem in SPECS:
        if stem in drop:
            continue
        if stem.startswith("table_"):
            pd.DataFrame(
                {
                    "method": ["JSP-GFN (diag)", "JSP-GFN (diag)"],
                    "label": ["jspgfn-diag"] * 2,
                    "metric": ["edge_rmse", "edge_pearson"],
                    "mean": [0.0234, 0.9981],
                    "low": [0.0123, 0.9970],
                    "high": [0.0456, 0.9990],
                    "n": [5, 5],
                    "paper_mean": [0.018, 0.998],
                    "paper_ci": [0.005, 0.001],
                }
            ).to_csv(figures / f"{stem}.csv", index=False)
        else:
            (figures / f"{stem}.png").write_bytes(PNG + stem.encode())
    results = tmp_path / "results"
    results.mkdir()
    (results / "config.yaml").write_text(
        yaml.safe_dump({"preset": "quick", "experiments": {"small_graphs": {"num_datasets": 5}}})
    )
    return figures, results


def run_script(figures, results, out):
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--figures", str(figures), "--results", str(results), "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )


def head_commit():
    return subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_page_lists_every_figure_embeds_the_images_and_carries_the_commit(tmp_path):
    figures, results = fake_run(tmp_path)
    out = tmp_path / "docs" / "results.md"
    out.parent.mkdir()
    done = run_script(figures, results, out)
    assert done.returncode == 0, done.stderr
    page = out.read_text()
    assert head_commit() in page
    assert "Preset `quick`" in page
    for stem, spec in SPECS.items():
        assert f"### `{stem}`" in page, stem
        assert spec["paper_reports"] in page, stem
        if stem.startswith("table_"):
            continue
        assert f"![{stem}](results/{stem}.png)" in page
        copied = tmp_path / "docs" / "results" / f"{stem}.png"
        assert copied.read_bytes() == (figures / f"{stem}.png").read_bytes()
    # a table's numbers, pivoted to one row per method, beside the paper's
    assert "0.0234 [0.0123, 0.0456]" in page
    assert "0.018 ± 0.005" in page
    # the paper's Table D.1 (the method registry's numbers) under Table D.1 and Figure 2b
    paper = pd.DataFrame(paper_table_d1(load_registry(ROOT))).set_index("method")
    mh = paper.loc["MH-MC3"]
    assert f"{mh['edge_rmse']:.3f} ± {mh['edge_rmse_ci']:.3f}" in page
    assert "Not drawn by this run" not in page
    assert not list((tmp_path / "docs" / "results").glob(".*.tmp")), "staging folder left behind"


def test_missing_figures_are_named_and_stale_images_removed(tmp_path):
    figures, results = fake_run(tmp_path)
    out = tmp_path / "results.md"
    assert run_script(figures, results, out).returncode == 0
    assert (tmp_path / "results" / "figure_3c.png").is_file()
    (figures / "figure_3c.png").unlink()
    assert run_script(figures, results, out).returncode == 0
    page = out.read_text()
    assert "Not drawn by this run: `figure_3c`." in page
    assert "results/figure_3c.png" not in page
    assert not (tmp_path / "results" / "figure_3c.png").exists()
    assert (tmp_path / "results" / "figure_3a.png").is_file()


def test_missing_figures_folder_is_one_line(tmp_path):
    done = run_script(tmp_path / "nowhere", tmp_path, tmp_path / "results.md")
    assert done.returncode != 0
    assert "nowhere: no such folder" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "results.md").exists()


def test_each_section_states_what_the_runs_preset_reduces(tmp_path):
    """The run's config (results/config.yaml: 5 small-graph datasets, quick preset) against the paper preset's
    20: the sentence that ends the captions is under every stem of that experiment."""
    figures, results = fake_run(tmp_path)
    out = tmp_path / "docs" / "results.md"
    out.parent.mkdir()
    assert run_script(figures, results, out).returncode == 0
    page = out.read_text()
    for stem, spec in SPECS.items():
        if spec["experiment"] == "small_graphs":
            part = page.split(f"### `{stem}`")[1].split("### ")[0]
            assert "REDUCED (`quick` preset): 5 of the paper preset's 20 datasets." in part, stem


def test_the_experiments_page_lists_the_quick_presets_reductions_as_generated():
    """docs/experiments.md's list of the quick preset's reductions is `results_page.py --reductions
    config/quick.yaml`, so it cannot go stale when a budget or a dataset count changes."""
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--reductions", str(ROOT / "config" / "quick.yaml")],
        capture_output=True,
        text=True,
        check=True,
    )
    page = (ROOT / "docs" / "experiments.md").read_text()
    listed = page.split("<!-- reductions: config/quick.yaml -->\n")[1].split("\n<!-- end reductions -->")[0]
    assert listed == result.stdout.rstrip("\n")
    quick = yaml.safe_load((ROOT / "config" / "quick.yaml").read_text())
    for eid in quick["experiments"]:
        assert f"- `{eid}`:" in listed
