#!/usr/bin/env bash
# Run by Snakemake inside the new conda env (--use-conda). JSPGFN_SOURCE is set by the Snakefile.
# The rules of the jspgfn core (data, exact, JSP-GFN, evaluate, report) need the core and the
# workflow extra (matplotlib, seaborn); each baseline has an environment of its own (baselines/).
set -euo pipefail
python -m pip install --quiet "${JSPGFN_SOURCE:?set by the Snakefile}[workflow]"
