# JSP-GFN benchmark pipeline.
#   snakemake --cores all                                 paper grid (config/config.yaml)
#   snakemake --cores all --configfile config/quick.yaml  laptop preset (reduced)
#   snakemake --cores all --configfile config/smoke.yaml  CI preset (minutes)
# Data flow: generate -> exact posterior -> samples per method -> metrics.json -> metrics.csv
# Layout: results/{preset}/{experiment}/{data,exact,samples,metrics,logs}/..., metrics.csv

# The paper grid is the default. A preset given with --configfile replaces it (it is not
# merged into it): each preset file is complete on its own (docs/decisions.md).
if not workflow.config_settings.configfiles:

    configfile: "config/config.yaml"


include: "workflow/rules/config.smk"
include: "workflow/rules/common.smk"
include: "workflow/rules/job_arguments.smk"
include: "workflow/rules/figure_specs.smk"
include: "workflow/rules/train_groups.smk"


load_config(config)

RESULTS = f"{config['results']}/{config['preset']}"
SMALL = config["small_graphs"]  # the experiment of Table A.1, Table D.1, Figure 2 and Figure D.1
FIGURES = config["figures"]

# Jobs call the `jspgfn` command of the environment that runs Snakemake (e.g. .venv/bin),
# even when that environment is not activated. --use-conda puts its own env first.
os.environ.update(PATH=os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]))
# Each job is a new process: share JAX's persistent compilation cache between them.
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", os.path.abspath(config["jax_cache"]))
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
# Used by workflow/envs/jspgfn.post-deploy.sh (--use-conda) to install this package.
os.environ.setdefault("JSPGFN_SOURCE", workflow.basedir)


wildcard_constraints:
    experiment=id_regex(config["experiments"]),
    dataset=r"\d+",


include: "workflow/rules/data.smk"
include: "workflow/rules/exact.smk"
include: "workflow/rules/baselines.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/jspgfn.smk"
include: "workflow/rules/capabilities.smk"
include: "workflow/rules/figures.smk"


# Rules that only read small tables and write a table or a figure (seconds each): on a cluster Snakemake
# runs them itself instead of submitting them, since a queue wait costs more than the job.
localrules:
    all,
    resolved_config,
    aggregate,
    aggregate_edges,
    capabilities,
    table_d1,
    table_a1,
    figure,
    experiment_figure,
    experiment_table,


rule all:
    default_target: True
    input:
        expand(f"{RESULTS}/{{experiment}}/metrics.csv", experiment=enabled_experiments()),
        f"{RESULTS}/config.yaml",
        figure_targets(),
