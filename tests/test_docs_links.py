"""README.md and docs/ stay true to each other and to the config (fast checks of files only).

- every relative Markdown link of README.md and docs/**/*.md points to a file or folder that exists, and its
  #anchor to a heading of that file (GitHub's heading ids);
- no reference a reader cannot follow: issue numbers, line numbers of other files;
- the README's table of tables and figures, workflow/resources/paper_figures.yaml and the workflow's stems
  (config/config.yaml's `figures:` keys and the small-graph ones) name the same stems, with the same paper
  figure and experiment.
"""

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# Lab notes edited elsewhere and kept as they are; their links are still checked.
NOT_REWRITTEN = {ROOT / "docs" / "jspgfn-beyond-d5.md"}
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def prose(text):
    """The text without fenced code blocks and inline code spans (links and headings there are not links)."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return re.sub(r"`[^`\n]*`", "", text)


def slug(heading):
    """GitHub's id of a heading: lower case, punctuation dropped (inline code's backticks too), spaces -> '-'."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    """The heading ids of a Markdown file, duplicates numbered as GitHub does (-1, -2, ...)."""
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.M | re.S)
    seen, ids = {}, set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", text, re.M):
        base = slug(heading)
        count = seen.get(base, 0)
        ids.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return ids


def links(path):
    for match in LINK.finditer(prose(path.read_text())):
        yield match.group(1) or match.group(2)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_to_existing_files_and_headings(page):
    broken = []
    for target in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        resolved = (page.parent / file_part).resolve() if file_part else page
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading with id '{anchor}' in {resolved.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_link_checker_catches_a_broken_link_and_anchor(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# A title: `code`\n```sh\n# not a heading\n```\n[x](missing.md) [y](#a-title-code) [z](#nope)\n")
    assert anchors(page) == {"a-title-code"}
    assert list(links(page)) == ["missing.md", "#a-title-code", "#nope"]


@pytest.mark.parametrize("page", [p for p in PAGES if p not in NOT_REWRITTEN], ids=lambda p: str(p.relative_to(ROOT)))
def test_no_issue_numbers_or_line_numbers_of_other_files(page):
    text = page.read_text()
    assert not re.search(r"\bissues? #?\d+", text, re.I), f"{page.name} refers to an issue number"
    assert not re.search(r"\blines? \d+ of\b|\.(py|smk|md|yaml):\d+", text), f"{page.name} cites a line number"


# ------------------------------------------------------------------------------------- tables and figures


def workflow_stems():
    """{stem: experiment} of every table and figure the paper preset draws: the small-graph ones
    (figure_targets and FIGURE_SPECS in workflow/rules/figure_specs.smk) and config/config.yaml's `figures:`."""
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    small = config.get("small_graphs", "small_graphs")
    source = (ROOT / "workflow" / "rules" / "figure_specs.smk").read_text()
    specs = source[source.index("FIGURE_SPECS = {") : source.index("\n}\n", source.index("FIGURE_SPECS = {"))]
    small_stems = re.findall(r'^    "(\w+)": \{', specs, re.M)
    assert small_stems, "FIGURE_SPECS not found in workflow/rules/figure_specs.smk"
    listed = re.search(r'stems = \[((?:"\w+", )+)\*FIGURE_SPECS', source)
    assert listed, "figure_targets' fixed small-graph stems not found in workflow/rules/figure_specs.smk"
    stems = {stem: small for stem in re.findall(r'"(\w+)"', listed.group(1)) + small_stems}
    for eid, experiment in config["experiments"].items():
        for stem in experiment.get("figures") or {}:
            stems[stem] = eid
    return stems


def readme_table():
    """{stem: (paper figure, experiment)} from the README's table of tables and figures."""
    text = (ROOT / "README.md").read_text()
    header = "| paper figure or table | output file | experiment | presets | time on 2 cores (quick) |"
    assert header in text, "README.md has no table of tables and figures"
    rows = {}
    for line in text[text.index(header) :].splitlines()[2:]:
        if not line.startswith("|"):
            break
        paper, output, experiment = (cell.strip() for cell in line.strip("|").split("|")[:3])
        stem = re.fullmatch(r"`(\w+)\.(png|csv)`", output)
        assert stem, f"README table: output file {output!r} is not `STEM.png` or `STEM.csv`"
        assert stem.group(1) not in rows, f"README table lists {stem.group(1)} twice"
        rows[stem.group(1)] = (paper, experiment.strip("`"))
    return rows


def test_readme_table_lists_every_workflow_figure_and_nothing_else():
    stems, table = workflow_stems(), readme_table()
    assert set(table) == set(stems), (
        f"in the workflow, not in the README: {sorted(set(stems) - set(table))}; "
        f"in the README, not in the workflow: {sorted(set(table) - set(stems))}"
    )
    for stem, experiment in stems.items():
        assert table[stem][1] == experiment, f"README table: {stem} is drawn by {experiment}"


def test_paper_figures_yaml_matches_the_workflow_and_the_readme():
    specs = yaml.safe_load((ROOT / "workflow" / "resources" / "paper_figures.yaml").read_text())
    stems, table = workflow_stems(), readme_table()
    assert set(specs) == set(stems)
    for stem, spec in specs.items():
        assert spec["experiment"] == stems[stem], stem
        assert table[stem][0] == (spec["paper"] or "beyond the paper"), stem
        assert spec["paper_reports"].strip(), stem


def test_readme_times_are_the_compute_plans_prediction_for_the_quick_preset():
    """The README's time column and its total are what `benchmarks/compute_plan.py config/quick.yaml --predict`
    predicts (wall minutes on 2 cores per experiment, rounded), with the quick preset's dataset counts."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("compute_plan", ROOT / "benchmarks" / "compute_plan.py")
    plan = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plan)
    quick = yaml.safe_load((ROOT / "config" / "quick.yaml").read_text())
    table = plan.predict(quick)
    wall = table.groupby("experiment")["slot_s"].sum() / 2 / 60
    text = (ROOT / "README.md").read_text()
    seen = set()
    for eid, exp in quick["experiments"].items():
        cell = re.search(rf"\| `{eid}` \| [^|]* \| (\d+) min \((\d+) datasets?", text)
        assert cell, f"README table: no predicted time for {eid}"
        assert int(cell.group(1)) == round(wall[eid]), (eid, cell.group(1), wall[eid])
        assert int(cell.group(2)) == exp["num_datasets"], eid
        seen.add(eid)
    total = re.search(r"All of `make quick`: .*?predicted (\d+) min from (\d+) min of job time", text, re.S)
    assert total, "README: no predicted total for make quick"
    assert int(total.group(1)) == round(table["slot_s"].sum() / 2 / 60)
    assert int(total.group(2)) == round(table["job_s"].sum() / 60)
    assert int(total.group(1)) <= 90
    # docs/speed.md's table of the same prediction: each experiment's wall time, and the total.
    speed = (ROOT / "docs" / "speed.md").read_text()
    for eid, exp in quick["experiments"].items():
        row = re.search(rf"^\| {eid} \| {exp['num_datasets']} \| [\d.]+ \| [\d.]+ \| ([\d.]+) \|", speed, re.M)
        assert row and row.group(1) == f"{wall[eid]:.1f}", (eid, row and row.group(1), wall[eid])
    assert f"**{round(table['slot_s'].sum() / 2 / 60)} (predicted)**" in speed
