"""The baselines/ folder: one self-describing folder per method, found from the folders, installable
apart from the lean jspgfn core, with one-line errors for what is missing or misspelt."""

import importlib.util
import inspect
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

import jspgfn_baselines
from jspgfn.errors import JspgfnError
from jspgfn.registry import load_registry
from jspgfn_baselines import spec as speclib

ROOT = Path(__file__).resolve().parents[1]
BASELINES = ROOT / "baselines"
# Every folder holding a method.yaml, as a person would list them (no list kept by hand).
METHODS = sorted(path.parent.name for path in BASELINES.glob("*/method.yaml"))


def test_methods_are_found_from_the_folders():
    assert len(METHODS) >= 9 and "b-pc" in METHODS and "shared" not in METHODS
    assert list(speclib.method_folders(BASELINES)) == METHODS
    assert jspgfn_baselines.baseline_names() == tuple(METHODS)
    # The core's method registry (read as files, without this package) has each folder as a method.
    registry = load_registry(ROOT)
    assert list(registry.specs) == METHODS
    assert all(registry.entries[name]["kind"] == "baseline" for name in METHODS)


@pytest.mark.parametrize("name", METHODS)
def test_each_folder_describes_its_method(name):
    spec = jspgfn_baselines.get_spec(name)
    folder = BASELINES / name
    # fit(dataset, model, seed, **params) gets every parameter of method.yaml with its default filled in
    # (the examples test below runs each through the code, so a parameter the code lacks fails there).
    parameters = list(inspect.signature(jspgfn_baselines.load_method(name).fit).parameters)
    assert parameters[:3] == ["dataset", "model", "seed"]
    # Its conda environment (its own, or the default one), with the post-deploy script Snakemake runs
    # after creating it.
    environment = Path(spec["environment_file"])
    if "environment" not in spec:
        assert environment == (BASELINES / "shared" / "environment.yaml").resolve()
    assert environment.is_relative_to(BASELINES.resolve()) and environment.is_file()
    assert yaml.safe_load(environment.read_text())["dependencies"][0] == "python=3.11"
    assert environment.with_suffix(".post-deploy.sh").is_file()
    # What it needs beyond the core: pinned in the `all` extra of jspgfn-baselines or in a
    # requirements-nodeps.txt (what `make setup` and the environments install), and how to install it.
    if spec.get("requires"):
        extras = tomllib.loads((BASELINES / "pyproject.toml").read_text())["project"]["optional-dependencies"]
        lines = extras["all"] + sum(
            (p.read_text().splitlines() for p in BASELINES.glob("*/requirements-nodeps.txt")), []
        )
        pinned = {line.split("==")[0].strip() for line in lines if line.strip() and not line.startswith("#")}
        assert set(spec["requires"].values()) <= pinned, "pin it in the `all` extra of baselines/pyproject.toml"
        assert spec["install"]
    assert folder == Path(spec["folder"])


def test_adding_a_folder_adds_a_method(tmp_path):
    shutil.copytree(BASELINES / "b-ges", tmp_path / "my-method")
    assert list(speclib.method_folders(tmp_path)) == ["my-method"]
    assert speclib.load_spec(tmp_path / "my-method")["id"] == "my-method"


@pytest.mark.parametrize(
    "edit,message",
    [
        (lambda s: s.pop("display_name"), "'display_name' is a required property"),
        (lambda s: s["capabilities"].update(joint="yes"), "capabilities.joint: 'yes' is not of type 'boolean', 'null'"),
        (
            lambda s: s["parameters"]["num_bootstrap"].update(default=0),
            "parameters.num_bootstrap: the default 0 does not fit",
        ),
        (lambda s: s["examples"].append({"num_bootstrp": 1}), "examples.1.num_bootstrp: unknown parameter"),
    ],
)
def test_malformed_method_yaml_is_one_line_naming_the_file(tmp_path, edit, message):
    shutil.copytree(BASELINES / "b-ges", tmp_path / "bad")
    spec = yaml.safe_load((tmp_path / "bad" / "method.yaml").read_text())
    edit(spec)
    (tmp_path / "bad" / "method.yaml").write_text(yaml.safe_dump(spec))
    with pytest.raises(speclib.SpecError) as info:
        speclib.load_spec(tmp_path / "bad")
    assert str(info.value).startswith(f"{tmp_path / 'bad' / 'method.yaml'}: ")
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(
    "params,message",
    [
        ({"alpah": 0.01}, "parameter alpah: unknown parameter of baseline 'b-pc' (valid: alpha, hidden,"),
        ({"num_bootstrap": "ten"}, "parameter num_bootstrap: 'ten' is not of type 'integer'"),
        ({"num_bootstrap": True}, "parameter num_bootstrap: True is not of type 'integer'"),
        ({"alpha": 1.5}, "parameter alpha: 1.5 is greater than or equal to the maximum of 1"),
        ({"obs_var": 0}, "parameter obs_var: 0 is less than or equal to the minimum of 0"),
    ],
)
def test_bad_parameters_are_refused_before_fitting(params, message):
    with pytest.raises(JspgfnError) as info:
        jspgfn_baselines.fit_baseline("b-pc", None, "lingauss", 0, **params)  # no data needed to refuse
    assert message in str(info.value)


def test_missing_dependency_names_the_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "causallearn" else real(name, *a))
    with pytest.raises(JspgfnError, match=r"baseline 'b-pc' needs causal-learn .* pip install -e 'baselines\[b-pc\]'"):
        jspgfn_baselines.load_method("b-pc")


def _python(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def test_core_imports_no_baseline_dependency():
    """The lean core: every jspgfn module imports without causal-learn, statsmodels, dibs-lib or the
    baselines package (they are not in its dependencies either)."""
    modules = [
        "jspgfn.cli",
        "jspgfn.gflownet.train",
        "jspgfn.gflownet.method",
        "jspgfn.gflownet.log_pt",
        "jspgfn.evaluate",
        "jspgfn.exact",
        "jspgfn.conjugate",
        "jspgfn.aggregate",
        "jspgfn.capabilities",
        "jspgfn.generate",
    ]
    result = _python(
        "import sys\n"
        + "".join(f"import {m}\n" for m in modules)
        + "print(sorted(m for m in ('causallearn', 'statsmodels', 'dibs', 'jspgfn_baselines') "
        "if m in sys.modules))"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
    core = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = " ".join(core["dependencies"] + sum(core["optional-dependencies"].values(), []))
    for package in ("causal-learn", "statsmodels", "dibs-lib"):
        assert package not in requirements


def test_baseline_command_without_the_baselines_package_says_what_to_install():
    result = _python(
        "import sys; sys.modules['jspgfn_baselines'] = None\n"
        "from jspgfn.cli import main; sys.exit(main(['baseline', 'b-pc', 'x.csv', '--out', 'y.npz']))"
    )
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "jspgfn: error: baseline 'b-pc' needs the jspgfn-baselines package, which is "
        "not installed: pip install -e baselines (from a jspgfn checkout; "
        "`make setup` installs it)"
    )
