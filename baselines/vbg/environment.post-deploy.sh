#!/usr/bin/env bash
# Run by Snakemake inside this new conda environment (--use-conda).
exec bash "${JSPGFN_SOURCE:?set by the Snakefile}/baselines/shared/post-deploy.sh" vbg
