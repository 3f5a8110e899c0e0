# The evidence of Table A.1: a probe job per method of the small-graph experiment (a short fit on a
# tiny non-linear dataset; for JSP-GFN also two sampling calls on one trained run), then one tidy
# capabilities.csv that adds the declared capabilities and the share of cyclic graphs of the runs.


rule probe:
    output:
        f"{RESULTS}/capabilities/{{method}}.json",
    log:
        f"{RESULTS}/logs/capabilities/{{method}}.log",
    wildcard_constraints:
        method=id_regex(config["experiments"].get(SMALL, {}).get("methods", [])),
    conda:
        method_env
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        method=lambda w: json.dumps(method(w)),
    shell:
        "jspgfn probe --label {wildcards.method:q} --method {params.method:q} --out {output:q} > {log:q} 2>&1"


rule capabilities:
    input:
        probes=lambda w: expand(f"{RESULTS}/capabilities/{{method}}.json", method=experiment_methods(SMALL)),
        metrics=f"{RESULTS}/{SMALL}/metrics.csv",
    output:
        f"{RESULTS}/capabilities.csv",
    log:
        f"{RESULTS}/logs/capabilities.log",
    conda:
        "../envs/jspgfn.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    shell:
        "jspgfn capabilities {input.probes:q} --metrics {input.metrics:q} --out {output:q} > {log:q} 2>&1"
