"""The method registry (jspgfn.registry): every method id defined once, presets overlaying it."""

import re
import shutil
from pathlib import Path

import pytest
import yaml

from jspgfn.registry import (
    PRESETS,
    RegistryError,
    display_order,
    load_registry,
    method_entry,
    paper_table_d1,
    resolve_methods,
)

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = load_registry(ROOT)


def test_presets_list_experiments_only():
    """The identity and budgets of a method are in the registry; a shipped preset repeats none of them."""
    for name in ("config", "quick", "smoke"):
        preset = yaml.safe_load((ROOT / "config" / f"{name}.yaml").read_text())
        assert "methods" not in preset, name
        used = {mid for exp in preset["experiments"].values() for mid in exp["methods"]}
        assert used <= set(REGISTRY), used - set(REGISTRY)


def test_a_preset_overlays_an_entry_params_key_by_key():
    smoke = method_entry(REGISTRY, "b-pc", "smoke")
    assert smoke == {
        "kind": "baseline",
        "likelihood": "lingauss",
        "params": {"alpha": 0.01, "num_bootstrap": 10},
        "runtime": 10,
    }
    config = {
        "preset": "smoke",
        "methods": {"b-pc": {"params": {"num_bootstrap": 3}, "mem_mb": 500}, "own": {"name": "vbg"}},
    }
    methods = resolve_methods(config, REGISTRY)
    assert methods["b-pc"] == {**smoke, "params": {"alpha": 0.01, "num_bootstrap": 3}, "mem_mb": 500}
    assert methods["own"] == {"name": "vbg"}  # an id of the config's own: its entry alone
    assert set(methods) == set(REGISTRY) | {"own"}
    assert config["methods"]["b-pc"] == {"params": {"num_bootstrap": 3}, "mem_mb": 500}  # not modified


def test_budgets_per_preset_and_custom_gets_quick():
    assert method_entry(REGISTRY, "b-pc", "paper")["params"]["num_bootstrap"] == 1000
    assert method_entry(REGISTRY, "b-pc", "quick")["params"]["num_bootstrap"] == 200
    assert method_entry(REGISTRY, "b-pc", "custom") == method_entry(REGISTRY, "b-pc", "quick")
    assert method_entry(REGISTRY, "jspgfn-mlp", "smoke")["params"] == {"theta_elbo": 1.0}
    assert method_entry(REGISTRY, "jspgfn-mlp", "paper")["params"] == {"theta_elbo": 1.0, "learning_rate": 1.0e-3}
    for mid, entry in REGISTRY.entries.items():
        assert set(entry.get("budgets", {})) <= set(PRESETS), mid


def test_order_and_the_papers_numbers_come_from_the_registry():
    order = display_order(REGISTRY)
    assert order[:4] == ["MH-MC3", "Gibbs-MC3", "B-GES*", "B-PC*"] and order[-1] == "Exact (reference)"
    assert order.index("JSP-GFN (diag)") < order.index("JSP-GFN (full)") < order.index("JSP-GFN")
    rows = paper_table_d1(REGISTRY)
    assert [row["method"] for row in rows] == [name for name in order if name in {row["method"] for row in rows}]
    assert {"B-PC*", "JSP-GFN (diag)", "VBG"} <= {row["method"] for row in rows}
    columns = {f"{f}_{m}{s}" for f in ("edge", "path", "markov") for m in ("rmse", "pearson") for s in ("", "_ci")}
    assert all(set(row) == {"method"} | columns for row in rows)


def test_the_core_imports_no_baseline_package_by_name():
    """No package cycle: jspgfn-baselines needs jspgfn; the core finds it through an entry point."""
    pattern = re.compile(r"^\s*(from|import)\s+jspgfn_baselines\b", re.M)
    offenders = [str(path) for path in (ROOT / "src").rglob("*.py") if pattern.search(path.read_text())]
    assert not offenders


def _copy(tmp_path):
    root = tmp_path / "checkout"
    shutil.copytree(ROOT / "baselines", root / "baselines", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "config").mkdir()
    shutil.copy2(ROOT / "config" / "methods.yaml", root / "config" / "methods.yaml")
    return root


@pytest.mark.parametrize(
    "edit,message",
    [
        (
            lambda root: (root / "config" / "methods.yaml").write_text("b-pc: {kind: baseline}\n"),
            "config/methods.yaml: b-pc: already defined by ",
        ),
        (
            lambda root: (root / "config" / "methods.yaml").write_text("x: {budgets: {fast: {}}}\n"),
            "config/methods.yaml: x.budgets: 'fast' is not one of ['paper', 'quick', 'smoke']",
        ),
        (
            lambda root: (root / "config" / "methods.yaml").write_text("x: {order: first}\n"),
            "config/methods.yaml: x.order: 'first' is not of type 'integer'",
        ),
        (
            lambda root: (root / "baselines" / "b-pc" / "method.yaml").write_text(
                (root / "baselines" / "b-pc" / "method.yaml").read_text() + "  name: b-ges\n"
            ),
            "baselines/b-pc/method.yaml: benchmark.name: the folder says it",
        ),
    ],
)
def test_a_malformed_registry_is_one_line_naming_the_file(tmp_path, edit, message):
    root = _copy(tmp_path)
    edit(root)
    with pytest.raises(RegistryError) as info:
        load_registry(root)
    assert message in str(info.value) and "\n" not in str(info.value)
    assert str(info.value).startswith(str(root))
