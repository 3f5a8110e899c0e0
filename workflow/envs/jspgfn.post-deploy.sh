#!/usr/bin/env bash
# Run by Snakemake inside the new conda env (--use-conda). JSPGFN_SOURCE is set by the Snakefile.
# The rules of the jspgfn core (data, exact, JSP-GFN, evaluate, report) need the core and the
# workflow extra (matplotlib, seaborn), the realdata extra (sergio-rs) and cdt, a data source only,
# without its dependencies (requirements-nodeps.txt); each baseline has an environment of its own (baselines/).
set -euo pipefail
python -m pip install --quiet "${JSPGFN_SOURCE:?set by the Snakefile}[workflow,realdata]"
python -m pip install --quiet --no-deps -r "${JSPGFN_SOURCE}/requirements-nodeps.txt"
