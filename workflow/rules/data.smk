# Synthetic datasets: one folder per (experiment, seed), see src/jspgfn/dataset.py.


rule generate:
    output:
        directory(f"{RESULTS}/{{experiment}}/data/{{dataset}}"),
    log:
        f"{RESULTS}/{{experiment}}/logs/generate/{{dataset}}.log",
    conda:
        "../envs/jspgfn.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        data=lambda w: experiment(w)["data"],
    shell:
        "jspgfn generate --graph {params.data[graph]} --model {params.data[model]}"
        " --d {params.data[d]} --n {params.data[n]} --n-test {params.data[n_test]}"
        " --obs-var {params.data[obs_var]}"
        " --interventional-fraction {params.data[interventional_fraction]}"
        " --seed {wildcards.dataset} --out {output} > {log} 2>&1"


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
        "printf '%s' {params.text:q} > {output} 2> {log}"
