#!/usr/bin/env bash
# Create the old-JAX virtual environment in which the paper's released code runs, for
# `benchmarks/speed.py --released-src SRC --released-python VENV/bin/python`.
#
#   bash benchmarks/released/setup.sh [VENV]        (default VENV: /work/released-venv)
#
# The released code itself is NOT part of this repository. Get a checkout of
# github.com/tristandeleu/jax-jsp-gfn at commit d53b3b6 ("Initial commit", its only commit)
# outside the repository, e.g.
#   git clone https://github.com/tristandeleu/jax-jsp-gfn /work/released-src
#   git -C /work/released-src checkout d53b3b6
# or, from a bare mirror: git --git-dir=MIRROR archive d53b3b6 | tar -x -C /work/released-src
#
# Versions: the code predates jax 0.4.14 / NumPy 2 (it uses np.float_). wandb, pgmpy,
# networkx, scikit-learn and igraph (its requirements.txt) are only needed by train.py's data
# loading and evaluation, which benchmarks/released/time_released.py does not use.
set -euo pipefail
VENV="${1:-/work/released-venv}"
PYTHON="${PYTHON:-python3.11}"  # jax 0.4.13 supports Python 3.8-3.11
"$PYTHON" -m venv "$VENV"
"$VENV/bin/pip" install --quiet --upgrade pip
"$VENV/bin/pip" install --quiet \
    "jax==0.4.13" "jaxlib==0.4.13" "dm-haiku==0.0.10" "optax==0.1.4" "chex==0.1.82" \
    "jraph==0.0.6.dev0" "gym==0.26.2" "numpy==1.25.2" "scipy<1.12" "pandas<2.2" "tqdm"
"$VENV/bin/python" -c "import jax, haiku, optax, jraph, gym, numpy; print('jax', jax.__version__, 'numpy', numpy.__version__)"
