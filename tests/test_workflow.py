"""The Snakemake pipeline: lint, dry runs, config validation and the smoke preset end to end.

Each test runs Snakemake in a temporary copy of the workflow (Snakefile, workflow/, config/,
profiles/), with this interpreter: the Snakefile puts its directory first on PATH, so the jobs find
the `jspgfn` command of the same environment.
"""

import csv
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from jspgfn.registry import load_registry, resolve_methods

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = load_registry(ROOT)  # every method id and baseline folder: the messages below list them
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
PRESETS = ["config/config.yaml", "config/quick.yaml", "config/smoke.yaml"]
# Figure 4 and the Sachs consensus table and edge-marginal heatmap (experiments sachs_small, sachs, gene_expression).
REAL_DATA_STEMS = (
    "figure_4a",
    "figure_4b",
    "figure_4c_sachs",
    "figure_4c_gene_expression",
    "table_sachs_consensus",
    "figure_sachs_edge_marginals",
)


def copy_workflow(dest):
    for name in ("Snakefile", "workflow", "config", "profiles", "baselines"):
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(src, dest / name)
    return dest


# A guard against a hung Snakemake, not a speed test: the smoke run takes 8-13 min on 2 cores shared with
# other jobs, and a fixed 1,200 s failed the test on a loaded machine although nothing was wrong.
HANG_GUARD_VARIABLE = "JSPGFN_WORKFLOW_TIMEOUT"
DEFAULT_HANG_GUARD_SECONDS = 4 * 3600


def hang_guard_seconds():
    """Seconds a Snakemake run of these tests may take: $JSPGFN_WORKFLOW_TIMEOUT, else 4 hours."""
    text = os.environ.get(HANG_GUARD_VARIABLE, "").strip()
    if not text:
        return DEFAULT_HANG_GUARD_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not (math.isfinite(seconds) and seconds > 0):
        pytest.fail(f"{HANG_GUARD_VARIABLE}={text!r}: expected a number of seconds > 0")
    return seconds


def run_guarded(command, **kwargs):
    """subprocess.run(command) under the hang guard; past it, the test fails saying how to widen it."""
    guard = hang_guard_seconds()
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=guard, **kwargs)
    except subprocess.TimeoutExpired:
        pytest.fail(
            f"{' '.join(map(str, command))} ran past the hang guard of {guard:g} s: either it hangs, or this "
            f"machine is busy; to allow longer, set {HANG_GUARD_VARIABLE}=SECONDS (default "
            f"{DEFAULT_HANG_GUARD_SECONDS} s)"
        )


def snakemake(cwd, *args):
    env = dict(os.environ)
    env["JAX_COMPILATION_CACHE_DIR"] = str(ROOT / ".jax_cache")  # shared with other runs: faster
    env.setdefault("JAX_PLATFORMS", "cpu")
    return run_guarded(SNAKEMAKE + list(args), cwd=cwd, env=env)


def test_hang_guard_is_configurable(monkeypatch):
    monkeypatch.delenv(HANG_GUARD_VARIABLE, raising=False)
    assert hang_guard_seconds() == DEFAULT_HANG_GUARD_SECONDS >= 3 * 1200
    monkeypatch.setenv(HANG_GUARD_VARIABLE, "90")
    assert hang_guard_seconds() == 90
    monkeypatch.setenv(HANG_GUARD_VARIABLE, "soon")
    with pytest.raises(pytest.fail.Exception, match="expected a number of seconds"):
        hang_guard_seconds()


def test_a_run_past_the_hang_guard_fails_saying_how_to_widen_it(monkeypatch):
    monkeypatch.setenv(HANG_GUARD_VARIABLE, "0.5")
    with pytest.raises(pytest.fail.Exception, match=f"hang guard of 0.5 s.*busy.*{HANG_GUARD_VARIABLE}=SECONDS"):
        run_guarded([sys.executable, "-c", "import time; time.sleep(30)"])


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return copy_workflow(tmp_path_factory.mktemp("workflow"))


def test_lint_is_clean_for_every_preset(workdir):
    for preset in PRESETS:
        result = snakemake(workdir, "--lint", "--configfile", preset)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "Congratulations, your workflow is in a good condition!" in result.stdout + result.stderr
        assert "Lints for" not in result.stdout + result.stderr


def test_default_config_is_the_paper_grid(workdir):
    result = snakemake(workdir, "-n", "--quiet", "rules")
    assert result.returncode == 0, result.stderr
    text = result.stdout + result.stderr
    # 20 datasets per experiment: 20 generate each, 20 exact (small graphs), 20 samples and 20 metrics per
    # method and experiment, 1 table per experiment, the figures of every experiment.
    paper = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    experiments = paper["experiments"]
    assert {"small_graphs", "larger_graphs_linear", "larger_graphs_mlp"} <= set(experiments)
    medium = {"medium_graphs_d10_er1", "medium_graphs_d10_er2", "medium_graphs_d14_er1", "medium_graphs_d14_er2"}
    assert medium <= set(experiments) and all(experiments[eid]["exact"]["enabled"] for eid in medium)
    # Real data (Figure 4): one dataset each, prepared by `jspgfn realdata` (rule realdata).
    real = {eid for eid, exp in experiments.items() if exp["data"].get("source")}
    assert real == {"sachs_small", "sachs", "gene_expression"}
    assert all(experiments[eid]["num_datasets"] == 1 for eid in real)
    runs = [(m, exp["num_datasets"]) for exp in experiments.values() for m in exp["methods"]]
    methods = resolve_methods(paper, REGISTRY)
    baselines = sum(n for m, n in runs if methods[m].get("kind", "baseline") == "baseline")
    for rule, count in (
        ("generate", 20 * (len(experiments) - len(real))),
        ("realdata", len(real)),
        # small graphs, the medium graphs and the d=20 linear experiment (every dataset in the paper preset)
        ("exact", 20 + 20 * len([eid for eid in experiments if eid.startswith("medium_graphs")]) + 20),
        ("baseline", baselines),
        ("evaluate", sum(n for _, n in runs)),
        ("aggregate", len(experiments)),
        ("edge_marginals", 1),  # JSP-GFN on Sachs: the edge-marginal heatmap
        ("aggregate_edges", 1),
        ("table_d1", 1),
        ("table_a1", 1),
        # Figures 3a, 3b, 3c, D.2 (linear, MLP), 4a, 4b, 4c (2), Sachs edge marginals; 4 medium-graph figures;
        # the d=20 linear experiment's edge marginals against the exact posterior
        ("experiment_figure", 15),
        # the slopes of Figure 3c on every dataset, the Sachs consensus table, the d=20 linear sampled graphs
        # against the exact posterior
        ("experiment_table", 3),
    ):
        assert any(line.split() == [rule, str(count)] for line in text.splitlines()), (rule, text)
    assert not (workdir / "results").exists()


def test_paper_grid_lists_the_larger_graph_figures(workdir):
    result = snakemake(workdir, "-n")
    assert result.returncode == 0, result.stderr
    text = result.stdout + result.stderr
    for stem in ("figure_3a", "figure_3b", "figure_3c", "figure_d2_linear", "figure_d2_mlp", "table_log_pt_slopes"):
        assert f"figures/{stem}.pdf" in text, stem
    for stem in REAL_DATA_STEMS:
        assert f"figures/{stem}.pdf" in text, stem
    assert "jspgfn realdata sachs --num-train 100 --seed 0 --out results/paper/sachs_small/data/0" in text
    assert "jspgfn realdata gene-expression --seed 0 --out results/paper/gene_expression/data/0" in text
    # JSP-GFN's samples of the MLP experiment carry log P_T estimates for Figure 3c; the linear ones do not.
    assert "jspgfn sample results/paper/larger_graphs_mlp/runs/jspgfn-mlp/0 --num 1000 --seed 0 --log-pt" in text
    linear = [line for line in text.splitlines() if "jspgfn sample results/paper/larger_graphs_linear/" in line]
    assert linear and not any("--log-pt" in line for line in linear)


@pytest.mark.parametrize("preset,datasets", [("quick", 3), ("smoke", 2)])
def test_dry_run_of_each_preset(workdir, preset, datasets):
    result = snakemake(workdir, "-n", "--configfile", f"config/{preset}.yaml")
    assert result.returncode == 0, result.stderr
    text = result.stdout + result.stderr
    assert f"results/{preset}/small_graphs/metrics.csv" in text
    assert f"results/{preset}/small_graphs/data/{datasets - 1}" in text
    assert f"results/{preset}/small_graphs/data/{datasets}\n" not in text
    # Both presets run every experiment: the d=20 ones (Figures 3a-3c, D.2) and the real data (Figure 4).
    for stem in ("figure_3a", "figure_3b", "figure_3c", "figure_d2_linear", "figure_d2_mlp", *REAL_DATA_STEMS):
        assert f"figures/{preset}/{stem}.pdf" in text, stem
    assert f"results/{preset}/larger_graphs_mlp/runs/jspgfn-mlp/0/done" in text
    if preset == "quick":  # and d=10 against the exact posterior (the subset dynamic program)
        for graph in ("er1", "er2"):
            assert f"figures/quick/figure_medium_d10_{graph}.pdf" in text
            assert f"results/quick/medium_graphs_d10_{graph}/exact/1.npz" in text
        # d=20 linear: the exact posterior of the first dataset only (exact.datasets: 1)
        for stem in ("figure_larger_linear_exact_edges", "table_larger_linear_exact_graphs"):
            assert f"figures/quick/{stem}.pdf" in text, stem
        assert "results/quick/larger_graphs_linear/exact/0.npz" in text
        assert "results/quick/larger_graphs_linear/exact/1.npz" not in text
    else:  # the smoke preset has no d=20 exact run
        assert "larger_graphs_linear/exact/" not in text
    assert not (workdir / "results").exists()


def test_max_datasets_caps_every_experiment(workdir):
    """`--config max_datasets=2` (make quick MAX_DATASETS=2): the first 2 datasets of each experiment, and
    the figures from those."""
    result = snakemake(workdir, "-n", "--configfile", "config/quick.yaml", "--config", "max_datasets=2")
    assert result.returncode == 0, result.stderr
    text = result.stdout + result.stderr
    for eid in ("small_graphs", "larger_graphs_linear", "larger_graphs_mlp", "medium_graphs_d10_er1"):
        assert f"results/quick/{eid}/data/1\n" in text, eid
        assert f"results/quick/{eid}/data/2\n" not in text, eid
    assert "results/quick/sachs/data/0" in text  # one dataset stays one
    assert "figures/quick/figure_3c.pdf" in text
    bad = snakemake(workdir, "-n", "--configfile", "config/quick.yaml", "--config", "max_datasets=0")
    assert bad.returncode != 0
    assert "--config: max_datasets: 0 is less than the minimum of 1" in bad.stderr
    assert not (workdir / "results").exists()


def test_a_disabled_experiment_can_be_built_by_name(workdir):
    configfile = _bad_config(
        workdir, "disabled.yaml", lambda c: c["experiments"]["larger_graphs_mlp"].update(enabled=False)
    )
    everything = snakemake(workdir, "-n", "--configfile", configfile)
    assert everything.returncode == 0, everything.stderr
    assert "results/smoke/larger_graphs_mlp/" not in everything.stdout + everything.stderr
    result = snakemake(workdir, "-n", "figures/smoke/figure_3c.pdf", "--configfile", configfile)
    assert result.returncode == 0, result.stderr
    text = result.stdout + result.stderr
    assert "results/smoke/larger_graphs_mlp/runs/jspgfn-mlp/0" in text and "small_graphs" not in text
    assert not (workdir / "results").exists()


def test_exact_posterior_on_the_first_datasets_only(workdir):
    """exact.datasets: k gives the exact posterior to the first k datasets: only they have an exact job and
    are evaluated with --exact; the figures against it say so in their titles."""

    def edit(config):
        experiment = config["experiments"]["larger_graphs_linear"]
        experiment.update(num_datasets=3, first_seed=10, methods=["b-pc"])
        experiment["exact"] = {"enabled": True, "datasets": 2}
        experiment["figures"].update(figure_x_edges="exact_edges", table_x_graphs="exact_graphs")

    configfile = _bad_config(workdir, "first_exact.yaml", edit)
    targets = ["figures/smoke/figure_x_edges.pdf", "figures/smoke/table_x_graphs.pdf"]
    result = snakemake(workdir, "-n", "-p", *targets, "--configfile", configfile)
    assert result.returncode == 0, result.stderr
    text = result.stdout + result.stderr
    exact_jobs = sorted(line for line in text.splitlines() if line.startswith("Shell command: jspgfn exact "))
    assert [line.split("--out ")[1].split()[0] for line in exact_jobs] == [
        "results/smoke/larger_graphs_linear/exact/10.npz",
        "results/smoke/larger_graphs_linear/exact/11.npz",
    ]
    evaluate = {
        line.split("/samples/b-pc/")[1].split(".npz")[0]: line
        for line in text.splitlines()
        if line.startswith("Shell command: jspgfn evaluate ")
    }
    assert sorted(evaluate) == ["10", "11", "12"]
    for seed in ("10", "11"):
        assert f"--exact results/smoke/larger_graphs_linear/exact/{seed}.npz" in evaluate[seed]
    assert "--exact" not in evaluate["12"]
    assert "jspgfn report table-exact-graphs" in text
    assert text.count("exact posterior on the first 2 of 3 datasets") == 2  # both titles
    # max_datasets below exact.datasets: the exact posterior for the datasets that remain, every one.
    capped = snakemake(workdir, "-n", "-p", *targets, "--configfile", configfile, "--config", "max_datasets=1")
    assert capped.returncode == 0, capped.stderr
    text = capped.stdout + capped.stderr
    assert "larger_graphs_linear/exact/10.npz" in text and "exact/11.npz" not in text
    assert "exact posterior on the first" not in text
    assert not (workdir / "results").exists()


def test_captions_end_with_the_presets_reductions(tmp_path):
    """Every caption template of a figure or table rendered with the quick preset's resolved config (the
    workflow's own results/quick/config.yaml) ends with the reduction sentence that the rule passes: the
    dataset count against the paper preset's and the budgets (jspgfn.report.reductions)."""
    from types import SimpleNamespace

    import jinja2
    from docutils.core import publish_parts

    from jspgfn.registry import load_registry
    from jspgfn.report.reductions import reduction_note

    workdir = copy_workflow(tmp_path)
    result = snakemake(workdir, "results/quick/config.yaml", "--cores", "1", "--configfile", "config/quick.yaml")
    assert result.returncode == 0, result.stderr[-3000:]
    resolved = yaml.safe_load((workdir / "results" / "quick" / "config.yaml").read_text())
    paper = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    registry = load_registry(ROOT)
    report = ROOT / "workflow" / "report"
    stems = {stem: eid for eid, exp in resolved["experiments"].items() for stem in exp["figures"]}
    stems.update({stem: resolved["small_graphs"] for stem in ("figure_2a", "figure_2b", "figure_d1", "table_d1")})
    for stem, eid in stems.items():
        template = (
            "table_d1.rst"
            if stem == "table_d1"
            else "figure.rst"
            if stem.startswith("figure_2") or stem == "figure_d1"
            else "experiment_figure.rst"
        )
        note = reduction_note(resolved, eid, paper, registry)
        snake = SimpleNamespace(
            config=resolved, wildcards=SimpleNamespace(figure=stem), params=SimpleNamespace(reduction=note)
        )
        caption = jinja2.Template((report / template).read_text()).render(snakemake=snake)
        # as the report renders it (reStructuredText to HTML), with no warning (halt on any)
        publish_parts(caption, writer_name="html", settings_overrides={"halt_level": 2, "report_level": 2})
        exp = resolved["experiments"][eid]
        assert caption.rstrip().endswith(note), (stem, caption[-300:])
        if exp["num_datasets"] != paper["experiments"][eid]["num_datasets"]:
            assert f"{exp['num_datasets']} of the paper preset's 20 datasets" in caption, stem
        assert "budgets: " in caption and "(paper " in caption, stem


def test_jspgfn_takes_the_likelihood_settings_as_params(workdir):
    """A JSP-GFN method's params may hold its likelihood's settings, as a baseline's do: they reach
    `jspgfn train` as --param, beside the training options."""

    def edit(config):
        overlay(config, "jspgfn-diag")["params"] = {"obs_var": 0.1, "prior_var": 2}

    configfile = _bad_config(workdir, "settings.yaml", edit)
    target = "results/smoke/small_graphs/runs/jspgfn-diag/0/done"
    result = snakemake(workdir, "-n", "-p", target, "--configfile", configfile)
    assert result.returncode == 0, result.stderr
    train = [line for line in result.stdout.splitlines() if line.startswith("Shell command: jspgfn train ")]
    assert len(train) == 1 and "--param=obs_var=0.1 " in train[0] and "--param=prior_var=2 " in train[0]
    assert not (workdir / "results").exists()


def test_a_jspgfn_recipe_reaches_jspgfn_train(workdir):
    """A JSP-GFN method's recipe (jspgfn-lingauss: the lingauss recipe at the quick training preset) reaches
    `jspgfn train` as --recipe, before its params; the paper grid runs it with 15,000 iterations
    (jspgfn-lingauss-long) on the d=10, d=14 and d=20 linear experiments."""
    target = "results/smoke/larger_graphs_linear/runs/jspgfn-lingauss/0/done"
    result = snakemake(workdir, "-n", "-p", target, "--configfile", "config/smoke.yaml")
    assert result.returncode == 0, result.stderr
    train = [line for line in result.stdout.splitlines() if line.startswith("Shell command: jspgfn train ")]
    assert len(train) == 1 and " --recipe=lingauss " in train[0] and "--preset smoke" in train[0]
    paper = resolve_methods(yaml.safe_load((ROOT / "config" / "config.yaml").read_text()), REGISTRY)
    long, short = paper["jspgfn-lingauss-long"], paper["jspgfn-lingauss"]
    assert long["recipe"] == short["recipe"] == "lingauss" and long["preset"] == short["preset"] == "quick"
    assert long["params"] == {"num_iterations": 15000} and not short.get("params")
    experiments = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["experiments"]
    linear = ("larger_graphs_linear", *(f"medium_graphs_d{d}_er{k}" for d in (10, 14) for k in (1, 2)))
    assert [eid for eid in linear if "jspgfn-lingauss-long" not in experiments[eid]["methods"]] == []
    assert not (workdir / "results").exists()


def test_train_group_size_trains_an_experiments_datasets_in_one_job(workdir):
    """train_group_size K > 1: the experiment's JSP-GFN datasets are trained K at a time by one
    `jspgfn train DATA... --out RUN...` job, which its sampling jobs wait for; other experiments and the
    default (1) keep one job per dataset."""
    default = snakemake(workdir, "-n", "-p", "--configfile", "config/smoke.yaml")
    assert default.returncode == 0, default.stderr
    assert "jspgfn_train_group" not in default.stdout and "group-" not in default.stdout

    def edit(config):
        config["experiments"]["small_graphs"].update(num_datasets=3, train_group_size=2)

    configfile = _bad_config(workdir, "grouped.yaml", edit)
    result = snakemake(workdir, "-n", "-p", "results/smoke/small_graphs/metrics.csv", "--configfile", configfile)
    assert result.returncode == 0, result.stderr
    train = [line for line in result.stdout.splitlines() if line.startswith("Shell command: jspgfn train ")]
    runs = "results/smoke/small_graphs/runs/jspgfn-diag"
    data = "results/smoke/small_graphs/data"
    pair = [line for line in train if f"--out {runs}/0 {runs}/1 " in line]
    assert len(pair) == 1 and f"train {data}/0 {data}/1 --model" in pair[0] and "--seed 0 1 " in pair[0]
    assert f"{runs}/group-0-1.done" in result.stdout and f"{runs}/group-2-2.done" in result.stdout
    assert len([line for line in train if f"--out {runs}/2 " in line]) == 1
    assert f"{runs}/0/done" not in result.stdout  # no single-run job for a grouped dataset
    # each sampling job waits for its group
    samples = result.stdout.split("rule jspgfn_sample:")[1:]
    assert any(f"input: {runs}/group-2-2.done" in job and "dataset=2" in job for job in samples)
    assert any(f"input: {runs}/group-0-1.done" in job and "dataset=1" in job for job in samples)
    assert not (workdir / "results").exists()


def test_train_group_size_for_every_experiment_from_the_command_line(workdir):
    """`--config train_group_size=K` sets every experiment's train_group_size (a GPU run of a preset without
    editing it); out of range, the config error names the key."""
    result = snakemake(workdir, "-n", "--configfile", "config/quick.yaml", "--config", "train_group_size=2")
    assert result.returncode == 0, result.stderr
    text = result.stdout + result.stderr
    for eid, mid, groups in [
        ("small_graphs", "jspgfn-diag", ("0-1", "2-2")),
        ("larger_graphs_mlp", "jspgfn-mlp", ("0-1",)),
        ("medium_graphs_d10_er2", "jspgfn-full-short", ("0-1",)),
    ]:
        runs = f"results/quick/{eid}/runs/{mid}"
        assert all(f"{runs}/group-{group}.done" in text for group in groups), eid
        assert f"{runs}/0/done" not in text, eid
    bad = snakemake(workdir, "-n", "--configfile", "config/quick.yaml", "--config", "train_group_size=0")
    assert bad.returncode != 0
    assert "--config: train_group_size: 0 is less than the minimum of 1" in bad.stderr
    assert not (workdir / "results").exists()


def overlay(config, mid):
    """The preset's own entry of method `mid`, over the registry's (created empty)."""
    return config.setdefault("methods", {}).setdefault(mid, {})


KNOWN_METHODS = ", ".join(sorted(REGISTRY))
KNOWN_BASELINES = ", ".join(sorted(REGISTRY.specs))


def _bad_config(workdir, name, edit):
    config = yaml.safe_load((workdir / "config" / "smoke.yaml").read_text())
    edit(config)
    path = workdir / "config" / name
    path.write_text(yaml.safe_dump(config))
    return f"config/{name}"


@pytest.mark.parametrize(
    "name,edit,problem",
    [
        (
            "neg.yaml",
            lambda c: c["experiments"]["small_graphs"].update(num_datasets=-1),
            "experiments.small_graphs.num_datasets: -1 is less than the minimum of 1",
        ),
        (
            "typo.yaml",
            lambda c: overlay(c, "exact").update(likelihood="lingaus"),
            "methods.exact.likelihood: 'lingaus' is not one of ['lingauss', 'mlp-gauss', 'mlp-categorical', "
            "'mlp-zinormal']",
        ),
        (
            "key.yaml",
            lambda c: c["experiments"]["small_graphs"].update(num_dataset=3),
            "experiments.small_graphs: Additional properties are not allowed ('num_dataset' was unexpected)",
        ),
        (
            "unknown.yaml",
            lambda c: c["experiments"]["small_graphs"].update(methods=["exact", "bcd-net"]),
            f"experiments.small_graphs.methods.1: unknown method 'bcd-net' (defined in methods: {KNOWN_METHODS})",
        ),
        (
            "stem.yaml",
            lambda c: c["experiments"]["larger_graphs_linear"]["figures"].update(figure_2b="nll"),
            "experiments.larger_graphs_linear.figures.figure_2b: 'figure_2b' is already written by the small-graph "
            "figures: choose another name",
        ),
        (
            "stem2.yaml",
            lambda c: c["experiments"]["larger_graphs_linear"]["figures"].update(figure_3b="nll"),
            "experiments.larger_graphs_mlp.figures.figure_3b: 'figure_3b' is already written by experiment "
            "'larger_graphs_linear': choose another name",
        ),
        (
            "logpt.yaml",
            lambda c: c["experiments"]["larger_graphs_mlp"].update(log_pt={"enabled": False}),
            "experiments.larger_graphs_mlp.figures.figure_3c: a log_pt figure needs log_pt.enabled: true in "
            "experiment 'larger_graphs_mlp'",
        ),
        (
            "kindfig.yaml",
            lambda c: c["experiments"]["larger_graphs_mlp"]["figures"].update(figure_3c="logpt"),
            "experiments.larger_graphs_mlp.figures.figure_3c: 'logpt' is not one of ['nll', 'shd_auroc', 'log_pt', "
            "'log_pt_slopes', 'graph_table', 'edge_marginals', 'exact_edges', 'exact_graphs']",
        ),
        (
            "bigexact.yaml",
            lambda c: c["experiments"]["small_graphs"]["data"].update(d=21),
            "experiments.small_graphs.exact.enabled: the exact posterior needs data.model linear and data.d <= 20",
        ),
        (
            "exactfig.yaml",
            lambda c: c["experiments"]["larger_graphs_linear"]["figures"].update(figure_x="exact_edges"),
            "experiments.larger_graphs_linear.figures: the exact_edges figure needs exact.enabled",
        ),
        (
            "exactgraphs.yaml",
            lambda c: c["experiments"]["larger_graphs_linear"]["figures"].update(table_x="exact_graphs"),
            "experiments.larger_graphs_linear.figures: the exact_graphs figure needs exact.enabled",
        ),
        (
            "exact0.yaml",
            lambda c: c["experiments"]["small_graphs"]["exact"].update(datasets=0),
            "experiments.small_graphs.exact.datasets: 0 is less than the minimum of 1",
        ),
        (
            "exacttype.yaml",
            lambda c: c["experiments"]["small_graphs"]["exact"].update(datasets="first"),
            "experiments.small_graphs.exact.datasets: 'first' is not of type 'integer', 'null'",
        ),
        (
            "exactmany.yaml",
            lambda c: c["experiments"]["small_graphs"]["exact"].update(datasets=3),
            "experiments.small_graphs.exact.datasets: 3 datasets with the exact posterior, but the experiment has "
            "num_datasets 2",
        ),
        (
            "exactoff.yaml",
            lambda c: c["experiments"]["larger_graphs_linear"].update(exact={"datasets": 1}),
            "experiments.larger_graphs_linear.exact.datasets: needs exact.enabled: true",
        ),
        (
            "source.yaml",
            lambda c: c["experiments"]["sachs"]["data"].update(source="sachs2"),
            "experiments.sachs.data.source: 'sachs2' is not one of ['sachs', 'gene_expression_simulated', "
            "'gene_expression', None]",
        ),
        (
            "nopath.yaml",
            lambda c: c["experiments"]["gene_expression"]["data"].update(source="gene_expression"),
            "experiments.gene_expression.data.path: data source gene_expression needs the path of a table",
        ),
        (
            "kind.yaml",
            lambda c: overlay(c, "b-pc").update(kind="baselin"),
            "methods.b-pc.kind: 'baselin' is not one of ['baseline', 'jspgfn']",
        ),
        (
            "name.yaml",
            lambda c: overlay(c, "b-pc").update(name="b-pcx"),
            f"methods.b-pc.name: unknown baseline 'b-pcx' (baselines/ has: {KNOWN_BASELINES})",
        ),
        (
            "id.yaml",
            lambda c: overlay(c, "pcx").update(kind="baseline", params={"num_bootstrap": 10}),
            f"methods.pcx: unknown baseline 'pcx' (baselines/ has: {KNOWN_BASELINES})",
        ),
        (
            "param.yaml",
            lambda c: overlay(c, "b-pc").setdefault("params", {}).update(alpah=0.01),
            "methods.b-pc.params.alpah: unknown parameter of baseline 'b-pc' (valid: alpha, hidden, "
            "max_alpha_halvings, num_bootstrap, obs_var, prior_mean, prior_var)",
        ),
        (
            "type.yaml",
            lambda c: overlay(c, "b-pc").setdefault("params", {}).update(num_bootstrap="ten"),
            "methods.b-pc.params.num_bootstrap: 'ten' is not of type 'integer'",
        ),
        (
            "likelihood.yaml",
            lambda c: overlay(c, "b-pc").update(likelihood="mlp-gauss"),
            "methods.b-pc.likelihood: baseline 'b-pc' supports only lingauss, not 'mlp-gauss'",
        ),
        (
            "family.yaml",
            lambda c: overlay(c, "b-pc").update(family="full"),
            "methods.b-pc.family: only methods of kind jspgfn have a posterior family",
        ),
        (
            "recipe.yaml",
            lambda c: overlay(c, "b-pc").update(recipe="lingauss"),
            "methods.b-pc.recipe: only methods of kind jspgfn have a recipe",
        ),
        (
            "recipe2.yaml",
            lambda c: overlay(c, "jspgfn-mlp").update(recipe="lingauss"),
            "methods.jspgfn-mlp.recipe: the recipe 'lingauss' is for the linear Gaussian model only",
        ),
        (
            "recipe3.yaml",
            lambda c: overlay(c, "jspgfn-diag").update(recipe="fast"),
            "methods.jspgfn-diag.recipe: 'fast' is not one of ['paper', 'lingauss', None]",
        ),
        (
            "option.yaml",
            lambda c: overlay(c, "jspgfn-diag").update(params={"batch_size": "abc"}),
            "methods.jspgfn-diag.params.batch_size: 'abc' is not of type int",
        ),
        (
            "option2.yaml",
            lambda c: overlay(c, "jspgfn-diag").update(params={"batchsize": 8}),
            "methods.jspgfn-diag.params.batchsize: unknown training option "
            "(valid: backward_batch, backward_every, backward_moves, batch_size,",
        ),
        (
            "setting.yaml",
            lambda c: overlay(c, "jspgfn-diag").update(params={"obs_var": -0.1}),
            "methods.jspgfn-diag.params.obs_var: model 'lingauss' setting obs_var=-0.1: must be > 0",
        ),
        (
            "setting2.yaml",
            lambda c: overlay(c, "jspgfn-diag").update(params={"hidden": 8}),
            "methods.jspgfn-diag.params.hidden: model 'lingauss' has no setting hidden (its settings: obs_var,",
        ),
        (
            "group.yaml",
            lambda c: c["experiments"]["small_graphs"].update(train_group_size=0),
            "experiments.small_graphs.train_group_size: 0 is less than the minimum of 1",
        ),
        (
            "shown.yaml",
            lambda c: overlay(c, "b-ges").update(display_name="B-PC*"),
            "experiments.larger_graphs_linear.methods.1: methods 'b-pc' and 'b-ges' are both shown as 'B-PC*': give "
            "one a display_name",
        ),
    ],
)
def test_bad_config_value_fails_with_one_line_and_no_output(tmp_path, name, edit, problem):
    """Checked when the config loads: a dry run stops with one line naming file and key, and a real
    run stops the same way before any job runs."""
    workdir = copy_workflow(tmp_path)
    configfile = _bad_config(workdir, name, edit)
    for mode in (["-n"], ["--cores", "1"]):
        result = snakemake(workdir, *mode, "--configfile", configfile)
        assert result.returncode != 0
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        # Snakemake may first say which profile it uses; then exactly our one line, nothing else.
        lines = [line for line in lines if not line.startswith("Using workflow specific profile")]
        assert len(lines) == 1 and lines[0].startswith(f"{configfile}: {problem}"), result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert not (workdir / "results").exists()


@pytest.mark.slow
def test_smoke_preset_end_to_end(tmp_path):
    workdir = copy_workflow(tmp_path)
    # JSPGFN_SMOKE_RESULTS=DIR (a new or empty folder): the run writes its results and figures there and
    # leaves them, so that CI's SLURM step compares its SLURM run with this run instead of repeating it.
    kept = os.environ.get("JSPGFN_SMOKE_RESULTS")
    smoke = yaml.safe_load((workdir / "config" / "smoke.yaml").read_text())
    if kept:
        results_root = Path(kept).resolve()
        assert not results_root.exists() or not any(results_root.iterdir()), f"JSPGFN_SMOKE_RESULTS={kept} is not empty"
        figures = results_root / "figures"
        roots = ["--config", f"results={results_root}", f"figures={figures}"]
    else:
        results_root, figures, roots = workdir / "results", workdir / smoke["figures"], []
    result = snakemake(workdir, "--cores", "2", "--configfile", "config/smoke.yaml", *roots)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-6000:]
    results = results_root / "smoke"

    experiment = smoke["experiments"]["small_graphs"]
    methods = experiment["methods"]
    datasets = [str(experiment.get("first_seed", 0) + i) for i in range(experiment["num_datasets"])]
    out = results / "small_graphs"

    # Every intermediate file of the contract exists.
    for dataset in datasets:
        for name in ("train.csv", "test.csv", "graph.csv", "meta.json"):
            assert (out / "data" / dataset / name).is_file()
        assert (out / "exact" / f"{dataset}.npz").is_file()
        for method in methods:
            assert (out / "samples" / method / f"{dataset}.npz").is_file()
            assert (out / "metrics" / method / f"{dataset}.json").is_file()
    resolved = yaml.safe_load((results / "config.yaml").read_text())
    assert resolved["preset"] == "smoke"
    assert resolved["methods"]["exact"]["name"] == "exact"  # defaults filled in

    # The tidy table: one row per (method, dataset), finite metrics.
    with open(out / "metrics.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    expected = {(method, int(dataset)) for method in methods for dataset in datasets}
    assert len(rows) == len(expected)
    assert {(row["label"], int(row["dataset_seed"])) for row in rows} == expected
    assert {(row["preset"], row["experiment"]) for row in rows} == {("smoke", "small_graphs")}
    # Pearson's r and AUROC are null (with a note) when a run's features are constant, which tiny
    # smoke budgets can produce (a chain that never leaves the empty graph); the rest always exist.
    always = [
        "edge_rmse",
        "path_rmse",
        "markov_rmse",
        "theta_cross_entropy",
        "nll_expected",
        "nll_predictive",
        "expected_shd",
    ]
    # NLL and E-SHD leave cyclic samples out (DiBS's metric code): they are null only when every sample of
    # the run is cyclic, which a tiny smoke DiBS run can give.
    without_cycles = ("nll_expected", "nll_predictive", "expected_shd")
    for row in rows:
        for column in always + (
            ["edge_pearson", "path_pearson", "markov_pearson", "auroc"] if row["label"] == "exact" else []
        ):
            if column in without_cycles and float(row["share_cyclic_dropped"]) == 1.0:
                assert row[column] == "", (column, row)
                continue
            assert math.isfinite(float(row[column])), (column, row)
        if row["label"] == "exact":  # the exact sampler against the exact posterior
            assert float(row["edge_rmse"]) < 0.05, row
            assert float(row["edge_pearson"]) > 0.95, row

    # Tables and figures from the aggregated tables, and the HTML report with their captions.
    for name in ("table_a1", "table_d1"):
        for suffix in (".pdf", ".csv", ".tex"):
            assert (figures / f"{name}{suffix}").stat().st_size > 0, name + suffix
    for name in ("figure_2a", "figure_2b", "figure_d1"):
        for suffix in (".pdf", ".png"):
            assert (figures / f"{name}{suffix}").stat().st_size > 0, name + suffix
    with open(figures / "table_d1.csv", newline="") as handle:
        table = list(csv.DictReader(handle))
    assert {row["label"] for row in table} == set(methods)

    # The larger-graph experiments: held-out NLL, E-SHD and AUROC for every run (no exact posterior),
    # log P_T estimates of JSP-GFN's MLP samples, and their figures.
    for eid in ("larger_graphs_linear", "larger_graphs_mlp"):
        larger = smoke["experiments"][eid]
        with open(results / eid / "metrics.csv", newline="") as handle:
            rows = list(csv.DictReader(handle))
        assert {row["label"] for row in rows} == set(larger["methods"]), eid
        for row in rows:
            for column in ("nll_expected", "expected_shd"):
                if float(row["share_cyclic_dropped"]) == 1.0:  # every sample cyclic (tiny DiBS runs)
                    assert row[column] == "", (eid, column, row)
                    continue
                assert math.isfinite(float(row[column])), (eid, column, row)
            assert not row.get("edge_rmse"), row  # nothing against an exact posterior at this size
    with open(results / "larger_graphs_mlp" / "log_pt.csv", newline="") as handle:
        points = list(csv.DictReader(handle))
    assert points and {row["label"] for row in points} == {"jspgfn-mlp"}
    assert all(math.isfinite(float(row["log_pt"])) and math.isfinite(float(row["log_reward"])) for row in points)
    for name in ("figure_3a", "figure_3b", "figure_3c", "figure_d2_linear", "figure_d2_mlp"):
        for suffix in (".pdf", ".png"):
            assert (figures / f"{name}{suffix}").stat().st_size > 0, name + suffix
    for suffix in (".pdf", ".csv", ".tex"):
        assert (figures / f"table_log_pt_slopes{suffix}").stat().st_size > 0, suffix

    # The real-data experiments (Figure 4): interventional NLL of every run, E-SHD and AUROC against the
    # Sachs consensus network, log P_T of JSP-GFN's Sachs samples, edge marginals with the protein names.
    for eid in ("sachs", "gene_expression"):
        with open(results / eid / "metrics.csv", newline="") as handle:
            rows = list(csv.DictReader(handle))
        assert {row["label"] for row in rows} == set(smoke["experiments"][eid]["methods"]), eid
        assert all(math.isfinite(float(row["nll_expected"])) for row in rows), eid
        assert all(math.isfinite(float(row["expected_shd"])) for row in rows), eid
    assert json.loads((results / "sachs" / "data" / "0" / "meta.json").read_text())["graph_is_ground_truth"] is False
    with open(results / "sachs" / "edges.csv", newline="") as handle:
        edges = list(csv.DictReader(handle))
    assert len(edges) == 11 * 10 and {row["source_name"] for row in edges} >= {"Raf", "Mek", "PKC"}
    for eid in ("sachs_small", "sachs"):
        with open(results / eid / "log_pt.csv", newline="") as handle:
            assert list(csv.DictReader(handle)), eid
    for name in REAL_DATA_STEMS:
        suffixes = (".pdf", ".csv", ".tex") if name.startswith("table") else (".pdf", ".png")
        for suffix in suffixes:
            assert (figures / f"{name}{suffix}").stat().st_size > 0, name + suffix

    report = snakemake(workdir, "--configfile", "config/smoke.yaml", *roots, "--report", "report.html")
    assert report.returncode == 0, report.stderr[-3000:]
    html = (workdir / "report.html").read_text(errors="replace")
    assert "Table D.1" in html and "Figure 2 (b)" in html
    assert "held-out negative log-likelihood" in html and "log P_T(G, theta) against log R(G, theta)" in html
    # The real-data captions say what the data is: reconstructed labels, tertiles, a reference, simulated.
    for words in ("RECONSTRUCTED", "tertiles", "REFERENCE, not a ground truth", "SIMULATED", "Real data"):
        assert words in html, words
    # Every caption ends with what the smoke preset reduces against the paper preset (2 of 20 datasets, ...).
    assert "2 of the paper preset's 20 datasets" in html and "(paper 30,000" in html

    # A second run has nothing to do.
    again = snakemake(workdir, "-n", "--configfile", "config/smoke.yaml", *roots)
    assert again.returncode == 0
    assert "Nothing to be done" in again.stdout + again.stderr
    if kept:  # read by .ci/slurm/run.sh: only a run whose every check held is worth comparing with
        (results_root / "SMOKE_TEST_PASSED").write_text("test_smoke_preset_end_to_end passed\n")
