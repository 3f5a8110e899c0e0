"""Paths in the workflow: every shell command quotes what it substitutes, the folders of the config
(results, figures, jax_cache) may contain spaces, and shell metacharacters in them are refused when
the config loads, before anything runs."""

import ast
import csv
import os
import re
import string
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import yaml

from test_workflow import copy_workflow  # the workflow in a folder of its own

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = "use letters, digits, spaces and - _ . / + , = @ %"


def snakemake(cwd, *args, timeout=600):
    """Snakemake with this interpreter. JAX_COMPILATION_CACHE_DIR is unset, so the jobs use the config's
    jax_cache (the Snakefile sets it only when it is not set)."""
    env = {key: value for key, value in os.environ.items() if key != "JAX_COMPILATION_CACHE_DIR"}
    env.setdefault("JAX_PLATFORMS", "cpu")
    command = [sys.executable, "-m", "snakemake", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _shell_commands():
    """{rule name: its shell command} of every rule in workflow/rules/ (snakefmt's layout: `shell:`
    followed by one string literal per line)."""
    commands = {}
    for path in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        for chunk in re.split(r"^rule ", path.read_text(), flags=re.M)[1:]:
            name = chunk.split(":", 1)[0]
            blocks = re.findall(r"^(\s+)shell:\n((?:\1\s+\".*\"\n)+)", chunk, flags=re.M)
            assert len(blocks) == 1, f"{path.name}: rule {name}: expected one shell: command"
            commands[name] = ast.literal_eval("(" + blocks[0][1] + ")")
    return commands


def test_every_shell_field_is_quoted():
    commands = _shell_commands()
    assert {"generate", "exact", "baseline", "jspgfn_train", "evaluate", "aggregate", "figure"} <= set(commands)
    for name, command in commands.items():
        fields = [(field, spec) for _, field, spec, _ in string.Formatter().parse(command) if field is not None]
        assert fields, name
        unquoted = [field for field, spec in fields if not spec.endswith("q")]
        assert not unquoted, f"rule {name}: fields without :q: {unquoted} in {command!r}"


def _write_config(workdir, name, **top):
    """A config derived from the smoke preset: its small-graph experiment only, one dataset of d=5, the exact
    sampler and B-GES."""
    config = yaml.safe_load((workdir / "config" / "smoke.yaml").read_text())
    config.update(top)
    config["methods"] = {"b-ges": {"params": {"num_bootstrap": 3}}}  # over the registry's entry
    experiment = config["experiments"]["small_graphs"]
    experiment.update(num_datasets=1, methods=["exact", "b-ges"])
    config["experiments"] = {"small_graphs": experiment}
    (workdir / "config" / name).write_text(yaml.safe_dump(config))
    return f"config/{name}"


@pytest.mark.parametrize(
    "key,template,shown",
    [
        ("results", "res dir$(touch {marker})", "$ ( )"),
        ("results", "res dir`touch {marker}`", "`"),
        ("figures", "fig;touch {marker}", ";"),
        ("jax_cache", "cache|touch /tmp/{marker}", "|"),
    ],
    ids=["dollar", "backtick", "semicolon", "pipe"],
)
def test_shell_metacharacters_in_a_folder_are_refused_before_anything_runs(tmp_path, key, template, shown):
    workdir = copy_workflow(tmp_path)
    marker = f"INJECTED-{uuid.uuid4().hex[:8]}"
    value = template.format(marker=marker)
    configfile = _write_config(workdir, "bad.yaml", **{key: value})
    before = set(os.listdir(workdir))
    result = snakemake(workdir, "--cores", "1", "--configfile", configfile)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith("Using workflow specific profile")]
    assert lines == [f"{configfile}: {key}: {value!r} has characters not allowed in a path: {shown}; {ALLOWED}"], (
        result.stderr
    )
    assert set(os.listdir(workdir)) - before <= {".snakemake"}  # no results, figures or cache folder
    assert not list(workdir.rglob("INJECTED*"))
    assert not list(Path("/tmp").glob(f"{marker}*")) and not (Path("/tmp") / "INJECTED").exists()


def test_a_folder_starting_with_a_dash_is_refused(tmp_path):
    workdir = copy_workflow(tmp_path)
    configfile = _write_config(workdir, "dash.yaml", results="-rf")
    result = snakemake(workdir, "-n", "--configfile", configfile)
    assert result.returncode == 1
    assert f"{configfile}: results: '-rf' starts with '-', which a command would read as an option" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_folders_with_spaces(tmp_path):
    """A smoke job into `res dir/` and `fig dir/` with its JAX cache in `jax cache/`: the jobs succeed,
    and write nothing else in the working directory."""
    workdir = copy_workflow(tmp_path)
    configfile = _write_config(workdir, "spaces.yaml", results="res dir", figures="fig dir", jax_cache="jax cache")
    targets = ["res dir/smoke/small_graphs/metrics.csv", "fig dir/table_d1.pdf", "fig dir/figure_2b.pdf"]
    before = set(os.listdir(workdir))
    # Targets before --configfile, which takes every argument after it.
    result = snakemake(workdir, "--cores", "2", *targets, "--configfile", configfile)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-6000:]

    assert set(os.listdir(workdir)) - before <= {"res dir", "fig dir", "jax cache", ".snakemake"}
    assert not any(name in {"res", "dir", "fig"} for name in os.listdir(workdir))
    out = workdir / "res dir" / "smoke" / "small_graphs"
    for path in ("data/0/train.csv", "exact/0.npz", "samples/exact/0.npz", "samples/b-ges/0.npz"):
        assert (out / path).is_file(), path
    for path in ("logs/generate/0.log", "logs/exact/0.log", "logs/samples/b-ges/0.log", "logs/aggregate.log"):
        assert (out / path).is_file(), path
    with open(out / "metrics.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {(row["label"], row["dataset_seed"]) for row in rows} == {("exact", "0"), ("b-ges", "0")}
    for name in ("table_d1.pdf", "table_d1.csv", "figure_2b.pdf", "figure_2b.png"):
        assert (workdir / "fig dir" / name).stat().st_size > 0, name
    assert list((workdir / "jax cache").iterdir())  # the jobs' compilation cache

    again = snakemake(workdir, "-n", *targets, "--configfile", configfile)
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr
