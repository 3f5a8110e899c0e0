#!/usr/bin/env bash
# usage: post-deploy.sh EXTRA   (inside a baseline's new conda environment, --use-conda; EXTRA: a method id, or all)
# Installs the jspgfn core, jspgfn-baselines with that extra, and the method's
# requirements-nodeps.txt if it has one. JSPGFN_SOURCE (the checkout) is set by the Snakefile.
set -euo pipefail
source="${JSPGFN_SOURCE:?set by the Snakefile}"
method="${1:?usage: post-deploy.sh METHOD_ID}"
python -m pip install --quiet "$source" "$source/baselines[$method]"
nodeps="$source/baselines/$method/requirements-nodeps.txt"
if [[ -f "$nodeps" ]]; then
    python -m pip install --quiet --no-deps -r "$nodeps"
fi
