"""Adding a baseline is its folder plus one line in each experiment that runs it (baselines/README.md).

In a temporary copy of the repository, a copy of an existing baseline folder under a new id (with its own
display name) and that id in one experiment of the smoke preset: `jspgfn baseline --list` lists it,
`snakemake -n` plans its jobs, and the layout tests pass, with no other file changed. The copy's own code
is the one that runs: its src/ and baselines/ (as the package jspgfn_baselines) come first on PYTHONPATH,
as an editable install of the copy would put them.
"""

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SOURCE, NEW = "b-ges", "b-ges-copy"


def _repository_files(root):
    """The repository's files as git sees them: tracked and not ignored, present in the work tree."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the repository's files are unknown")
    return sorted({name for name in listed.decode().split("\0") if name and (root / name).is_file()})


def _manifest(root):
    """{path: sha256} of every file under `root`, caches left out."""
    skip = {"__pycache__", ".pytest_cache", ".snakemake"}
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not skip & set(path.relative_to(root).parts)
    }


@pytest.fixture(scope="module")
def repository(tmp_path_factory):
    """(copy of the repository with the new baseline, its manifest before the change, environment)."""
    root = tmp_path_factory.mktemp("repository")
    for name in _repository_files(ROOT):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, root / name)
    before = _manifest(root)

    # 1. The folder: a copy of an existing one, under the new id, with a name of its own (an experiment
    #    may not show two methods under one name).
    shutil.copytree(root / "baselines" / SOURCE, root / "baselines" / NEW)
    spec = root / "baselines" / NEW / "method.yaml"
    text = spec.read_text()
    assert text.count("display_name: B-GES*\n") == 1
    spec.write_text(text.replace("display_name: B-GES*\n", "display_name: B-GES* (copy)\n"))
    # 2. One line: the id in one experiment of the smoke preset (the small-graph experiment).
    preset = root / "config" / "smoke.yaml"
    lines = preset.read_text().splitlines(keepends=True)
    start = lines.index("  small_graphs:\n")
    line = next(i for i in range(start, len(lines)) if lines[i].startswith("    methods: ["))
    lines[line] = lines[line].replace("]\n", f", {NEW}]\n")
    preset.write_text("".join(lines))

    shim = tmp_path_factory.mktemp("shim")
    (shim / "jspgfn_baselines").symlink_to(root / "baselines", target_is_directory=True)
    env = dict(os.environ, JSPGFN_SOURCE=str(root), JAX_PLATFORMS="cpu")
    env["PYTHONPATH"] = os.pathsep.join([str(root / "src"), str(shim)])
    return root, before, env


def _run(command, root, env):
    return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=900)


def test_nothing_but_the_folder_and_one_line_changed(repository):
    root, before, _ = repository
    after = _manifest(root)
    changed = sorted(path for path in after.keys() & before.keys() if after[path] != before[path])
    added = sorted(after.keys() - before.keys())
    assert changed == ["config/smoke.yaml"] and not before.keys() - after.keys()
    assert added and all(path.startswith(f"baselines/{NEW}/") for path in added)
    diff = subprocess.run(
        ["diff", str(ROOT / "config" / "smoke.yaml"), str(root / "config" / "smoke.yaml")],
        capture_output=True,
        text=True,
    ).stdout
    assert sum(line.startswith(">") for line in diff.splitlines()) == 1, diff


def test_the_copy_runs_its_own_code(repository):
    root, _, env = repository
    code = "import jspgfn.registry, jspgfn_baselines; print(jspgfn.registry.__file__, jspgfn_baselines.__file__)"
    result = _run([sys.executable, "-c", code], root, env)
    assert result.returncode == 0, result.stderr
    assert all(Path(path).resolve().is_relative_to(root.resolve()) for path in result.stdout.split())


def test_the_baseline_command_lists_it(repository):
    root, _, env = repository
    result = _run(
        [sys.executable, "-c", "from jspgfn.cli import main; raise SystemExit(main())", "baseline", "--list"], root, env
    )
    assert result.returncode == 0, result.stderr
    listed = [line.split()[0] for line in result.stdout.splitlines() if line[:1].strip()]
    assert NEW in listed and SOURCE in listed
    assert f"{NEW:14s}B-GES* (copy): lingauss;" in result.stdout


def test_the_workflow_plans_its_jobs(repository):
    root, _, env = repository
    result = _run([sys.executable, "-m", "snakemake", "-n", "-p", "--configfile", "config/smoke.yaml"], root, env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    text = result.stdout + result.stderr
    smoke = yaml.safe_load((root / "config" / "smoke.yaml").read_text())["experiments"]["small_graphs"]
    for dataset in range(smoke["first_seed"], smoke["first_seed"] + smoke["num_datasets"]):
        assert f"results/smoke/small_graphs/samples/{NEW}/{dataset}.npz" in text
        assert f"results/smoke/small_graphs/metrics/{NEW}/{dataset}.json" in text
    assert f"results/smoke/capabilities/{NEW}.json" in text  # Table A.1's probe
    # With the smoke budget of its method.yaml (the copy's: B-GES*'s).
    assert (
        f"jspgfn baseline {NEW} results/smoke/small_graphs/data/0 --model lingauss --seed 0 --param=num_bootstrap=5"
        in text
    )
    assert not (root / "results").exists()


def test_the_layout_tests_pass(repository):
    root, _, env = repository
    command = [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "tests/test_baselines_layout.py"]
    result = _run(command, root, env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"test_each_folder_describes_its_method[{NEW}] PASSED" in result.stdout
