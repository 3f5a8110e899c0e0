# The exact joint posterior (linear Gaussian): every DAG enumerated for d <= 5, the subset dynamic program beyond:
# edge / path / Markov-blanket features used as the reference by `jspgfn evaluate --exact`. Only the datasets
# of exact_dataset_ids (common.smk) ask for it; runtime and memory grow with d (exact_resources).


rule exact:
    input:
        data=f"{RESULTS}/{{experiment}}/data/{{dataset}}",
    output:
        f"{RESULTS}/{{experiment}}/exact/{{dataset}}.npz",
    log:
        f"{RESULTS}/{{experiment}}/logs/exact/{{dataset}}.log",
    benchmark:
        f"{RESULTS}/{{experiment}}/benchmarks/exact/{{dataset}}.tsv"
    # The longest single job (the d=20 program: about 18 min on one core): first, so that one-thread jobs
    # fill the other cores around it, not a queue of two-thread trainings waiting at the end for it.
    priority: 10
    conda:
        "../envs/jspgfn.yaml"
    threads: 1
    resources:
        mem_mb=lambda w: exact_resources(w)[1],
        runtime=lambda w: exact_resources(w)[0],
    params:
        exact=lambda w: experiment(w)["exact"],
    shell:
        "jspgfn exact {input.data:q} --graph-prior {params.exact[graph_prior]:q}"
        " --obs-var {params.exact[obs_var]:q} --prior-var {params.exact[prior_var]:q}"
        " --no-progress --out {output:q} > {log:q} 2>&1"
