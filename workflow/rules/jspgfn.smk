# JSP-GFN (ours): `jspgfn train` then `jspgfn sample`, for every method of kind `jspgfn`
# (e.g. jspgfn-diag: likelihood lingauss, family diag; jspgfn-full: family full).
# The run folder is a working directory, not an output: Snakemake does not delete it when
# a job is killed, so re-running the job resumes from its last checkpoint. The dataset's
# seed is the training seed. A method's `recipe` becomes `--recipe=NAME`; its `params` become
# `--param KEY=VALUE`: training options (over the recipe's), and the likelihood's settings
# (obs_var, prior_var, hidden, ...) as for the baselines. The training
# log is appended to, so a resumed run keeps the history of the attempts before it. An experiment with
# log_pt.enabled also estimates log P_T(G, theta) of every sample (Figure 3c). An experiment with
# train_group_size K > 1 trains its datasets K at a time in one job (jspgfn_train_group: `jspgfn train
# DATA... --out RUN...`, one process), whose marker runs/{method}/group-{first}-{last}.done stands for the
# `done` of each of its datasets; the run folders are the same either way.


rule jspgfn_train:
    input:
        data=f"{RESULTS}/{{experiment}}/data/{{dataset}}",
    output:
        touch(f"{RESULTS}/{{experiment}}/runs/{{method}}/{{dataset}}/done"),
    log:
        f"{RESULTS}/{{experiment}}/logs/train/{{method}}/{{dataset}}.log",
    benchmark:
        f"{RESULTS}/{{experiment}}/benchmarks/jspgfn_train/{{method}}/{{dataset}}.tsv"
    wildcard_constraints:
        method=id_regex(method_ids("jspgfn")),
    conda:
        "../envs/jspgfn.yaml"
    threads: lambda w: method(w)["threads"]
    resources:
        mem_mb=lambda w: method(w)["mem_mb"],
        runtime=lambda w: method(w)["runtime"],
    params:
        run=lambda w: f"{RESULTS}/{w.experiment}/runs/{w.method}/{w.dataset}",
        likelihood=lambda w: method(w)["likelihood"],
        family=lambda w: method(w)["family"],
        preset=lambda w: method(w)["preset"],
        extra=lambda w: recipe_args(method(w)) + param_args(method(w)["params"]),
    shell:
        "jspgfn train {input.data:q} --model {params.likelihood:q} --family {params.family:q}"
        " --preset {params.preset:q} --seed {wildcards.dataset:q} {params.extra:q} --no-progress"
        " --out {params.run:q} >> {log:q} 2>&1"


rule jspgfn_train_group:
    input:
        data=lambda w: [f"{RESULTS}/{w.experiment}/data/{d}" for d in group_datasets(w)],
    output:
        touch(f"{RESULTS}/{{experiment}}/runs/{{method}}/group-{{group}}.done"),
    log:
        f"{RESULTS}/{{experiment}}/logs/train/{{method}}/group-{{group}}.log",
    benchmark:
        f"{RESULTS}/{{experiment}}/benchmarks/jspgfn_train/{{method}}/group-{{group}}.tsv"
    wildcard_constraints:
        method=id_regex(method_ids("jspgfn")),
        group=r"\d+-\d+",
    conda:
        "../envs/jspgfn.yaml"
    threads: lambda w: method(w)["threads"]
    resources:
        mem_mb=lambda w: method(w)["mem_mb"],
        runtime=lambda w: method(w)["runtime"] * len(group_datasets(w)),
    params:
        runs=lambda w: [f"{RESULTS}/{w.experiment}/runs/{w.method}/{d}" for d in group_datasets(w)],
        seeds=group_datasets,
        likelihood=lambda w: method(w)["likelihood"],
        family=lambda w: method(w)["family"],
        preset=lambda w: method(w)["preset"],
        extra=lambda w: recipe_args(method(w)) + param_args(method(w)["params"]),
    shell:
        "jspgfn train {input.data:q} --model {params.likelihood:q} --family {params.family:q}"
        " --preset {params.preset:q} --seed {params.seeds:q} {params.extra:q} --no-progress"
        " --out {params.runs:q} >> {log:q} 2>&1"


rule jspgfn_sample:
    input:
        trained_marker,
    output:
        f"{RESULTS}/{{experiment}}/samples/{{method}}/{{dataset}}.npz",
    log:
        f"{RESULTS}/{{experiment}}/logs/samples/{{method}}/{{dataset}}.log",
    benchmark:
        f"{RESULTS}/{{experiment}}/benchmarks/jspgfn_sample/{{method}}/{{dataset}}.tsv"
    wildcard_constraints:
        method=id_regex(method_ids("jspgfn")),
    conda:
        "../envs/jspgfn.yaml"
    threads: 1
    resources:
        mem_mb=lambda w: method(w)["mem_mb"],
        runtime=lambda w: method(w)["runtime"],
    params:
        run=lambda w: f"{RESULTS}/{w.experiment}/runs/{w.method}/{w.dataset}",
        num=lambda w: method(w)["num_samples"],
        log_pt=log_pt_args,
    shell:
        "jspgfn sample {params.run:q} --num {params.num:q} --seed {wildcards.dataset:q} {params.log_pt:q}"
        " --out {output:q} > {log:q} 2>&1"
