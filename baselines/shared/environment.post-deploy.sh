#!/usr/bin/env bash
# Run by Snakemake inside the default baseline environment (environment.yaml beside it, --use-conda):
# the core and jspgfn-baselines with every baseline's dependencies (the `all` extra).
exec bash "${JSPGFN_SOURCE:?set by the Snakefile}/baselines/shared/post-deploy.sh" all
