"""The caption sentence that states what a preset reduces against the paper preset (issue 26)."""

import re
from pathlib import Path

import pytest
import yaml

from jspgfn.gflownet.presets import get_preset
from jspgfn.registry import load_registry, method_entry
from jspgfn.report.reductions import reduction_note

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def registry():
    return load_registry(ROOT)


@pytest.fixture(scope="module")
def paper():
    return yaml.safe_load((ROOT / "config" / "config.yaml").read_text())


def _toy(preset, num_datasets, ids, **config):
    return {"preset": preset, "experiments": {"e": {"num_datasets": num_datasets, "methods": ids}}, **config}


def test_the_note_states_datasets_and_budgets_against_the_paper(registry):
    paper = _toy("paper", 20, ["dibs"])
    ours = _toy("quick", 3, ["dibs"], methods={"dibs": {"params": {"steps": 100, "num_particles": 30}}})
    note = reduction_note(ours, "e", paper, registry)
    assert note.startswith("REDUCED (``quick`` preset): 3 of the paper preset's 20 datasets;")
    assert "DiBS ``dibs``: steps 100 (paper 3,000)" in note
    assert "num_particles" not in note  # the same as the paper's: not a reduction


def test_the_paper_preset_and_an_unreduced_experiment_say_nothing(registry, paper):
    assert reduction_note(paper, "small_graphs", paper, registry) == ""
    same = {**paper, "preset": "quick", "methods": {}}
    same["experiments"] = {"e": {"num_datasets": 20, "methods": ["dibs"]}}
    paper_e = {"preset": "paper", "experiments": {"e": {"num_datasets": 20, "methods": ["dibs"]}}}
    same["methods"] = {"dibs": method_entry(registry, "dibs", "paper")}
    assert reduction_note(same, "e", paper_e, registry) == ""


def test_max_datasets_caps_the_count_the_note_gives(registry):
    paper = _toy("paper", 20, ["b-pc"])
    ours = _toy("quick", 3, ["b-pc"], max_datasets=1)
    assert "1 of the paper preset's 20 datasets" in reduction_note(ours, "e", paper, registry)


@pytest.mark.parametrize("preset", ["quick", "smoke"])
def test_every_experiment_of_a_reduced_preset_states_its_dataset_count_and_budget(registry, paper, preset):
    config = yaml.safe_load((ROOT / "config" / f"{preset}.yaml").read_text())
    for eid, exp in config["experiments"].items():
        note = reduction_note(config, eid, paper, registry)
        ours, theirs = exp["num_datasets"], paper["experiments"][eid]["num_datasets"]
        if ours != theirs:
            assert f"{ours} of the paper preset's {theirs} datasets" in note, (eid, note)
        for mid in exp["methods"]:
            entry = method_entry(registry, mid, preset)
            if entry.get("kind") == "jspgfn":  # its training iterations, from the registry's budget
                iterations = entry.get("params", {}).get("num_iterations") or get_preset(preset).num_iterations
                assert re.search(rf"``{mid}``: num_iterations {iterations:,}\b", note), (eid, mid, note)
                assert f"{get_preset('paper').num_iterations:,}" in note


def test_every_caption_of_a_paper_figure_ends_with_the_reduction():
    """The report's captions (workflow/report/*.rst) print the rule's `reduction` param, and every rule
    that draws a figure or a table of an experiment sets it."""
    report = ROOT / "workflow" / "report"
    for name in ("experiment_figure.rst", "figure.rst", "table_d1.rst"):
        assert "{{ snakemake.params.reduction }}" in (report / name).read_text(), name
    rules = (ROOT / "workflow" / "rules" / "figures.smk").read_text()
    for rule in ("table_d1", "figure", "experiment_figure", "experiment_table"):
        body = rules.split(f"rule {rule}:")[1].split("\nrule ")[0]
        assert "reduction=lambda w: reduction(" in body, rule
