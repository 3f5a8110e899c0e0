# Datasets: one folder per (experiment, seed), see src/jspgfn/dataset.py. Synthetic data by `jspgfn generate`;
# an experiment whose data has a `source` (sachs, gene_expression_simulated, gene_expression) by
# `jspgfn realdata ...` (realdata_arguments in job_arguments.smk), the seed then drawing the rows or the simulation.


rule generate:
    output:
        directory(f"{RESULTS}/{{experiment}}/data/{{dataset}}"),
    log:
        f"{RESULTS}/{{experiment}}/logs/generate/{{dataset}}.log",
    wildcard_constraints:
        experiment=id_regex(data_experiments(real=False)),
    # Seconds each: all first, so that the exact posterior's job (priority 10, exact.smk) can start at once.
    priority: 20
    conda:
        "../envs/jspgfn.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        data=lambda w: experiment(w)["data"],
    shell:
        "jspgfn generate --graph {params.data[graph]:q} --model {params.data[model]:q}"
        " --d {params.data[d]:q} --n {params.data[n]:q} --n-test {params.data[n_test]:q}"
        " --obs-var {params.data[obs_var]:q}"
        " --interventional-fraction {params.data[interventional_fraction]:q}"
        " --seed {wildcards.dataset:q} --out {output:q} > {log:q} 2>&1"


rule realdata:
    input:
        realdata_inputs,
    output:
        directory(f"{RESULTS}/{{experiment}}/data/{{dataset}}"),
    log:
        f"{RESULTS}/{{experiment}}/logs/realdata/{{dataset}}.log",
    wildcard_constraints:
        experiment=id_regex(data_experiments(real=True)),
    conda:
        "../envs/jspgfn.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        arguments=realdata_arguments,
    shell:
        "jspgfn {params.arguments:q} --seed {wildcards.dataset:q} --out {output:q} > {log:q} 2>&1"


rule resolved_config:
    output:
        f"{RESULTS}/config.yaml",
    log:
        f"{RESULTS}/logs/resolved_config.log",
    conda:
        "../envs/jspgfn.yaml"
    threads: 1
    resources:
        mem_mb=100,
        runtime=1,
    params:
        text=yaml.safe_dump(config, sort_keys=False),
    shell:
        "printf '%s' {params.text:q} > {output:q} 2> {log:q}"
