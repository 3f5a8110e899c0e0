"""The SLURM profile, without a SLURM cluster (the cluster itself is tested by .ci/slurm/run.sh).

- profiles/slurm parses, selects the slurm executor and the squeue status command (works without
  accounting), and profiles/slurm/gpu asks for one GPU for every job whose work is JAX on arrays;
- every rule declares threads, mem_mb and runtime, which the plugin maps to sbatch options;
- .ci/slurm/compare_metrics.py, the CI check that a SLURM run and a local run agree.
"""

import csv
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
RULES = sorted((ROOT / "workflow" / "rules").glob("*.smk"))


def _parse(*profiles):
    from snakemake.cli import parse_args

    argv = []
    for profile in profiles:
        argv += ["--profile", str(ROOT / profile)]
    _, args = parse_args(argv + ["--workflow-profile", "none", "-n"])
    return args


def test_slurm_profile_settings():
    pytest.importorskip("snakemake_executor_plugin_slurm")
    args = _parse("profiles/slurm")
    assert args.executor == "slurm"
    assert args.rerun_incomplete and args.latency_wait >= 5 and args.jobs >= 1
    assert args.slurm_status_command == "squeue"
    profile = yaml.safe_load((ROOT / "profiles/slurm/config.yaml").read_text())
    assert {"mem_mb", "runtime"} <= set(profile["default-resources"])
    # the profile must not name an account (clusters without accounting reject the check)
    assert "slurm_account" not in (ROOT / "profiles/slurm/config.yaml").read_text().split("#")[0]


def test_gpu_profile_targets_an_existing_training_rule():
    pytest.importorskip("snakemake_executor_plugin_slurm")
    args = _parse("profiles/slurm", "profiles/slurm/gpu")
    assert args.executor == "slurm"
    rules = set(args.set_resources)
    assert rules, "profiles/slurm/gpu sets no resources"
    defined = {m for f in RULES for m in re.findall(r"^rule (\w+):", f.read_text(), re.M)}
    if not (ROOT / "workflow/rules/jspgfn.smk").exists():
        pytest.skip("workflow/rules/jspgfn.smk is not there yet")
    assert rules <= defined, f"profiles/slurm/gpu names rules that do not exist: {rules - defined}"
    for rule in rules:
        assert "gpu" in args.set_resources[rule]


# The baselines whose work is JAX on arrays (a GPU helps): every registry method that runs one of them.
GPU_BASELINES = {"dibs", "dibs-mixture", "bcd-nets", "vbg"}


def test_gpu_profile_gives_a_gpu_to_every_jax_job_and_to_no_other():
    """JSP-GFN's training and sampling, and every method of the registry that runs DiBS, DiBS+, BCD Nets or
    VBG ask for one GPU; the other baselines (MC3, B-PC*, B-GES*, exact) for none (issue 26)."""
    from types import SimpleNamespace

    from jspgfn.registry import load_registry

    resources = yaml.safe_load((ROOT / "profiles/slurm/gpu/config.yaml").read_text())["set-resources"]
    assert resources["jspgfn_train"]["gpu"] == 1 and resources["jspgfn_sample"]["gpu"] == 1
    expression = resources["baseline"]["gpu"]
    registry = load_registry(ROOT)
    for mid, entry in registry.entries.items():
        if entry.get("kind") == "jspgfn":
            continue
        wanted = 1 if (entry.get("name") or mid) in GPU_BASELINES else 0
        assert eval(expression, {"wildcards": SimpleNamespace(method=mid)}) == wanted, mid


@pytest.mark.parametrize("path", RULES, ids=lambda p: p.name)
def test_every_rule_declares_threads_mem_and_runtime(path):
    """threads -> --cpus-per-task, mem_mb -> --mem, runtime -> -t (minutes)."""
    text = path.read_text()
    blocks = re.split(r"^(?=(?:rule|checkpoint) \w+:)", text, flags=re.M)
    for block in blocks:
        match = re.match(r"(?:rule|checkpoint) (\w+):", block)
        if not match or not re.search(r"^\s+(shell|run|script|wrapper|notebook):", block, re.M):
            continue  # not a rule, or a target-only rule (no job)
        missing = [
            key
            for key, pattern in (
                ("threads", r"^\s+threads:"),
                ("mem_mb", r"^\s+mem_mb\s*="),
                ("runtime", r"^\s+runtime\s*="),
            )
            if not re.search(pattern, block, re.M)
        ]
        assert not missing, f"{path.name}: rule {match.group(1)} declares no {', '.join(missing)}"


def _table(root, rows):
    path = root / "smoke" / "small_graphs" / "metrics.csv"
    path.parent.mkdir(parents=True)
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["method", "seed", "dataset", "edge_rmse", "wall_seconds"])
        for method, seed, rmse, wall in rows:
            writer.writerow([method, seed, f"{root}/smoke/small_graphs/data/{seed}", rmse, wall])
    return root


def _compare(a, b):
    return subprocess.run(
        [sys.executable, str(ROOT / ".ci/slurm/compare_metrics.py"), str(a), str(b)], capture_output=True, text=True
    )


def test_compare_metrics(tmp_path):
    a = _table(tmp_path / "a", [("exact", 0, "0.1", "1.5"), ("exact", 1, "0.2", "2.5")])
    # same numbers, other wall times, other root, rows in another order: equal
    b = _table(tmp_path / "b", [("exact", 1, "0.2", "9.0"), ("exact", 0, "0.1", "7.0")])
    result = _compare(a, b)
    assert result.returncode == 0, result.stdout + result.stderr
    # one number differs in its last digit: not equal
    c = _table(tmp_path / "c", [("exact", 0, "0.1", "1.5"), ("exact", 1, "0.20000000000000001", "2.5")])
    result = _compare(a, c)
    assert result.returncode == 1 and "edge_rmse" in result.stderr
    # a missing row, and a missing table
    d = _table(tmp_path / "d", [("exact", 0, "0.1", "1.5")])
    assert _compare(a, d).returncode == 1
    assert _compare(a, tmp_path / "nothing").returncode == 1
    assert _compare(tmp_path / "nothing", a).returncode == 2
