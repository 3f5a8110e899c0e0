#!/usr/bin/env bash
# Run by Snakemake inside the new conda env (--use-conda). JSPGFN_SOURCE is set by the Snakefile.
set -euo pipefail
pip install --quiet "${JSPGFN_SOURCE:?set by the Snakefile}[baselines]"
pip install --quiet --no-deps dibs-lib==1.3.3  # its metadata requires jupyter, which it never imports
