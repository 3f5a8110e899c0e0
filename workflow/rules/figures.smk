# Tables and figures of the paper, drawn from the aggregated tables only (jspgfn report ...).
# They exist for the experiment named by config["small_graphs"] when the config runs it.

SMALL = config["small_graphs"]
FIGURES = config["figures"]


rule table_d1:
    input:
        metrics=f"{RESULTS}/{SMALL}/metrics.csv",
        paper="workflow/resources/paper_table_d1.csv",
    output:
        pdf=report(f"{FIGURES}/table_d1.pdf", caption="../report/table_d1.rst", category="Small graphs"),
        csv=f"{FIGURES}/table_d1.csv",
        tex=f"{FIGURES}/table_d1.tex",
    log:
        f"{RESULTS}/logs/figures/table_d1.log",
    params:
        stem=lambda w, output: output.pdf[: -len(".pdf")],
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/jspgfn.yaml"
    shell:
        "jspgfn report table-d1 --metrics {input.metrics} --paper {input.paper} --out {params.stem} > {log} 2>&1"


rule figure_2a:
    input:
        f"{RESULTS}/{SMALL}/features.csv",
    output:
        pdf=report(f"{FIGURES}/figure_2a.pdf", caption="../report/figure_2a.rst", category="Small graphs"),
        png=f"{FIGURES}/figure_2a.png",
    log:
        f"{RESULTS}/logs/figures/figure_2a.log",
    params:
        stem=lambda w, output: output.pdf[: -len(".pdf")],
        methods=lambda w: " ".join(scatter_methods()),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/jspgfn.yaml"
    shell:
        "jspgfn report features --features {input} --methods {params.methods} --kinds edge"
        " --out {params.stem} > {log} 2>&1"


rule figure_2b:
    input:
        f"{RESULTS}/{SMALL}/metrics.csv",
    output:
        pdf=report(f"{FIGURES}/figure_2b.pdf", caption="../report/figure_2b.rst", category="Small graphs"),
        png=f"{FIGURES}/figure_2b.png",
    log:
        f"{RESULTS}/logs/figures/figure_2b.log",
    params:
        stem=lambda w, output: output.pdf[: -len(".pdf")],
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/jspgfn.yaml"
    shell:
        "jspgfn report metrics --metrics {input} --columns edge_rmse edge_pearson theta_cross_entropy"
        " --out {params.stem} > {log} 2>&1"


rule figure_d1:
    input:
        f"{RESULTS}/{SMALL}/features.csv",
    output:
        pdf=report(f"{FIGURES}/figure_d1.pdf", caption="../report/figure_d1.rst", category="Small graphs"),
        png=f"{FIGURES}/figure_d1.png",
    log:
        f"{RESULTS}/logs/figures/figure_d1.log",
    params:
        stem=lambda w, output: output.pdf[: -len(".pdf")],
        methods=lambda w: " ".join(scatter_methods()),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/jspgfn.yaml"
    shell:
        "jspgfn report features --features {input} --methods {params.methods} --kinds edge path markov"
        " --out {params.stem} > {log} 2>&1"


rule table_a1:
    input:
        metrics=f"{RESULTS}/{SMALL}/metrics.csv",
    output:
        pdf=report(f"{FIGURES}/table_a1.pdf", caption="../report/table_a1.rst", category="Methods"),
        csv=f"{FIGURES}/table_a1.csv",
        tex=f"{FIGURES}/table_a1.tex",
    log:
        f"{RESULTS}/logs/figures/table_a1.log",
    params:
        stem=lambda w, output: output.pdf[: -len(".pdf")],
        methods=json.dumps({m: config["methods"][m] for m in config["experiments"][SMALL]["methods"]}),
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    conda:
        "../envs/jspgfn.yaml"
    shell:
        "jspgfn report table-a1 --metrics {input.metrics} --methods {params.methods:q} --out {params.stem}"
        " > {log} 2>&1"
