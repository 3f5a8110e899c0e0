# The helpers that rules use to name things: the experiments, methods and datasets of the validated
# config (config.smk loads and checks it) and the paths of their files. Functions only (no rules here);
# the jobs' arguments and resources are in job_arguments.smk, the tables and figures in figure_specs.smk.

import re


def experiment(wildcards):
    return config["experiments"][wildcards.experiment]


def method(wildcards):
    return config["methods"][wildcards.method]


def dataset_ids(eid):
    exp = config["experiments"][eid]
    return [str(exp["first_seed"] + i) for i in range(exp["num_datasets"])]


def exact_dataset_ids(eid):
    """Ids of the datasets of experiment `eid` that get the exact posterior: the first exact.datasets ones
    (all when null; none when exact is not enabled)."""
    exact = config["experiments"][eid]["exact"]
    if not exact["enabled"]:
        return []
    ids = dataset_ids(eid)
    return ids if exact["datasets"] is None else ids[: exact["datasets"]]


def method_ids(kind):
    """Ids of the methods of one kind that some experiment uses."""
    used = {m for exp in config["experiments"].values() for m in exp["methods"]}
    return sorted(m for m in used if config["methods"][m]["kind"] == kind)


def id_regex(ids):
    """Wildcard constraint matching exactly these ids (matches nothing when empty)."""
    return "|".join(re.escape(str(i)) for i in ids) if ids else "(?!x)x"


def experiment_metrics(eid):
    """Every metrics.json that results/{preset}/{eid}/metrics.csv aggregates."""
    exp = config["experiments"][eid]
    return expand(
        f"{RESULTS}/{eid}/metrics/{{method}}/{{dataset}}.json", method=exp["methods"], dataset=dataset_ids(eid)
    )


def experiment_methods(eid):
    return config["experiments"][eid]["methods"]


def enabled_experiments():
    """Ids of the experiments built by default (enabled true), the others only when asked for by name."""
    return [eid for eid, exp in config["experiments"].items() if exp["enabled"]]


def edge_experiments():
    """Ids of the experiments with an edge_marginals figure."""
    return [eid for eid, exp in config["experiments"].items() if "edge_marginals" in exp["figures"].values()]


def edge_marginal_files(eid):
    """The edge-marginal JSON of every JSP-GFN run of experiment `eid` (aggregated into edges.csv)."""
    ours = [m for m in experiment_methods(eid) if config["methods"][m]["kind"] == "jspgfn"]
    return expand(f"{RESULTS}/{eid}/edges/{{method}}/{{dataset}}.json", method=ours, dataset=dataset_ids(eid))


def data_experiments(real):
    """Ids of the experiments with real data (a data `source`) or, real=False, with synthetic data."""
    return [eid for eid in config["experiments"] if is_real_data(eid) == real]


def is_real_data(eid):
    return config["experiments"][eid]["data"].get("source") is not None
