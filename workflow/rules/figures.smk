# Tables and figures of the paper, drawn from the tidy tables only (`jspgfn report ...`): metrics.csv,
# features.csv, log_pt.csv and capabilities.csv. Table D.1, Table A.1 and Figures 2 and D.1 exist for the
# experiment named by config["small_graphs"] (SMALL; FIGURE_SPECS in figure_specs.smk says what each is drawn
# from); the others are listed in each experiment's `figures` (FIGURE_KINDS in figure_specs.smk).
# Every caption ends with what the preset reduces against the paper preset (`reduction` in figure_specs.smk),
# generated from the configs.


rule table_d1:
    input:
        metrics=f"{RESULTS}/{SMALL}/metrics.csv",
        registry=lambda w: registry_files(),  # the paper's numbers: each method's paper_table_d1
    output:
        pdf=report(f"{FIGURES}/table_d1.pdf", caption="../report/table_d1.rst", category="Small graphs"),
        csv=f"{FIGURES}/table_d1.csv",
        tex=f"{FIGURES}/table_d1.tex",
    log:
        f"{RESULTS}/logs/figures/table_d1.log",
    conda:
        "../envs/jspgfn.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        stem=lambda w, output: output.pdf[: -len(".pdf")],
        reduction=lambda w: reduction(SMALL),
    shell:
        "jspgfn report table-d1 --metrics {input.metrics:q} --out {params.stem:q} > {log:q} 2>&1"


rule table_a1:
    input:
        f"{RESULTS}/capabilities.csv",
    output:
        pdf=report(f"{FIGURES}/table_a1.pdf", caption="../report/table_a1.rst", category="Methods"),
        csv=f"{FIGURES}/table_a1.csv",
        tex=f"{FIGURES}/table_a1.tex",
    log:
        f"{RESULTS}/logs/figures/table_a1.log",
    conda:
        "../envs/jspgfn.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        stem=lambda w, output: output.pdf[: -len(".pdf")],
    shell:
        "jspgfn report table-a1 --capabilities {input:q} --out {params.stem:q} > {log:q} 2>&1"


rule figure:
    input:
        lambda w: f"{RESULTS}/{SMALL}/{FIGURE_SPECS[w.figure]['table']}",
    output:
        pdf=report(f"{FIGURES}/{{figure}}.pdf", caption="../report/figure.rst", category="Small graphs"),
        png=f"{FIGURES}/{{figure}}.png",
    log:
        f"{RESULTS}/logs/figures/{{figure}}.log",
    wildcard_constraints:
        figure=id_regex(FIGURE_SPECS),
    conda:
        "../envs/jspgfn.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        stem=lambda w, output: output.pdf[: -len(".pdf")],
        arguments=lambda w: figure_arguments(w.figure),
        reduction=lambda w: reduction(SMALL),
    shell:
        "jspgfn report {params.arguments:q} {input:q} --out {params.stem:q} > {log:q} 2>&1"


rule experiment_figure:
    input:
        unpack(experiment_figure_inputs),
    output:
        pdf=report(
            f"{FIGURES}/{{figure}}.pdf",
            caption="../report/experiment_figure.rst",
            category=figure_category,
        ),
        png=f"{FIGURES}/{{figure}}.png",
    log:
        f"{RESULTS}/logs/figures/{{figure}}.log",
    wildcard_constraints:
        figure=id_regex(experiment_figure_ids("figure")),
    conda:
        "../envs/jspgfn.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        stem=lambda w, output: output.pdf[: -len(".pdf")],
        arguments=lambda w, input: experiment_figure_arguments(w.figure, input),
        reduction=lambda w: reduction(experiment_figures()[w.figure][0]),
    shell:
        "jspgfn report {params.arguments:q} --out {params.stem:q} > {log:q} 2>&1"


rule experiment_table:
    input:
        unpack(experiment_figure_inputs),
    output:
        pdf=report(
            f"{FIGURES}/{{figure}}.pdf",
            caption="../report/experiment_figure.rst",
            category=figure_category,
        ),
        csv=f"{FIGURES}/{{figure}}.csv",
        tex=f"{FIGURES}/{{figure}}.tex",
    log:
        f"{RESULTS}/logs/figures/{{figure}}.log",
    wildcard_constraints:
        figure=id_regex(experiment_figure_ids("table")),
    conda:
        "../envs/jspgfn.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        stem=lambda w, output: output.pdf[: -len(".pdf")],
        arguments=lambda w, input: experiment_figure_arguments(w.figure, input),
        reduction=lambda w: reduction(experiment_figures()[w.figure][0]),
    shell:
        "jspgfn report {params.arguments:q} --out {params.stem:q} > {log:q} 2>&1"
