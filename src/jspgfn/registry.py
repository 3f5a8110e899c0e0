"""The method registry: every method id that a config may run, each defined once.

Two sources, read as files (nothing of the jspgfn-baselines package is imported):
  baselines/<id>/method.yaml   a baseline folder is the method <id>: its `benchmark` section
  config/methods.yaml          JSP-GFN's configurations and the variants of a baseline (another
                               likelihood, prior or budget of the folder named by `name`)
An entry holds the keys of a config's `methods.<id>` (workflow/schemas/config.schema.yaml) that hold
in every preset (kind, name, likelihood, family, recipe, display_name, params, num_samples, threads, mem_mb,
runtime), and the registry's own keys (ENTRY_KEYS):
  budgets          {preset: what differs in that preset}, over the keys above (`params` key by key)
  order            its place in tables and figures (the paper's order); names without one come last
  cost             what its run time grows with, an expression of its parameters (compute plan)
  paper_table_d1   the paper's Table D.1 numbers ({metric: mean, metric_ci: half-width})
A baseline folder's entry is kind baseline with the first of its `likelihoods`.

A config (a preset file, or one's own) only overlays the registry: `resolve_methods` gives each id
the entry of its preset, then the config's own `methods.<id>` over it (or, for an id the registry
lacks, that entry alone). The workflow validates the result against the config schema.
"""

import copy
import functools
import os
from pathlib import Path

import jsonschema
import yaml

from jspgfn.baseline_spec import SpecError, load_specs
from jspgfn.errors import JspgfnError

METHODS_FILE = Path("config", "methods.yaml")
BASELINES = Path("baselines")
PRESETS = ("paper", "quick", "smoke")
# The budgets a preset without its own use: a custom config runs with the quick ones (as `jspgfn
# train --preset` does, workflow/schemas/config.schema.yaml).
BUDGET_PRESET = {"custom": "quick"}
ENTRY_KEYS = {
    "budgets": {
        "type": "object",
        "propertyNames": {"enum": list(PRESETS)},
        "additionalProperties": {"type": "object"},
    },
    "order": {"type": "integer"},
    "cost": {"type": "string", "minLength": 1},
    "paper_table_d1": {"type": "object", "additionalProperties": {"type": "number"}},
}
ENTRY_SCHEMA = {"type": "object", "properties": ENTRY_KEYS}
# Keys a baseline folder's entry may not set: its folder says them.
FOLDER_KEYS = ("kind", "name")


class RegistryError(JspgfnError):
    """A registry file is malformed: `<file>: <key.path>: <problem>` on one line."""


def find_root(root=None):
    """The checkout whose registry is used: `root`, else $JSPGFN_SOURCE (the Snakefile sets it for its
    jobs), else the checkout this module belongs to (an editable install); None when none has one."""
    candidates = [root] if root is not None else [os.environ.get("JSPGFN_SOURCE"), Path(__file__).parents[2]]
    for candidate in candidates:
        if candidate and (Path(candidate) / METHODS_FILE).is_file():
            return Path(candidate).resolve()
    if root is not None:
        raise RegistryError(f"{Path(root) / METHODS_FILE}: not found (not a jspgfn checkout)")
    return None


class Registry:
    """entries {id: entry}, sources {id: the file that defines it}, specs {baseline id: its method.yaml}."""

    def __init__(self, root, entries, sources, specs):
        self.root, self.entries, self.sources, self.specs = root, entries, sources, specs

    def __contains__(self, mid):
        return mid in self.entries

    def __iter__(self):
        return iter(self.entries)

    def baseline_spec(self, mid):
        """The method.yaml spec of the baseline folder that method `mid` runs (None for JSP-GFN or an
        unknown folder)."""
        entry = self.entries.get(mid, {})
        return None if entry.get("kind") == "jspgfn" else self.specs.get(entry.get("name") or mid)

    def display_name(self, mid):
        """How tables name method `mid` (as the workflow fills it in)."""
        entry = self.entries[mid]
        if entry.get("display_name"):
            return entry["display_name"]
        if entry.get("kind") == "jspgfn":
            return f"JSP-GFN ({entry.get('family') or 'diag'})"
        spec = self.baseline_spec(mid)
        return spec["display_name"] if spec else mid


def _check_entry(entry, path, where):
    if not isinstance(entry, dict):
        raise RegistryError(f"{path}: {where}: expected a mapping of the method's settings")
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(ENTRY_SCHEMA).iter_errors(entry))
    if error is not None:
        key = ".".join([where, *map(str, error.absolute_path)])
        raise RegistryError(f"{path}: {key}: {' '.join(error.message.split())}")


def _read_yaml(path):
    try:
        return yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise RegistryError(f"{path}: cannot be read ({' '.join(str(exc).split())})") from None


@functools.cache
def _load(root):
    try:
        specs = load_specs(root / BASELINES)
    except SpecError as exc:
        raise RegistryError(str(exc)) from None
    entries, sources = {}, {}
    for mid, spec in specs.items():
        path = Path(spec["folder"], "method.yaml")
        section = spec.get("benchmark", {})
        _check_entry(section, path, "benchmark")
        for key in FOLDER_KEYS:
            if key in section:
                raise RegistryError(f"{path}: benchmark.{key}: the folder says it (kind baseline, name {mid})")
        entries[mid] = {"kind": "baseline", "likelihood": spec["likelihoods"][0], **copy.deepcopy(section)}
        sources[mid] = path
    path = root / METHODS_FILE
    methods = _read_yaml(path) or {}
    if not isinstance(methods, dict):
        raise RegistryError(f"{path}: expected a mapping {{method id: entry}}")
    for mid, entry in methods.items():
        _check_entry(entry, path, mid)
        if mid in entries:
            raise RegistryError(f"{path}: {mid}: already defined by {sources[mid]}")
        entries[mid], sources[mid] = entry, path
    return Registry(root, entries, sources, specs)


def load_registry(root=None):
    """The Registry of a checkout (find_root); RegistryError, one line naming the file, if malformed.
    Read once per process and root."""
    found = find_root(root)
    if found is None:
        raise RegistryError(
            f"no method registry ({METHODS_FILE}) found: set JSPGFN_SOURCE to the jspgfn checkout that holds it"
        )
    return _load(found)


def merge(base, overlay):
    """`overlay` over `base`: `params` merged key by key, every other key replaced (new dicts)."""
    merged = copy.deepcopy(base)
    for key, value in overlay.items():
        if key == "params" and isinstance(value, dict) and isinstance(merged.get("params"), dict):
            merged["params"] = {**merged["params"], **copy.deepcopy(value)}
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def method_entry(registry, mid, preset):
    """The config entry of registry method `mid` in `preset`: its settings with that preset's budget."""
    entry = registry.entries[mid]
    budgets = entry.get("budgets", {})
    budget = budgets.get(preset, budgets.get(BUDGET_PRESET.get(preset), {}))
    return merge({key: value for key, value in entry.items() if key not in ENTRY_KEYS}, budget)


def resolve_methods(config, registry):
    """{method id: config entry} of every id of the registry and of config["methods"]: the registry's
    entry for config["preset"] (default paper) with the config's own entry over it. An entry of the
    config that is not a mapping is kept as it is (the schema then says what is wrong with it)."""
    preset = config.get("preset", "paper")
    own = config.get("methods") or {}
    methods = {mid: method_entry(registry, mid, preset) for mid in registry}
    for mid, entry in own.items():
        methods[mid] = merge(methods[mid], entry) if mid in methods and isinstance(entry, dict) else entry
    return methods


def display_order(registry):
    """Display names in the order of the entries' `order` (the first entry of a name places it)."""
    placed = {}
    for mid, entry in registry.entries.items():
        if "order" in entry:
            name = registry.display_name(mid)
            placed[name] = min(entry["order"], placed.get(name, entry["order"]))
    return sorted(placed, key=lambda name: (placed[name], name))


def paper_table_d1(registry):
    """Rows {method: display name, metric: mean, metric_ci: half-width, ...} of the entries that carry
    the paper's Table D.1 numbers, in display order."""
    rows = {
        registry.display_name(mid): entry["paper_table_d1"]
        for mid, entry in registry.entries.items()
        if "paper_table_d1" in entry
    }
    order = display_order(registry)
    ranked = sorted(rows, key=lambda name: (order.index(name) if name in order else len(order), name))
    return [{"method": name, **rows[name]} for name in ranked]


def files(registry):
    """The files the registry was read from (inputs of a rule that uses it)."""
    return sorted({str(path) for path in registry.sources.values()} | {str(registry.root / METHODS_FILE)})
