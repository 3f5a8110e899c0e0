"""Compute plan of a preset from the workflow's own job benchmarks (Snakemake `benchmark:` files).

Every heavy rule (generate aside) writes results/{preset}/{experiment}/benchmarks/{rule}/[{method}/]{dataset}.tsv
with the job's wall seconds (`s`) and peak resident memory (`max_rss`, MB), among other columns.
This prints, per experiment, rule and method: jobs measured, mean and max wall time, peak memory, and
the experiment's total wall time (sum over jobs: the time on one core-equivalent job slot) for the
measured datasets and extrapolated to all of the preset's datasets. With --target CONFIG it also
extrapolates to another preset (e.g. the paper grid) by the ratio of each method's budget (the `cost` of
its entry in the method registry, jspgfn.registry: the quantity its run time grows with) and of the
dataset counts; such figures are labelled "extrapolated", and only mean something when both presets
generate the same kind of data (same d, N).

  .venv/bin/python benchmarks/compute_plan.py config/quick.yaml [--target config/config.yaml]
"""

import argparse
import ast
import math
import operator
from pathlib import Path

import pandas as pd
import yaml

from jspgfn.baseline_spec import defaults
from jspgfn.registry import load_registry, resolve_methods

ROOT = Path(__file__).resolve().parents[1]


def _jspgfn_budget(method, preset):
    from jspgfn.gflownet.presets import get_preset

    cfg = get_preset(method.get("preset") or preset, **method.get("params", {}))
    return cfg.num_iterations * cfg.batch_size * cfg.num_theta_samples


_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def evaluate_cost(expression, values):
    """The value of a registry entry's `cost`: + - * / of numbers, parameter names and ceil(...)."""

    def value(node):
        if isinstance(node, ast.Expression):
            return value(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return node.value
        if isinstance(node, ast.Name):
            return values[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "ceil":
            return math.ceil(value(node.args[0]))
        raise ValueError(f"cost {expression!r}: {ast.dump(node)} is not allowed")

    return value(ast.parse(expression, mode="eval"))


def methods_of(config, registry):
    """{method id: entry} of a preset: the method registry's entries with the preset's own over them."""
    return resolve_methods(config, registry)


def budget(config, method_id, registry=None):
    """Work units of a method in a config: its registry entry's `cost` (what its run time grows with; only
    ratios between presets are used) of its parameters, defaults filled in; None when unknown."""
    registry = registry or load_registry(ROOT)
    method = methods_of(config, registry)[method_id]
    if method.get("kind", "baseline") == "jspgfn":
        return _jspgfn_budget(method, config["preset"])
    name = method.get("name") or method_id
    cost = registry.entries.get(method_id, {}).get("cost") or registry.entries.get(name, {}).get("cost")
    spec = registry.specs.get(name)
    if cost is None or spec is None:
        return None
    return float(evaluate_cost(cost, {**defaults(spec), **method.get("params", {})}))


def read_benchmarks(results):
    """One row per benchmark file: experiment, rule, method, dataset, s (wall), max_rss (MB)."""
    rows = []
    for path in sorted(Path(results).glob("*/benchmarks/**/*.tsv")):
        parts = path.relative_to(results).parts  # experiment, "benchmarks", rule, [method], dataset.tsv
        table = pd.read_csv(path, sep="\t")
        rows.append(
            {
                "experiment": parts[0],
                "rule": parts[2],
                "method": parts[3] if len(parts) == 5 else "",
                "dataset": path.stem,
                "s": float(table["s"].iloc[-1]),
                "max_rss": pd.to_numeric(table["max_rss"], errors="coerce").iloc[-1],
            }
        )
    return pd.DataFrame(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", help="the preset that ran, e.g. config/quick.yaml")
    parser.add_argument("--target", help="another preset to extrapolate to, e.g. config/config.yaml")
    args = parser.parse_args()
    config = yaml.safe_load(Path(args.config).read_text())
    target = yaml.safe_load(Path(args.target).read_text()) if args.target else None
    results = Path(config.get("results", "results")) / config["preset"]
    table = read_benchmarks(results)
    if table.empty:
        raise SystemExit(f"no benchmark files under {results}/*/benchmarks/: run the workflow first")
    for eid, part in table.groupby("experiment"):
        exp = config["experiments"].get(eid, {})
        num = exp.get("num_datasets", 1)
        print(f"\n## {eid} ({config['preset']} preset, {num} datasets)")
        print("| rule | method | jobs | mean s | max s | peak MB | extrapolated to all datasets, s |", end="")
        print(" target preset, s (extrapolated) |" if target else "")
        print("|---|---|---|---|---|---|---|" + ("---|" if target else ""))
        if target and target["experiments"].get(eid, {}).get("data") != exp.get("data"):
            print(f"(warning: {eid} has other data in the target preset: budget ratios alone do not carry over)")
        total, total_target = 0.0, 0.0
        for (rule, method), jobs in part.groupby(["rule", "method"]):
            mean = jobs["s"].mean()
            all_datasets = mean * num
            total += all_datasets
            line = (
                f"| {rule} | {method or '-'} | {len(jobs)} | {mean:.0f} | {jobs['s'].max():.0f} | "
                f"{jobs['max_rss'].max():.0f} | {all_datasets:.0f} |"
            )
            if target:
                tnum = target["experiments"].get(eid, {}).get("num_datasets", num)
                ratio = 1.0
                if rule in ("baseline", "jspgfn_train") and method in methods_of(target, load_registry(ROOT)):
                    ours, theirs = budget(config, method), budget(target, method)
                    ratio = theirs / ours if ours and theirs else float("nan")
                estimate = mean * ratio * tnum
                total_target += estimate
                line += f" {estimate:.0f} (x{ratio:.2g} budget) |"
            print(line)
        print(f"\ntotal job time, {num} datasets: {total / 60:.1f} min", end="")
        print(f"; target preset: {total_target / 3600:.1f} h (extrapolated)" if target else "")


if __name__ == "__main__":
    main()
