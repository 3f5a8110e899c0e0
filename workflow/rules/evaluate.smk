# Metrics of every PosteriorSamples file (evaluation never knows which method made it), against the exact
# posterior on the datasets that have one (exact_dataset_ids: the first exact.datasets of the experiment),
# then the tidy tables of each experiment: metrics.csv (a row per run), features.csv (a row per
# feature against the exact posterior) and log_pt.csv (a row per sample with a log P_T estimate).


rule evaluate:
    input:
        unpack(
            lambda w: {
                "samples": f"{RESULTS}/{w.experiment}/samples/{w.method}/{w.dataset}.npz",
                "data": f"{RESULTS}/{w.experiment}/data/{w.dataset}",
                **(
                    {"exact": f"{RESULTS}/{w.experiment}/exact/{w.dataset}.npz"}
                    if w.dataset in exact_dataset_ids(w.experiment)
                    else {}
                ),
            }
        ),
    output:
        f"{RESULTS}/{{experiment}}/metrics/{{method}}/{{dataset}}.json",
    log:
        f"{RESULTS}/{{experiment}}/logs/evaluate/{{method}}/{{dataset}}.log",
    benchmark:
        f"{RESULTS}/{{experiment}}/benchmarks/evaluate/{{method}}/{{dataset}}.tsv"
    conda:
        "../envs/jspgfn.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        exact=lambda w, input: ["--exact", input.exact] if "exact" in input.keys() else [],
        display_name=lambda w: method(w)["display_name"],
    shell:
        "jspgfn evaluate {input.samples:q} {input.data:q} {params.exact:q} --label {wildcards.method:q}"
        " --display-name {params.display_name:q} --out {output:q} > {log:q} 2>&1"


rule aggregate:
    input:
        lambda w: experiment_metrics(w.experiment),
    output:
        metrics=f"{RESULTS}/{{experiment}}/metrics.csv",
        features=f"{RESULTS}/{{experiment}}/features.csv",
        log_pt=f"{RESULTS}/{{experiment}}/log_pt.csv",
    log:
        f"{RESULTS}/{{experiment}}/logs/aggregate.log",
    conda:
        "../envs/jspgfn.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        preset=config["preset"],
    shell:
        "jspgfn aggregate {input:q} --column preset={params.preset:q}"
        " --column experiment={wildcards.experiment:q} --out {output.metrics:q}"
        " --features-out {output.features:q} --log-pt-out {output.log_pt:q} > {log:q} 2>&1"


# The edge marginals of JSP-GFN's samples, for an experiment with an edge_marginals figure: one JSON per run
# (`jspgfn evaluate --edge-marginals`, the variable names and graph.csv with them), then edges.csv
# (a row per run and ordered pair). Kept apart from metrics.json so that the other experiments' runs are
# not evaluated again.


rule edge_marginals:
    input:
        samples=f"{RESULTS}/{{experiment}}/samples/{{method}}/{{dataset}}.npz",
        data=f"{RESULTS}/{{experiment}}/data/{{dataset}}",
    output:
        f"{RESULTS}/{{experiment}}/edges/{{method}}/{{dataset}}.json",
    log:
        f"{RESULTS}/{{experiment}}/logs/edges/{{method}}/{{dataset}}.log",
    wildcard_constraints:
        experiment=id_regex(edge_experiments()),
    conda:
        "../envs/jspgfn.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        display_name=lambda w: method(w)["display_name"],
    shell:
        "jspgfn evaluate {input.samples:q} {input.data:q} --edge-marginals --label {wildcards.method:q}"
        " --display-name {params.display_name:q} --out {output:q} > {log:q} 2>&1"


rule aggregate_edges:
    input:
        lambda w: edge_marginal_files(w.experiment),
    output:
        f"{RESULTS}/{{experiment}}/edges.csv",
    log:
        f"{RESULTS}/{{experiment}}/logs/aggregate_edges.log",
    wildcard_constraints:
        experiment=id_regex(edge_experiments()),
    conda:
        "../envs/jspgfn.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        preset=config["preset"],
    shell:
        "jspgfn aggregate {input:q} --column preset={params.preset:q}"
        " --column experiment={wildcards.experiment:q} --edges-out {output:q} > {log:q} 2>&1"
