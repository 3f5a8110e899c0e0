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

With --predict it needs no run: it PREDICTS a preset's time from the measured per-job times committed in
benchmarks/measured_job_times.csv (each row: a job of an experiment, its measured wall seconds, the budget
`cost` it ran with, where the number comes from), scaled by the ratio of the preset's budget to the
measured one (all but the job's fixed cost: start, imports, compilation, the `fixed` rows, from CI's smoke
run) and multiplied by the preset's dataset count. It prints per experiment the job time (sum of
the jobs' wall times), the slot time (job time x the job's threads: a JSP-GFN training job takes 2 of the 2
cores) and the wall time on CORES cores (slot time / cores, perfect packing: a lower bound on the
schedule, from measurements that are upper bounds, mostly taken on shared cores).

With --rows it prints, from a finished run, the rows that measured_job_times.csv takes (each method's job
with the budget it ran with, the exact posterior, one evaluation: mean wall seconds over the run's datasets),
for a measurement run such as benchmarks/job_times_measure.yaml.

  .venv/bin/python benchmarks/compute_plan.py config/quick.yaml [--target config/config.yaml]
  .venv/bin/python benchmarks/compute_plan.py config/quick.yaml --predict [--cores 2]
  .venv/bin/python benchmarks/compute_plan.py benchmarks/job_times_measure.yaml --rows [--results OUT] [--source TEXT]
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
MEASURED = ROOT / "benchmarks" / "measured_job_times.csv"


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


def sample_budget(config, experiment, method_id, registry=None):
    """Work units of a JSP-GFN sampling job: the samples drawn, times (beam + Monte Carlo orders) when the
    experiment estimates log P_T (the estimator's network passes per sample grow with both)."""
    registry = registry or load_registry(ROOT)
    method = methods_of(config, registry)[method_id]
    log_pt = config["experiments"][experiment].get("log_pt") or {}
    per_sample = log_pt["beam_size"] + log_pt["mc_samples"] if log_pt.get("enabled") else 1
    return float(method.get("num_samples", 1000) * per_sample)


def _same_model(method_id, method, other_id, other):
    """Two config entries that run the same code on the same model, budgets aside: the same baseline
    (`name`, else the id) and likelihood, or JSP-GFN with the same likelihood and family."""
    if method.get("kind") == "jspgfn" or other.get("kind") == "jspgfn":
        keys = ("kind", "likelihood", "family")
        return all(method.get(key) == other.get(key) for key in keys)
    same_name = (method.get("name") or method_id) == (other.get("name") or other_id)
    return same_name and method.get("likelihood") == other.get("likelihood")


def _measured_row(rows, rule, method_id, method, methods):
    """The measured row of a method's job: by id, else a row of a method with the same model (a variant
    of the same baseline, or JSP-GFN with the same likelihood and family) of the same experiment."""
    rows = rows[rows["rule"] == rule]
    match = rows[rows["method"] == method_id]
    if len(match):
        return match.iloc[0]
    for _, row in rows.iterrows():
        if row["method"] in methods and _same_model(method_id, method, row["method"], methods[row["method"]]):
            return row
    return None


def predict(config, measured=MEASURED, registry=None):
    """One row per predicted job group of `config`: experiment, rule, method, jobs, seconds per job
    (measured), ratio (the preset's budget / the measured one), threads, job_s (all jobs), slot_s
    (job_s x threads), basis (where the measurement comes from, or 'no measurement')."""
    registry = registry or load_registry(ROOT)
    table = pd.read_csv(measured, keep_default_na=False)
    methods = methods_of(config, registry)
    cap = config.get("max_datasets")
    out = []

    fixed_rows = table[(table["experiment"] == "all") & (table["rule"] == "fixed")]
    fixed = {row["method"]: float(row["seconds"]) for _, row in fixed_rows.iterrows()}

    def add(eid, rule, mid, jobs, row, ratio=1.0, threads=1):
        seconds = float("nan") if row is None else 0.0 if row["seconds"] == "" else float(row["seconds"])
        basis = "no measurement" if row is None else row["source"]
        if row is not None and row["seconds"] == "" and ratio != 1.0:
            basis = f"budget x{ratio:.2g} of the measured one, but measured only together with other jobs: not scaled"
        # A job's fixed cost (start, imports, compilation) does not scale with its budget.
        base = min(fixed.get(rule, 0.0), seconds) if seconds > 0 else 0.0
        per_job = base + (seconds - base) * ratio if seconds > 0 else seconds
        job_s = per_job * jobs
        out.append(
            dict(
                experiment=eid,
                rule=rule,
                method=mid or "-",
                jobs=jobs,
                seconds=seconds,
                ratio=ratio,
                threads=threads,
                job_s=job_s,
                slot_s=job_s * threads,
                basis=basis,
            )
        )

    for eid, exp in config["experiments"].items():
        if not exp.get("enabled", True):
            continue
        rows = table[table["experiment"] == eid]
        num = min(exp.get("num_datasets", 1), cap) if cap else exp.get("num_datasets", 1)
        for mid in exp["methods"]:
            method = methods[mid]
            jspgfn = method.get("kind") == "jspgfn"
            rule = "jspgfn_train" if jspgfn else "baseline"
            row = _measured_row(rows, rule, mid, method, methods)
            if row is None and mid == "exact":
                continue  # the d=5 exact posterior: part of the experiment's measured "other" jobs
            ratio = 1.0
            if row is not None and row["cost"] != "":
                ours = budget(config, mid, registry)
                ratio = ours / float(row["cost"]) if ours else float("nan")
            add(eid, rule, mid, num, row, ratio, int(method.get("threads", 1)))
            if jspgfn:
                row = _measured_row(rows, "jspgfn_sample", mid, method, methods)
                if row is not None:
                    ratio = sample_budget(config, eid, mid, registry) / float(row["cost"])
                    add(eid, "jspgfn_sample", mid, num, row, ratio)
        for rule in ("other", "exact", "probe", "evaluate"):
            for _, row in rows[rows["rule"] == rule].iterrows():
                jobs = num
                if rule == "exact":
                    first = (exp.get("exact") or {}).get("datasets")
                    jobs = min(first, num) if first else num
                if rule == "probe":
                    jobs = len(exp["methods"])
                if rule == "evaluate":  # one evaluation per method and dataset
                    jobs = num * len(exp["methods"])
                add(eid, rule, "", jobs, row)
    for _, row in table[(table["experiment"] == "all") & (table["rule"] != "fixed")].iterrows():
        add("all", row["rule"], "", 1, row)
    return pd.DataFrame(out)


def print_prediction(config, cores=2, measured=MEASURED):
    """Print the prediction of `predict` per experiment and in all; return (job_s, slot_s, wall_s)."""
    table = predict(config, measured)
    preset = config["preset"]
    print(f"# PREDICTED time of the {preset} preset from measured per-job times ({Path(measured).name};")
    print(f"# budgets scaled by each method's registry `cost`); wall time on {cores} cores = slot time / {cores}.")
    print(f"# Not a timed run: `time make {preset}` from empty folders on {cores} quiet cores is the check.\n")
    print(
        f"| experiment | datasets | job time, min | slot time, min | wall time on {cores} cores, min | largest jobs |"
    )
    print("|---|---|---|---|---|---|")
    for eid, part in table.groupby("experiment", sort=False):
        exp = config["experiments"].get(eid, {})
        top = part.sort_values("job_s", ascending=False).head(3)
        largest = ", ".join(f"{r.rule} {r.method} {r.job_s / 60:.1f}" for r in top.itertuples() if r.job_s > 0)
        missing = part[part["basis"] == "no measurement"]
        if len(missing):
            largest += "; NO MEASUREMENT: " + ", ".join(f"{r.rule} {r.method}" for r in missing.itertuples())
        unscaled = part[part["basis"].str.contains("not scaled") & (part["ratio"] != 1.0)]
        if len(unscaled):
            largest += "; budget changed but NOT SCALED: " + ", ".join(r.method for r in unscaled.itertuples())
        print(
            f"| {eid} | {exp.get('num_datasets', '-')} | {part['job_s'].sum() / 60:.1f} | "
            f"{part['slot_s'].sum() / 60:.1f} | {part['slot_s'].sum() / 60 / cores:.1f} | {largest} |"
        )
    job, slot = table["job_s"].sum(), table["slot_s"].sum()
    print(
        f"\ntotal: job time {job / 60:.0f} min, slot time {slot / 60:.0f} min, PREDICTED wall time on {cores} cores "
        f"{slot / 60 / cores:.0f} min"
    )
    return job, slot, slot / cores


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


# The rules with a benchmark file per dataset (the capability probes write none: their CSV row is an assumption).
PER_JOB_RULES = ("baseline", "jspgfn_train", "jspgfn_sample", "exact", "evaluate")


def measured_rows(config, table, source, registry=None):
    """Rows of measured_job_times.csv from a run's benchmark files (`read_benchmarks`), one per experiment,
    rule and method of PER_JOB_RULES: the mean wall seconds of its jobs and the budget `cost` they ran with
    (a method's registry cost, a sampling job's samples x network passes; none for the rest). The
    per-experiment rules (aggregate, figures) are left out: seconds, not minutes."""
    registry = registry or load_registry(ROOT)
    table = table[table["rule"].isin(PER_JOB_RULES)].copy()
    # The exact posterior and the evaluations: one row each, whatever the method (predict counts the jobs).
    table.loc[~table["rule"].isin(("baseline", "jspgfn_train", "jspgfn_sample")), "method"] = ""
    rows = []
    for (eid, rule, method), jobs in table.groupby(["experiment", "rule", "method"], sort=True):
        cost = None
        if rule in ("baseline", "jspgfn_train"):
            cost = budget(config, method, registry)
        elif rule == "jspgfn_sample":
            cost = sample_budget(config, eid, method, registry)
        text = f"{source}; {len(jobs)} job(s), mean of {', '.join(f'{s:.0f}' for s in jobs['s'])} s"
        rows.append(
            dict(
                experiment=eid,
                rule=rule,
                method=method,
                seconds=round(jobs["s"].mean()),
                cost="" if cost is None else f"{cost:.0f}",
                source=text,
            )
        )
    return pd.DataFrame(rows, columns=["experiment", "rule", "method", "seconds", "cost", "source"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", help="the preset that ran, e.g. config/quick.yaml")
    parser.add_argument("--target", help="another preset to extrapolate to, e.g. config/config.yaml")
    parser.add_argument("--predict", action="store_true", help="predict from benchmarks/measured_job_times.csv")
    parser.add_argument("--measured", default=str(MEASURED), help="the measured per-job times (with --predict)")
    parser.add_argument("--cores", type=int, default=2, help="cores of the machine (with --predict; default 2)")
    parser.add_argument("--rows", action="store_true", help="print a finished run's rows for the measured CSV")
    parser.add_argument("--results", help="the run's results folder (default: the config's `results`)")
    parser.add_argument("--source", default="measured", help="the rows' source text (with --rows)")
    args = parser.parse_args()
    config = yaml.safe_load(Path(args.config).read_text())
    if args.predict:
        print_prediction(config, args.cores, args.measured)
        return
    target = yaml.safe_load(Path(args.target).read_text()) if args.target else None
    results = Path(args.results or config.get("results", "results")) / config["preset"]
    table = read_benchmarks(results)
    if table.empty:
        raise SystemExit(f"no benchmark files under {results}/*/benchmarks/: run the workflow first")
    if args.rows:
        print(measured_rows(config, table, args.source).to_csv(index=False), end="")
        return
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
