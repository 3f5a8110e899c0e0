"""What a preset reduces against the paper preset, in one caption sentence, generated from the configs.

A reduced preset (quick, smoke, a custom config) runs fewer datasets and smaller budgets than the paper's
grid (config/config.yaml). `reduction_note` states, for one experiment, the number of datasets against the
paper preset's and every budget setting that differs from the paper's, read from the resolved configs
(the method registry's budgets), so a caption cannot go stale when a budget changes.
"""

from jspgfn.registry import resolve_methods

# The JSP-GFN training settings a budget is made of (jspgfn.gflownet.presets.TrainConfig fields).
TRAINING_BUDGET = ("num_iterations", "batch_size", "num_theta_samples")
LOG_PT_BUDGET = ("beam_size", "mc_samples")


def _number(value):
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _same_model(mid, method, other_id, other):
    """Two entries that run the same code on the same model, budgets aside (a variant of a baseline, or
    JSP-GFN with the same likelihood and family)."""
    if method.get("kind") == "jspgfn" or other.get("kind") == "jspgfn":
        return all(method.get(k) == other.get(k) for k in ("kind", "likelihood", "family"))
    same = (method.get("name") or mid) == (other.get("name") or other_id)
    return same and method.get("likelihood") == other.get("likelihood")


def paper_counterpart(mid, method, paper_exp, paper_methods):
    """The id of the paper experiment's method that `mid` stands for: the same id, else the one with the
    same model; None when the paper experiment has none."""
    listed = paper_exp.get("methods", [])
    if mid in listed:
        return mid
    return next((p for p in listed if _same_model(mid, method, p, paper_methods[p])), None)


def budget_settings(method, preset):
    """{setting: value} of a method's budget in `preset`: JSP-GFN's training iterations, batch and theta
    samples (its training preset with the entry's params over it) and its number of samples; a
    baseline's params."""
    if method.get("kind") == "jspgfn":
        from jspgfn.gflownet.presets import get_preset

        params = {k: v for k, v in method.get("params", {}).items() if k in TRAINING_BUDGET}
        train = get_preset(method.get("preset") or preset, **params)
        settings = {key: getattr(train, key) for key in TRAINING_BUDGET}
        return {**settings, "num_samples": method.get("num_samples", 1000)}
    return dict(method.get("params", {}))


def _differences(ours, theirs):
    keys = [k for k in ours if k in theirs and ours[k] != theirs[k]]
    if not keys:
        return ""
    return (
        ", ".join(f"{k} {_number(ours[k])}" for k in keys)
        + " (paper "
        + ", ".join(_number(theirs[k]) for k in keys)
        + ")"
    )


def reduction_note(config, eid, paper, registry):
    """One sentence: how experiment `eid` of `config` is reduced against the paper preset `paper` (a
    config dict: config/config.yaml), e.g. "REDUCED (quick preset): 2 of the paper preset's 20 datasets;
    budgets: JSP-GFN (diag) ``jspgfn-diag-short``: num_iterations 1,000 (paper 30,000); ...". '' for the
    paper preset itself, or when nothing differs. `config` may be the workflow's resolved config (its
    `methods` hold every entry) or a preset file; `max_datasets` caps the dataset count as in the workflow."""
    preset = config.get("preset", "paper")
    if preset == "paper":
        return ""
    exp = config["experiments"][eid]
    paper_exp = paper["experiments"].get(eid)
    if paper_exp is None:
        return f"REDUCED (``{preset}`` preset): experiment ``{eid}`` is not in the paper preset."
    methods = resolve_methods(config, registry)
    paper_methods = resolve_methods(paper, registry)
    num = exp.get("num_datasets", 1)
    if config.get("max_datasets"):
        num = min(num, config["max_datasets"])
    parts = []
    paper_num = paper_exp.get("num_datasets", 1)
    if num != paper_num:
        parts.append(f"{num} of the paper preset's {paper_num} datasets")
    budgets = []
    for mid in exp.get("methods", []):
        counterpart = paper_counterpart(mid, methods[mid], paper_exp, paper_methods)
        if counterpart is None:
            continue
        diff = _differences(budget_settings(methods[mid], preset), budget_settings(paper_methods[counterpart], "paper"))
        if diff:
            budgets.append(f"{registry.display_name(mid)} ``{mid}``: {diff}")
    if budgets:
        parts.append("budgets: " + "; ".join(budgets))
    ours_pt, paper_pt = exp.get("log_pt") or {}, paper_exp.get("log_pt") or {}
    if ours_pt.get("enabled") and paper_pt.get("enabled"):
        diff = _differences({k: ours_pt.get(k) for k in LOG_PT_BUDGET}, {k: paper_pt.get(k) for k in LOG_PT_BUDGET})
        if diff:
            parts.append(f"log P_T estimator: {diff}")
    first = (exp.get("exact") or {}).get("datasets")
    if (exp.get("exact") or {}).get("enabled") and first and first < num:
        parts.append(f"the exact posterior on the first {first} of the {num} datasets")
    if not parts:
        return ""
    return f"REDUCED (``{preset}`` preset): " + "; ".join(parts) + "."
