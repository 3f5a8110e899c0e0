# Every method of kind `baseline`: `jspgfn baseline NAME DATA ... --out samples.npz`
# (baselines/<name>/). The method's seed is the dataset's seed. Under --use-conda each baseline
# runs in its own environment (its method.yaml's `environment`).


rule baseline:
    input:
        data=f"{RESULTS}/{{experiment}}/data/{{dataset}}",
    output:
        f"{RESULTS}/{{experiment}}/samples/{{method}}/{{dataset}}.npz",
    log:
        f"{RESULTS}/{{experiment}}/logs/samples/{{method}}/{{dataset}}.log",
    benchmark:
        f"{RESULTS}/{{experiment}}/benchmarks/baseline/{{method}}/{{dataset}}.tsv"
    wildcard_constraints:
        method=id_regex(method_ids("baseline")),
    conda:
        method_env
    threads: lambda w: method(w)["threads"]
    resources:
        mem_mb=lambda w: method(w)["mem_mb"],
        runtime=lambda w: method(w)["runtime"],
    params:
        name=lambda w: method(w)["name"],
        likelihood=lambda w: method(w)["likelihood"],
        extra=lambda w: param_args(method(w)["params"]),
    shell:
        "jspgfn baseline {params.name:q} {input.data:q} --model {params.likelihood:q}"
        " --seed {wildcards.dataset:q} {params.extra:q} --out {output:q} > {log:q} 2>&1"
