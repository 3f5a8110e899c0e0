"""The CI smoke workflow runs the README's test command; the lint tools are pinned exactly.

Fast checks of files only: no tool is run here.
"""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "smoke.yml"


def readme_test_command():
    """The `make test` line of README.md's first ```sh block, without its comment."""
    text = (ROOT / "README.md").read_text()
    block = re.search(r"^```sh\n(.*?)^```", text, re.M | re.S)
    assert block, "README.md has no ```sh code block"
    for line in block.group(1).splitlines():
        command = line.split("#", 1)[0].strip()
        if command.startswith("make test"):
            return command
    raise AssertionError("README.md's first ```sh block has no `make test` line")


def workflow():
    return yaml.safe_load(WORKFLOW.read_text())


def steps(wf):
    return [step for job in wf["jobs"].values() for step in job["steps"]]


def test_readme_test_command_is_make_test():
    assert readme_test_command() == "make test"


def test_smoke_workflow_runs_the_readme_test_command():
    wf = workflow()
    # YAML 1.1 (PyYAML) reads the key `on` as the boolean True.
    triggers = wf.get("on", wf.get(True))
    assert {"push", "pull_request"} <= set(triggers)
    runs = [step["run"].strip() for step in steps(wf) if "run" in step]
    assert readme_test_command() in runs
    assert "make lint" in runs


def test_smoke_workflow_sets_up_python_311():
    wf = workflow()
    for job in wf["jobs"].values():
        assert job["runs-on"] == "ubuntu-latest"
        assert job["timeout-minutes"] > 0
    uses = [step.get("uses", "") for step in steps(wf)]
    assert "actions/checkout@v4" in uses
    setup = [step for step in steps(wf) if step.get("uses", "").startswith("actions/setup-python@")]
    assert len(setup) == 1
    assert str(setup[0]["with"]["python-version"]) == "3.11"


def test_lint_extra_pins_exact_versions():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lint = project["optional-dependencies"]["lint"]
    names = set()
    for requirement in lint:
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==(\d+(\.\d+)*)", requirement)
        assert match, f"lint extra: {requirement!r} is not pinned as name==version"
        names.add(match.group(1).lower())
    assert {"ruff", "snakefmt"} <= names


def test_setup_installs_the_lint_extra():
    makefile = (ROOT / "Makefile").read_text()
    extras = re.search(r"pip install .*-e '\.\[([^\]]*)\]'", makefile)
    assert extras, "Makefile installs the package with no extras"
    assert "lint" in extras.group(1).split(",")


def test_docs_say_how_to_recover_from_a_killed_snakemake():
    """After a kill the rerun stops with a LockException until `snakemake --unlock`: the README says so where
    it shows how to run a figure, docs/cluster.md in its own section."""
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Reproduce one figure") : readme.index("## The paper grid on a cluster")]
    assert "LockException" in section and "snakemake --unlock" in section
    cluster = (ROOT / "docs" / "cluster.md").read_text()
    start = cluster.index("## After an interrupted run: `snakemake --unlock`")
    section = cluster[start : cluster.index("\n## ", start + 1)]
    assert "LockException" in section and "snakemake --unlock" in section
    assert "--configfile config/quick.yaml" in section
